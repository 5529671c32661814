"""DuckLM's MCP client as the official conformance suite's client under test.

    conformance client --command "python tests/support/conformance_client.py" --scenario X

The suite starts a test server for scenario X and runs this with its URL as the last
argument (and `MCP_CONFORMANCE_SCENARIO` set). This does what `ducklm mcp login` and
then a DuckLM turn do with a server named in `mcp.json`: `McpServer.ensure()` connects
(signing in through OAuth when the server asks), initializes and lists the tools, then
each tool is called through DuckLM's own `<server>__<tool>` wrapper with arguments made
from its schema, as a model would fill them. A server's questions during a call go to
the call's `CallAsks` as in a turn, where a person stands in who accepts every form as it
is shown (its defaults) and lets DuckLM's model answer (a fixed reply: no model runs
here). The person signing in is the non-interactive path: the authorization URL is
fetched and its redirects followed, as a browser would, to DuckLM's loopback listener
(the suite's authorization server approves at once).

The one thing that depends on the scenario is the `mcp.json` a person would write for
its server (`server_config`): the credentials the suite hands over in
`MCP_CONFORMANCE_CONTEXT` (a pre-registered client, or a machine's own credentials for
the client-credentials scenarios) and the client ID metadata document URL. Otherwise a
scenario DuckLM fails is a gap in `ducklm.mcp`, not in this file.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

from ducklm.mcp.asks import CallAsks, Sampled, SamplingAsk, call_asks
from ducklm.mcp.config import parse_mcp_config
from ducklm.mcp.server import McpServer
from ducklm.stores.private import create_private_file
from ducklm.tools.elicitation import check_elicit_answer
from ducklm.tools.errors import ToolError
from ducklm.tools.hitl import DecisionError, ElicitAnswer, ServerQuestion

EXAMPLES: dict[str, Any] = {"number": 1, "integer": 1, "boolean": True, "string": "x"}
# A client ID metadata document the person hosts (the suite's server never fetches it).
METADATA_URL = "https://conformance-test.local/client-metadata.json"


def server_config(url: str, context: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The `mcp.json` entry a person would write for the scenario's server."""
    scenario = str(context.get("name") or os.environ.get("MCP_CONFORMANCE_SCENARIO", ""))
    oauth: dict[str, Any] = {"client_metadata_url": METADATA_URL}
    if "client-credentials" in scenario:
        oauth = {"grant": "client_credentials", "client_id": context["client_id"]}
    if "private_key_pem" in context:
        key = create_private_file(folder / "client-key.pem")
        key.write_text(context["private_key_pem"], encoding="utf-8")
        oauth |= {"private_key_file": str(key), "signing_algorithm": context["signing_algorithm"]}
    elif "client_id" in context:
        oauth |= {"client_id": context["client_id"], "client_secret": context["client_secret"]}
    return {"url": url, "oauth": oauth}


async def follow_as_browser(authorization_url: str) -> None:
    """The person's browser: the authorization page, and its redirect back to DuckLM."""
    # Made in a thread: an httpx client loads the CA bundle from disk.
    client = await asyncio.to_thread(httpx.AsyncClient, follow_redirects=True, timeout=20)
    async with client:
        (await client.get(authorization_url)).raise_for_status()


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
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
        entry = server_config(url, context, Path(folder))
        (spec,) = parse_mcp_config(json.dumps({"mcpServers": {"conformance": entry}}))
        server = McpServer(
            spec,
            workspace=Path(folder),
            log_dir=Path(folder),
            timeout_s=20,
            person=follow_as_browser,
        )
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
