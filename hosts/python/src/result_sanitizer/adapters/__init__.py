"""Drop-in guards for agent frameworks. Each module imports its framework
only when it is imported itself:

- `result_sanitizer.adapters.langchain`: `SanitizeToolResults`, a LangChain
  agent middleware (and LangGraph `ToolNode` wrapper);
- `result_sanitizer.adapters.openai_agents`: `sanitize_function_tool`,
  `sanitize_tools`, `sanitize_mcp_server` for the OpenAI Agents SDK.
"""
