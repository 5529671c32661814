"""A stdio MCP server behind a streamable-HTTP URL, for the conformance suite (URLs only).

One process (`ducklm mcp serve`, forked: `tests/support/forked_stdio.py`) is started and
kept, and the bridge is a stateless streamable-HTTP endpoint in front of
it. A POSTed request goes to the process's stdin
under an id of the bridge's own (every scenario's client starts at id 1, and they share
the process), and its answer comes back under the client's id as the last event of that
POST's SSE stream, after what the process sent meanwhile: progress by its token, any
other message to the request in flight the longest. Notifications and answers a client
POSTs go to stdin as they are (202), a cancel with the bridge's id for the client's.

The bridge holds no MCP state: the era (the 2025-11-25 handshake or the 2026-07-28
envelope on each request) is the process's, fixed by the first request it reads, so one
bridge serves one revision, and `stdio_bridge` opens it with that revision's first
request.

A loopback endpoint that carries requests into a local process guards its Host and
Origin, as `/mcp` does: the suite's `dns-rebinding-protection` checks the bridge's guard
there (stdio itself has no Host).

Why a test part and not a `ducklm` feature: `ducklm serve` already serves the same MCP
server over HTTP (`/mcp`, with its token, Host and Origin doors), and generic stdio-to-HTTP
gateways exist for other servers; the suite's URL-only `server` command is the one need.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support.forked_stdio import STOP_S, Process, StdinPipe, forked_serve

Message = dict[str, Any]


@dataclass
class _Call:
    """A request in flight: the client's id, its progress token, what goes back to it."""

    client_id: str | int
    token: str | int | None
    out: asyncio.Queue[Message | None] = field(default_factory=asyncio.Queue)


class StdioBridge:
    """The HTTP side (an ASGI app) and the routing of one stdio process's messages."""

    def __init__(self, process: Process, stdin: StdinPipe) -> None:
        self._process = process
        self.stdin = stdin
        self._calls: dict[int, _Call] = {}
        self._ids = itertools.count(1)
        self._writing = asyncio.Lock()
        self.hosts: set[str] = set()
        self.app = Starlette(
            routes=[Route("/mcp", self._endpoint, methods=["GET", "POST", "DELETE"])]
        )

    async def ask(self, message: Message, limit_s: float) -> Message:
        """Send one request straight to the process (no HTTP); its answer."""
        bridge_id, call = self._open(message)
        await self.send({**message, "id": bridge_id})
        while (answer := await asyncio.wait_for(call.out.get(), limit_s)) is not None:
            if "method" not in answer:
                return answer
        raise AssertionError("the stdio server ended")

    async def read_process(self) -> None:
        """Route each line the process writes, until it ends (then every call ends too)."""
        assert self._process.stdout is not None
        async for line in self._process.stdout:
            if line.strip():
                self._route(json.loads(line))
        for call in self._calls.values():
            call.out.put_nowait(None)

    def _route(self, message: Message) -> None:
        answered = "method" not in message and message.get("id") in self._calls
        if answered and (call := self._calls.pop(message["id"])):
            call.out.put_nowait({**message, "id": call.client_id})
            call.out.put_nowait(None)
            return
        params = message.get("params") or {}
        if message.get("method") == "notifications/progress":
            token = params.get("progressToken")
            calls = [c for c in self._calls.values() if c.token == token]
        else:
            calls = list(self._calls.values())
        if calls:
            calls[0].out.put_nowait(message)

    def _open(self, message: Message) -> tuple[int, _Call]:
        meta = (message.get("params") or {}).get("_meta") or {}
        bridge_id = next(self._ids)
        self._calls[bridge_id] = call = _Call(message["id"], meta.get("progressToken"))
        return bridge_id, call

    async def send(self, message: Message) -> None:
        """Write one message to the process's stdin as it is."""
        async with self._writing:
            await self.stdin.write(json.dumps(message).encode() + b"\n")

    async def _endpoint(self, request: Request) -> Response:
        if refused := self._guard(request):
            return refused
        if request.method != "POST":  # no standalone stream, no session to end
            return Response(status_code=405, headers={"Allow": "POST"})
        try:
            message = json.loads(await request.body())
        except ValueError:
            return _error(-32700, "the body is not JSON")
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return _error(-32600, "not one JSON-RPC 2.0 message")
        if "method" not in message or "id" not in message:
            await self.send(self._cancel_by_bridge_id(message))
            return Response(status_code=202)
        bridge_id, call = self._open(message)
        await self.send({**message, "id": bridge_id})
        return StreamingResponse(self._events(bridge_id, call), media_type="text/event-stream")

    def _guard(self, request: Request) -> Response | None:
        host = request.headers.get("host", "")
        origin = request.headers.get("origin")
        if host not in self.hosts:
            return JSONResponse({"detail": f"Host {host!r} is not this bridge's"}, 403)
        if origin is not None and origin.removeprefix("http://") not in self.hosts:
            return JSONResponse({"detail": f"Origin {origin!r} is not this bridge's"}, 403)
        return None

    def _cancel_by_bridge_id(self, message: Message) -> Message:
        """A client's cancel names its own id: the process knows the bridge's."""
        if message.get("method") != "notifications/cancelled":
            return message
        params = message.get("params") or {}
        for bridge_id, call in self._calls.items():
            if call.client_id == params.get("requestId"):
                return {**message, "params": {**params, "requestId": bridge_id}}
        return message

    async def _events(self, bridge_id: int, call: _Call) -> AsyncIterator[bytes]:
        try:
            while (message := await call.out.get()) is not None:
                yield b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n"
        finally:
            if self._calls.pop(bridge_id, None) is not None:  # the client left first
                cancel = {"requestId": bridge_id, "reason": "the HTTP client left"}
                with contextlib.suppress(ConnectionError):
                    await self.send(_notification("notifications/cancelled", cancel))


def _notification(method: str, params: Message) -> Message:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def _error(code: int, text: str) -> Response:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": text}}
    return JSONResponse(body, 400)


@asynccontextmanager
async def stdio_bridge(
    env: dict[str, str], cwd: Path, opening: Message, *, log: Path, limit_s: float
) -> AsyncIterator[tuple[str, StdioBridge]]:
    """`ducklm mcp serve` started, opened with `opening`, and its bridge's URL.

    `opening` is the revision's first request (`initialize` opens the 2025-11-25 era,
    followed here by `notifications/initialized`; `server/discover` the 2026-07-28 one);
    its answer also says, within `limit_s`, that DuckLM has opened. The process's
    stderr goes to `log`.
    """
    async with forked_serve(env, cwd, log) as (process, stdin):
        bridge = StdioBridge(process, stdin)
        reading = asyncio.create_task(bridge.read_process())
        config = uvicorn.Config(bridge.app, host="127.0.0.1", port=0, log_level="warning")
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve())
        try:
            opened = await bridge.ask(opening, limit_s)
            assert "result" in opened, f"the stdio server refused {opening['method']}: {opened}"
            if opening["method"] == "initialize":
                await bridge.send(_notification("notifications/initialized", {}))
            while not server.started:
                if serving.done():
                    serving.result()  # startup failed: raise its error here
                await asyncio.sleep(0.01)
            port = server.servers[0].sockets[0].getsockname()[1]
            bridge.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
            yield f"http://127.0.0.1:{port}/mcp", bridge
        finally:
            server.should_exit = True
            await serving
            stdin.close()  # stdio's end: the server stops on its own, and its stdout ends
            with contextlib.suppress(TimeoutError):  # else it is killed on the way out
                await asyncio.wait_for(reading, STOP_S)
