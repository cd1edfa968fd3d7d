"""The LangChain / LangGraph adapter with the real `langchain` and
`langgraph` packages and a fake chat model that records its input: a
planted AWS key and a password never reach the model, a tool error
arrives as status="error", a 2 MB output arrives cut with a working
marker; tool name and call id pass through."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import ToolException, tool
from pydantic import Field

from conftest import assert_working_marker, aws_key, check_record, password
from result_sanitizer import Sanitizer
from result_sanitizer.adapters.langchain import SanitizeToolResults

BIG = "".join(f"row {i:07d} " + "y" * 80 + "\n" for i in range(22000))


class RecordingModel(FakeMessagesListChatModel):
    """Scripted answers; every input it is given is kept."""

    seen: list[list[Any]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> "RecordingModel":
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


@tool
def shell(cmd: str) -> str:
    """Runs a command."""
    return f"$ {cmd}\nAWS_ACCESS_KEY_ID={aws_key()}\nDB_PASSWORD={password()}\nok\n"


@tool
def dump_rows(n: int) -> str:
    """Returns rows."""
    return BIG


@tool
def failing(cmd: str) -> str:
    """Fails."""
    raise ToolException(f"connection refused: postgres://app:{password()}@10.0.0.7:5432/app")


failing.handle_tool_error = True


def model_for(name: str) -> RecordingModel:
    return RecordingModel(
        responses=[
            AIMessage(content="", tool_calls=[{"name": name, "args": {"cmd": "env"} if name != "dump_rows" else {"n": 1}, "id": "call_42"}]),
            AIMessage(content="done"),
        ]
    )


def tool_message_seen(model: RecordingModel) -> ToolMessage:
    assert len(model.seen) == 2
    msgs = [m for m in model.seen[1] if isinstance(m, ToolMessage)]
    assert len(msgs) == 1
    return msgs[0]


def everything_seen(model: RecordingModel) -> str:
    return "\n".join(str(m.content) for batch in model.seen for m in batch)


def test_without_the_middleware_the_secret_reaches_the_model() -> None:
    """The control: the fake model does see tool output."""
    model = model_for("shell")
    create_agent(model, [shell]).invoke({"messages": [HumanMessage("go")]})
    assert aws_key() in everything_seen(model)


def test_secrets_never_reach_the_model(sanitizer: Sanitizer, record_validator: Any) -> None:
    model = model_for("shell")
    agent = create_agent(model, [shell], middleware=[SanitizeToolResults(sanitizer)])
    agent.invoke({"messages": [HumanMessage("go")]})
    seen = everything_seen(model)
    assert aws_key() not in seen and password() not in seen
    tm = tool_message_seen(model)
    assert tm.name == "shell" and tm.tool_call_id == "call_42" and tm.status == "success"
    assert "[REDACTED:" in tm.content and "ok" in tm.content
    check_record(record_validator, tm.response_metadata["result-sanitizer/record"], "langchain")


def test_async_agent(sanitizer: Sanitizer) -> None:
    model = model_for("shell")
    agent = create_agent(model, [shell], middleware=[SanitizeToolResults(sanitizer)])
    asyncio.run(agent.ainvoke({"messages": [HumanMessage("go")]}))
    seen = everything_seen(model)
    assert aws_key() not in seen and password() not in seen
    assert tool_message_seen(model).tool_call_id == "call_42"


def test_a_tool_error_is_status_error_and_scrubbed(sanitizer: Sanitizer) -> None:
    model = model_for("failing")
    agent = create_agent(model, [failing], middleware=[SanitizeToolResults(sanitizer)])
    agent.invoke({"messages": [HumanMessage("go")]})
    tm = tool_message_seen(model)
    assert tm.status == "error" and tm.name == "failing"
    assert password() not in everything_seen(model)
    assert "[tool-error]" in tm.content and "connection refused" in tm.content
    assert tm.response_metadata["result-sanitizer/record"]["redactions"]


def test_a_2mb_output_arrives_cut_with_a_working_marker(sanitizer: Sanitizer) -> None:
    model = model_for("dump_rows")
    agent = create_agent(model, [dump_rows], middleware=[SanitizeToolResults(sanitizer, max_tokens=4000)])
    agent.invoke({"messages": [HumanMessage("go")]})
    tm = tool_message_seen(model)
    assert len(tm.content) < 40_000
    assert_working_marker(tm.content, BIG.encode())
    assert tm.response_metadata["result-sanitizer/record"]["truncated"] is True


def test_a_langgraph_tool_node_takes_the_wrapper(sanitizer: Sanitizer) -> None:
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    m = SanitizeToolResults(sanitizer)
    node = ToolNode([shell], wrap_tool_call=m.wrap_tool_call, awrap_tool_call=m.awrap_tool_call)
    g = StateGraph(MessagesState)
    g.add_node("tools", node)
    g.add_edge(START, "tools")
    g.add_edge("tools", END)
    call = AIMessage(content="", tool_calls=[{"name": "shell", "args": {"cmd": "env"}, "id": "call_9"}])
    out = g.compile().invoke({"messages": [call]})
    tm = out["messages"][-1]
    assert tm.tool_call_id == "call_9" and aws_key() not in tm.content and "[REDACTED:" in tm.content


def test_content_blocks_stay_blocks(sanitizer: Sanitizer) -> None:
    """A tool that returns blocks (text and an image) keeps them; the text
    is redacted, the image passes, an error stays an error."""
    import base64

    from result_sanitizer.adapters.langchain import sanitize_tool_message

    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(64)).decode()
    msg = ToolMessage(
        content=[{"type": "text", "text": f"AWS_ACCESS_KEY_ID={aws_key()}"}, {"type": "image", "base64": png, "mime_type": "image/png"}],
        tool_call_id="call_5",
        name="screenshot",
        status="error",
    )
    out = sanitize_tool_message(msg, sanitizer)
    assert out.tool_call_id == "call_5" and out.name == "screenshot" and out.status == "error"
    assert out.content[0] == {"type": "text", "text": "AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key-id]"}
    assert out.content[1] == {"type": "image", "base64": png, "mime_type": "image/png"}
