"""An OpenAI Agents SDK agent whose function tools (and MCP servers) pass
their output through result-sanitizer.

    pip install ./hosts/python openai-agents    (after make build)
    python examples/python/openai_agents_tools.py

The model here is a scripted Model subclass that prints what it is given,
so the example runs offline; drop `model=` to use the SDK's default model.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agents import Agent, RunConfig, Runner, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from result_sanitizer.adapters.openai_agents import sanitize_tools


@function_tool
def query_db(sql: str) -> str:
    """Runs a read-only SQL query."""
    dsn = "postgres://app:" + "Xk9mQ2vLp7" + "zzR4" + "@10.0.0.7:5432/app"  # made here, not a literal
    return f"connected to {dsn}\n" + "".join(f"{i}\torder-{i}\tshipped\n" for i in range(60_000))


class ShowingModel(Model):
    def __init__(self) -> None:
        self.turn = 0

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        self.turn += 1
        for item in input if isinstance(input, list) else []:
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                out = str(item["output"])
                print(f"--- the model sees {item['call_id']}, {len(out)} chars:")
                print(out if len(out) < 1500 else out[:700] + "\n...\n" + out[-700:])
        if self.turn == 1:
            call = ResponseFunctionToolCall(
                type="function_call", call_id="call_1", name="query_db", arguments=json.dumps({"sql": "select * from orders"}), id="fc_1"
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        msg = ResponseOutputMessage(
            id="msg_1", type="message", role="assistant", status="completed",
            content=[ResponseOutputText(type="output_text", text="done", annotations=[])],
        )
        return ModelResponse(output=[msg], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


agent = Agent(name="ops", model=ShowingModel(), tools=sanitize_tools([query_db], max_tokens=2000))
asyncio.run(Runner.run(agent, "how many orders shipped?", run_config=RunConfig(tracing_disabled=True)))
