"""DuckLM's MCP client as the official conformance suite's client under test.

    conformance client --command "python tests/support/conformance_client.py" --scenario X

The suite starts a test server for scenario X and runs this with its URL as the last
argument (and `MCP_CONFORMANCE_SCENARIO` set). This does what a DuckLM turn does with a
server named in `mcp.json`: `McpServer.ensure()` connects, initializes and lists the
tools, then each tool is called through DuckLM's own `<server>__<tool>` wrapper with
arguments made from its schema, as a model would fill them. A server's questions during
a call go to the call's `CallAsks` as in a turn, where a person stands in who accepts
every form as it is shown (its defaults) and lets DuckLM's model answer (a fixed reply:
no model runs here). Nothing here is scenario-specific: a scenario DuckLM fails is a gap
in `ducklm.mcp`, not in this file.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from ducklm.mcp.asks import CallAsks, Sampled, SamplingAsk, call_asks
from ducklm.mcp.config import ServerSpec
from ducklm.mcp.server import McpServer
from ducklm.tools.elicitation import check_elicit_answer
from ducklm.tools.errors import ToolError
from ducklm.tools.hitl import DecisionError, ElicitAnswer, ServerQuestion

EXAMPLES: dict[str, Any] = {"number": 1, "integer": 1, "boolean": True, "string": "x"}


def example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool with JSON schema `schema`: each property's default or example."""
    arguments = {}
    for key, prop in (schema.get("properties") or {}).items():
        if "default" in prop:
            arguments[key] = prop["default"]
        elif prop.get("enum"):
            arguments[key] = prop["enum"][0]
        else:
            arguments[key] = EXAMPLES.get(prop.get("type"), "x")
    return arguments


async def accept_as_shown(question: ServerQuestion) -> dict[str, Any]:
    """The person pressing Accept on the form as shown (declining one that needs typing)."""
    try:
        return check_elicit_answer(question, ElicitAnswer(action="accept")).wire()
    except DecisionError:
        return {"action": "decline"}


async def fixed_reply(ask: SamplingAsk) -> Sampled:
    """A stand-in for DuckLM's model."""
    del ask
    return Sampled(text="a reply", model="ducklm-conformance")


def asks_for(tool: str) -> CallAsks:
    """The `CallAsks` of one call, answered by `accept_as_shown` and `fixed_reply`."""
    return CallAsks(
        call_id=tool,
        server="conformance",
        tool=tool,
        trusted=True,
        person=accept_as_shown,
        sampler=fixed_reply,
    )


async def exercise(url: str) -> int:
    """Connect to `url` as DuckLM does, call every tool; 0 when the server started."""
    with tempfile.TemporaryDirectory() as folder:
        spec = ServerSpec(name="conformance", url=url)
        server = McpServer(spec, workspace=Path(folder), log_dir=Path(folder), timeout_s=20)
        await server.ensure()
        try:
            if server.session is None:
                print(server.error, file=sys.stderr)
                return 1
            for tool in server.tools:
                schema = tool.args_schema if isinstance(tool.args_schema, dict) else {}
                token = call_asks.set(asks_for(tool.name))
                try:
                    print(tool.name, await tool.ainvoke(example_arguments(schema)))
                except ToolError as exc:  # a tool error is an answer, not a client failure
                    print(tool.name, "error:", exc)
                finally:
                    call_asks.reset(token)
        finally:
            await server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(exercise(sys.argv[-1])))
