"""One MCP server: its session kept open by a task of its own, started and restarted.

The `mcp` SDK's transports are anyio context managers whose cancel scopes must be left
by the task that entered them, so each session lives in a holder task that opens it,
lists the tools, reports ready and waits until it is told to stop. Calls from the graph
use the session from their own tasks (the SDK's streams allow that). A server that
dies is noticed by the call that finds it gone, or by the ping at the start of the next
turn, and is started again then.

stdio servers get a clean environment: the SDK's minimal one (PATH, HOME, USER,
LOGNAME, SHELL, TERM) plus the config's `env`, never DuckLM's own variables or the
parent's secrets. Their stderr goes to `<data dir>/mcp/<server>.log` (0600), whose last
line explains a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TextIO

from langchain_core.tools import BaseTool

from ducklm.mcp.config import ServerSpec
from ducklm.mcp.errors import failure_words
from ducklm.mcp.tools import adapt_tool
from ducklm.stores.private import create_private_file

if TYPE_CHECKING:
    from mcp import ClientSession

log = logging.getLogger(__name__)

State = Literal["stopped", "running", "failed", "crashed"]
START_TIMEOUT_S = 60.0
PING_TIMEOUT_S = 5.0
START_FAILED = "MCP server {name!r} did not start: {why}"
CRASHED = "MCP server {name!r} crashed: {why}"
NO_ANSWER = "it did not answer within {s:.0f} s"


class McpServer:
    """The session of one configured server and the tools it offers."""

    def __init__(self, spec: ServerSpec, *, workspace: Path, log_dir: Path, timeout_s: float):
        self.spec = spec
        self.state: State = "stopped"
        self.error: str | None = None
        """Why it is not running (for `failed` and `crashed`), in words for people."""
        self.tools: list[BaseTool] = []
        self._workspace = workspace
        self._log_path = log_dir / f"{spec.name}.log"
        self._timeout_s = spec.timeout_s or timeout_s
        self._session: ClientSession | None = None
        self._holder: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()

    @property
    def timeout_s(self) -> float:
        """Seconds one call may take."""
        return self._timeout_s

    @property
    def session(self) -> ClientSession | None:
        """The open session, while the server runs."""
        return self._session if self.state == "running" else None

    async def ensure(self) -> None:
        """Running after this, or `failed`/`crashed` with `error` set; a dead one restarts."""
        if self.state == "running" and await self._answers():
            return
        if self.state == "running":
            await self.mark_crashed("it stopped answering")
        await self.stop()
        await self._start()

    async def mark_crashed(self, why: str) -> str:
        """Record that the server died (its tools go until the next turn starts it again).

        Returns:
            The crash in words, with the last line the server wrote to stderr.
        """
        if self.state == "running":
            words = CRASHED.format(name=self.spec.name, why=await self._last_words(why))
            self.state, self.error, self.tools = "crashed", words, []
            log.warning("%s", words)
        return self.error or CRASHED.format(name=self.spec.name, why=why)

    async def stop(self) -> None:
        """End the session (and a stdio server's process)."""
        holder, self._holder = self._holder, None
        self._session = None
        if holder is None:
            return
        self._stop.set()
        with contextlib.suppress(asyncio.TimeoutError, Exception):
            await asyncio.wait_for(asyncio.shield(holder), timeout=10)
        if not holder.done():
            holder.cancel()
            with contextlib.suppress(BaseException):
                await holder
        if self.state == "running":
            self.state = "stopped"

    async def _start(self) -> None:
        self._stop = asyncio.Event()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._holder = asyncio.create_task(self._hold(ready), name=f"mcp:{self.spec.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout=START_TIMEOUT_S)
        except TimeoutError:
            await self.stop()
            await self._fail(NO_ANSWER.format(s=START_TIMEOUT_S))
        except Exception as exc:  # the holder's reason, already worded
            await self.stop()
            await self._fail(str(exc))

    async def _fail(self, why: str) -> None:
        self.state, self.tools = "failed", []
        self.error = START_FAILED.format(name=self.spec.name, why=await self._last_words(why))
        log.warning("%s", self.error)

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        # The MCP SDK and its adapters load when a server starts: about 1 s of imports
        # that every DuckLM process paid, mcp.json or not.
        from langchain_mcp_adapters.tools import load_mcp_tools  # noqa: PLC0415

        try:
            async with self._open() as session:
                await session.initialize()
                found = await load_mcp_tools(session, server_name=self.spec.name)
                self.tools = [adapt_tool(self, t) for t in found]
                self._session, self.state, self.error = session, "running", None
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(RuntimeError(self._start_failure(exc)))
            elif not isinstance(exc, asyncio.CancelledError):
                await self.mark_crashed(failure_words(exc))
            if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt | SystemExit):
                raise
        finally:
            self._session = None

    def _start_failure(self, exc: BaseException) -> str:
        cwd = self.spec.cwd or self._workspace
        if isinstance(exc, FileNotFoundError) and exc.filename == str(cwd):
            return f"its working folder {cwd} does not exist"
        return failure_words(exc)

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[ClientSession]:
        from langchain_mcp_adapters.sessions import create_session  # noqa: PLC0415  see _hold
        from mcp import ClientSession, StdioServerParameters  # noqa: PLC0415
        from mcp.client.stdio import stdio_client  # noqa: PLC0415

        spec = self.spec
        if spec.transport == "http":
            connection = {
                "transport": "streamable_http",
                "url": spec.url,
                "headers": dict(spec.headers) or None,
                "timeout": timedelta(seconds=30),
            }
            async with create_session(connection) as session:  # type: ignore[arg-type]
                yield session
            return
        params = StdioServerParameters(
            command=spec.command or "",
            args=list(spec.args),
            env=dict(spec.env),
            cwd=spec.cwd or self._workspace,
        )
        errlog = await asyncio.to_thread(self._open_log)
        try:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                yield session
        finally:
            await asyncio.to_thread(errlog.close)

    def _open_log(self) -> TextIO:
        create_private_file(self._log_path)
        handle = self._log_path.open("a", encoding="utf-8")
        handle.write(f"--- starting {self.spec.name}\n")
        handle.flush()
        return handle

    async def _answers(self) -> bool:
        session = self._session
        if session is None:
            return False
        try:
            await asyncio.wait_for(session.send_ping(), timeout=PING_TIMEOUT_S)
        except Exception:
            return False
        return True

    async def _last_words(self, fallback: str) -> str:
        if self.spec.transport != "stdio":
            return fallback
        return await asyncio.to_thread(self._read_last_words, fallback)

    def _read_last_words(self, fallback: str) -> str:
        try:
            with self._log_path.open("rb") as handle:
                handle.seek(0, 2)
                handle.seek(max(0, handle.tell() - 4096))
                lines = handle.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return fallback
        last = next((ln.strip() for ln in reversed(lines) if ln.strip()), "")
        if not last or last.startswith("--- starting"):
            return fallback
        return f"{fallback} (its last words: {last[:300]})"
