"""DuckLM's MCP client as the official conformance suite's client under test, driven as a turn.

    conformance client --command "python tests/support/conformance_client.py" --scenario X

The suite starts a test server for scenario X and runs this with its URL as the last
argument (and `MCP_CONFORMANCE_SCENARIO` set). It does what a person and a DuckLM turn
do with a server named in `mcp.json`, through the same doors:

- the turn starts the servers (`open_mcp`, `McpServers.ensure`), where nobody signs
  in; when the server wants a sign-in, the turn's words say "run `ducklm mcp login`",
  and the person does: the CLI's own `cmd_mcp_login` with `--no-browser`, its printed
  link fetched as a browser would, redirects followed back to DuckLM's loopback
  listener (the suite's authorization server approves at once); the server then starts
  again (`start_now`, as after the web chat's Connect);
- each tool is called in a LangGraph node, as the tool step calls it: each attempt a
  task, the server's questions to the call's `CallAsks` with no person inside it; one no
  answer in hand fits ends the attempt (at 2025-11-25 the call stays open, held by its
  server), and the node asks with DuckLM's own `ask_server` interrupt; the person
  answers at that door (`Command(resume=...)`: the form accepted as shown, its
  defaults), and the node's next attempt hands the answer on. Sampling from this
  trusted server is answered by a stand-in for DuckLM's model (no model runs here);
- a tool's arguments are the scenario's own when it names them (`toolCalls` in its
  context, as a person's request would), else made from the schema, as a model would.

The one thing that depends on the scenario is the `mcp.json` a person would write for
its server (`server_config`): the credentials the suite hands over in
`MCP_CONFORMANCE_CONTEXT` (a pre-registered client, or a machine's own credentials for
the client-credentials scenarios) and the client ID metadata document URL. Otherwise a
scenario DuckLM fails is a gap in `ducklm.mcp`, not in this file.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, TypedDict

import httpx
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import task
from langgraph.graph import START, StateGraph
from langgraph.types import Command

from ducklm.cli.mcp_login import cmd_mcp_login
from ducklm.config.settings import Settings, load_settings
from ducklm.mcp.asks import Asked, CallAsks, NeedsPerson, Sampled, SamplingAsk, call_asks
from ducklm.mcp.servers import open_mcp
from ducklm.stores.private import create_private_file
from ducklm.tools.elicitation import check_elicit_answer
from ducklm.tools.errors import ToolError
from ducklm.tools.hitl import DecisionError, ElicitAnswer, ServerQuestion
from ducklm.tools.mcp_info import mcp_info
from ducklm.turn.tool_step.server_question import ask_server

SERVER = "conformance"
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
    return {"url": url, "oauth": oauth, "trust": "trusted"}


async def follow_as_browser(authorization_url: str) -> None:
    """The person's browser: the authorization page, and its redirect back to DuckLM."""
    # Made in a thread: an httpx client loads the CA bundle from disk.
    client = await asyncio.to_thread(httpx.AsyncClient, follow_redirects=True, timeout=60)
    async with client:
        (await client.get(authorization_url)).raise_for_status()


def arguments_for(tool: str, schema: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    """The arguments a model would send `tool`: the scenario's own, else made from `schema`.

    A scenario may say how its tools are to be called (`toolCalls` in its context, as
    the request a person typed would); an argument it leaves out (or sets to null) is
    not sent as a made-up example.
    """
    for wanted in context.get("toolCalls") or ():
        if wanted.get("name") == tool:
            return dict(wanted.get("arguments") or {})
    return example_arguments(schema)


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
    """The person at DuckLM's question door pressing Accept on the form as shown.

    One that needs typing is declined; a link (a server asking for more access) is
    opened in the person's browser first; a sampling request is accepted.
    """
    if question.get("mode") == "url":
        await follow_as_browser(question.get("url", ""))
    try:
        return check_elicit_answer(question, ElicitAnswer(action="accept")).wire()
    except DecisionError:
        return {"action": "decline"}


async def fixed_reply(ask: SamplingAsk) -> Sampled:
    """A stand-in for DuckLM's model."""
    del ask
    return Sampled(text="a reply", model="ducklm-conformance")


class CallState(TypedDict):
    """One tool call's graph: its output, in words."""

    output: str


def call_graph(tool: BaseTool, arguments: dict[str, Any]) -> Any:
    """A graph of one node that calls `tool` as the tool step does (`server_asks.run_call`)."""
    info = mcp_info(tool)
    assert info is not None  # every tool of a server carries its facts

    async def one_attempt(answered: tuple[Asked, ...]) -> dict[str, Any]:
        asks = CallAsks(
            call_id=info.name,
            server=info.server,
            tool=info.tool,
            trusted=info.trusted,
            answered=answered,
            sampler=fixed_reply,
        )
        token = call_asks.set(asks)
        try:
            return {"output": str(await tool.ainvoke(arguments))}
        except ToolError as exc:  # a tool error is an answer, not a client failure
            return {"output": f"error: {exc}"}
        except NeedsPerson as exc:
            return {"question": exc.question}
        finally:
            call_asks.reset(token)

    attempt = task(one_attempt)

    async def call_tool(state: CallState) -> dict[str, str]:
        answered: list[Asked] = []
        while True:
            result = await attempt(tuple(answered))
            if "question" not in result:
                return {"output": result["output"]}
            answered.append(Asked(result["question"], ask_server(result["question"])))

    builder = StateGraph(CallState)
    builder.add_node("call_tool", call_tool)
    builder.add_edge(START, "call_tool")
    return builder.compile(checkpointer=InMemorySaver())


async def call_as_a_turn(tool: BaseTool, arguments: dict[str, Any]) -> str:
    """The tool's output after the person answered each question at DuckLM's door."""
    config: Any = {"configurable": {"thread_id": tool.name}}
    graph = call_graph(tool, arguments)
    await graph.ainvoke({"output": ""}, config)
    while (state := await graph.aget_state(config)).interrupts:
        question = state.interrupts[0].value
        print("asked:", question.get("message"), file=sys.stderr)
        answer = await accept_as_shown(question)
        await graph.ainvoke(Command(resume=answer), config)
    return str(state.values["output"])


class Terminal(io.StringIO):
    """The person's terminal for `ducklm mcp login --no-browser`: a link printed is opened."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: set[asyncio.Task[None]] = set()

    def write(self, text: str) -> int:
        """Print `text` (to stderr); a line that is a link goes to the person's browser."""
        for line in text.splitlines():
            if line.startswith("http"):
                self.opened.add(asyncio.get_running_loop().create_task(follow_as_browser(line)))
        return sys.stderr.write(text)


async def sign_in(settings: Settings) -> int:
    """`ducklm mcp login conformance --no-browser`, the person following its link."""
    terminal = Terminal()
    with contextlib.redirect_stdout(terminal):
        return await cmd_mcp_login(settings, argparse.Namespace(name=SERVER, no_browser=True))


async def exercise(url: str) -> int:
    """Start the server as a turn does (signing in when told to), call every tool."""
    with tempfile.TemporaryDirectory() as folder:
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
        settings = await asyncio.to_thread(settings_for, Path(folder), url, context)
        async with open_mcp(settings) as servers:
            (server,) = servers.servers
            await servers.ensure()
            if server.session is None and "ducklm mcp login" in (server.error or ""):
                await sign_in(settings)  # what the turn's words tell the person to do
                await server.start_now()
            if server.session is None:
                print(server.error, file=sys.stderr)
                return 1
            for tool in list(server.tools):
                schema = tool.args_schema if isinstance(tool.args_schema, dict) else {}
                info = mcp_info(tool)
                named = info.tool if info is not None else tool.name
                print(tool.name, await call_as_a_turn(tool, arguments_for(named, schema, context)))
    return 0


def settings_for(folder: Path, url: str, context: dict[str, Any]) -> Settings:
    """DuckLM's settings in `folder`, with the `mcp.json` the person wrote; blocking."""
    workspace = folder / "workspace"
    workspace.mkdir()
    config = folder / "mcp.json"
    entry = server_config(url, context, folder)
    config.write_text(json.dumps({"mcpServers": {SERVER: entry}}), encoding="utf-8")
    return load_settings(
        env_file=None, data_dir=folder / "data", workspace=workspace, mcp_config=config
    )


if __name__ == "__main__":
    sys.exit(asyncio.run(exercise(sys.argv[-1])))
