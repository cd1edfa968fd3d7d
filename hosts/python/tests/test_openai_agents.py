"""The OpenAI Agents SDK adapter with the real `openai-agents` package and
a scripted Model subclass that records its input (no network): a planted
AWS key and a password never reach the model through a function tool or an
MCP server, an error is sanitized, a 2 MB output arrives cut with a
working marker."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any, Optional

from agents import Agent, RunConfig, Runner, function_tool
from agents.items import ModelResponse
from agents.mcp import MCPServer
from agents.models.interface import Model
from agents.usage import Usage
from mcp.types import CallToolResult, TextContent, Tool
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from conftest import assert_working_marker, aws_key, password
from result_sanitizer import Sanitizer
from result_sanitizer.adapters.openai_agents import sanitize_mcp_server, sanitize_tools

BIG = "".join(f"row {i:07d} " + "z" * 80 + "\n" for i in range(22000))


class ScriptedModel(Model):
    """Calls `tool` once, then answers; keeps every input it is given."""

    def __init__(self, tool: str, args: dict[str, Any]) -> None:
        self.tool, self.args = tool, args
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        self.inputs.append(copy.deepcopy(input))
        if len(self.inputs) == 1:
            out: list[Any] = [
                ResponseFunctionToolCall(
                    type="function_call", call_id="call_42", name=self.tool, arguments=json.dumps(self.args), id="fc_1", status="completed"
                )
            ]
        else:
            out = [
                ResponseOutputMessage(
                    id="msg_1", type="message", role="assistant", status="completed",
                    content=[ResponseOutputText(type="output_text", text="done", annotations=[])],
                )
            ]
        return ModelResponse(output=out, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def tool_output(self) -> dict[str, Any]:
        items = [i for i in self.inputs[1] if isinstance(i, dict) and i.get("type") == "function_call_output"]
        assert len(items) == 1
        return items[0]

    def seen(self) -> str:
        return json.dumps(self.inputs)


@function_tool
def shell(cmd: str) -> str:
    """Runs a command."""
    return f"$ {cmd}\nAWS_ACCESS_KEY_ID={aws_key()}\nDB_PASSWORD={password()}\nok\n"


@function_tool
def dump_rows(n: int) -> str:
    """Returns rows."""
    return BIG


@function_tool
def failing(cmd: str) -> str:
    """Fails (the SDK's default error text reaches the model)."""
    raise RuntimeError(f"connection refused: postgres://app:{password()}@10.0.0.7:5432/app")


@function_tool(failure_error_function=None)
def failing_raw(cmd: str) -> str:
    """Fails (the exception reaches the wrapper)."""
    raise RuntimeError(f"connection refused: postgres://app:{password()}@10.0.0.7:5432/app")


def run(model: ScriptedModel, tools: list[Any], servers: Optional[list[Any]] = None) -> None:
    agent = Agent(name="ops", model=model, tools=tools, mcp_servers=servers or [])
    asyncio.run(Runner.run(agent, "go", run_config=RunConfig(tracing_disabled=True)))


def test_without_the_wrapper_the_secret_reaches_the_model() -> None:
    m = ScriptedModel("shell", {"cmd": "env"})
    run(m, [shell])
    assert aws_key() in m.seen()


def test_secrets_never_reach_the_model(sanitizer: Sanitizer) -> None:
    m = ScriptedModel("shell", {"cmd": "env"})
    run(m, sanitize_tools([shell], sanitizer))
    assert aws_key() not in m.seen() and password() not in m.seen()
    out = m.tool_output()
    assert out["call_id"] == "call_42" and "[REDACTED:" in out["output"] and "ok" in out["output"]


def test_a_tool_error_is_sanitized(sanitizer: Sanitizer) -> None:
    m = ScriptedModel("failing", {"cmd": "x"})
    run(m, sanitize_tools([failing], sanitizer))
    assert password() not in m.seen()
    assert "error occurred" in m.tool_output()["output"]
    # A tool without an error function raises into the wrapper: its text
    # is sanitized as an error result, with the error line.
    m = ScriptedModel("failing_raw", {"cmd": "x"})
    run(m, sanitize_tools([failing_raw], sanitizer))
    out = m.tool_output()["output"]
    assert password() not in m.seen()
    assert "connection refused" in out and "[tool-error]" in out and "[REDACTED:" in out


def test_a_2mb_output_arrives_cut_with_a_working_marker(sanitizer: Sanitizer) -> None:
    m = ScriptedModel("dump_rows", {"n": 1})
    run(m, sanitize_tools([dump_rows], sanitizer, max_tokens=4000))
    out = m.tool_output()["output"]
    assert len(out) < 40_000
    assert_working_marker(out, BIG.encode())


class EnvServer(MCPServer):
    """An in-process MCP server with one tool whose result holds secrets."""

    def __init__(self) -> None:
        super().__init__()

    async def connect(self) -> None:
        pass

    @property
    def name(self) -> str:
        return "env-server"

    async def cleanup(self) -> None:
        pass

    async def list_tools(self, run_context: Any = None, agent: Any = None) -> list[Tool]:
        return [Tool(name="read_env", description="Reads the environment.", inputSchema={"type": "object", "properties": {}})]

    async def call_tool(self, tool_name: str, arguments: Any, meta: Any = None) -> CallToolResult:
        text = f"HOME=/root\nAWS_ACCESS_KEY_ID={aws_key()}\nDB_PASSWORD={password()}\n"
        return CallToolResult(content=[TextContent(type="text", text=text)], isError=False)

    async def list_prompts(self) -> Any:
        raise NotImplementedError

    async def get_prompt(self, name: str, arguments: Any = None) -> Any:
        raise NotImplementedError


def test_without_the_hook_the_mcp_secret_reaches_the_model() -> None:
    m = ScriptedModel("read_env", {})
    run(m, [], [EnvServer()])
    assert aws_key() in m.seen()


def test_mcp_results_are_sanitized(sanitizer: Sanitizer) -> None:
    m = ScriptedModel("read_env", {})
    run(m, [], [sanitize_mcp_server(EnvServer(), sanitizer)])
    assert aws_key() not in m.seen() and password() not in m.seen()
    out = json.dumps(m.tool_output()["output"])
    assert "[REDACTED:" in out and "HOME=/root" in out
