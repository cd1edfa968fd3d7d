"""A LangChain agent whose tool results pass through result-sanitizer.

    pip install ./hosts/python langchain        (after make build)
    python examples/python/langchain_agent.py

The model here is a scripted stand-in that prints what it is given, so the
example runs offline; put your own chat model (ChatOpenAI, ChatAnthropic,
...) in its place. The tool prints a key and a password: the model sees
`[REDACTED:...]` instead, and a 2 MB listing arrives cut with a marker
that says what was left out and how to read it.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from result_sanitizer.adapters.langchain import SanitizeToolResults


@tool
def shell(cmd: str) -> str:
    """Runs a shell command and returns its output."""
    key = "AKIA" + "Q3EGRTZ7MBXK4WNP"  # what a leaky `env` prints
    password = "Xk9mQ2vLp7" + "zzR4"
    return f"$ {cmd}\nAWS_ACCESS_KEY_ID={key}\nDB_PASSWORD={password}\nexit 0\n"


@tool
def list_files(path: str) -> str:
    """Lists a directory recursively."""
    return "".join(f"{path}/src/module_{i:06d}.py\n" for i in range(80_000))


class ShowingModel(FakeMessagesListChatModel):
    """Scripted answers; prints the tool messages it is given."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ShowingModel":
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        for m in messages[-1:]:  # the newest message: this turn's tool result
            if isinstance(m, ToolMessage):
                text = str(m.content)
                print(f"--- the model sees {m.name} ({m.tool_call_id}, {m.status}), {len(text)} chars:")
                print(text if len(text) < 1500 else text[:700] + "\n...\n" + text[-700:])
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


model = ShowingModel(
    responses=[
        AIMessage(content="", tool_calls=[{"name": "shell", "args": {"cmd": "env"}, "id": "call_1"}]),
        AIMessage(content="", tool_calls=[{"name": "list_files", "args": {"path": "/srv/app"}, "id": "call_2"}]),
        AIMessage(content="done"),
    ]
)
agent = create_agent(model, [shell, list_files], middleware=[SanitizeToolResults(max_tokens=2000)])
agent.invoke({"messages": [HumanMessage("check the environment, then list the files")]})
