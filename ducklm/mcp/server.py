"""One MCP server: its session kept open by a task of its own, started and restarted.

The `mcp` SDK's transports are anyio context managers whose cancel scopes must be left
by the task that entered them, so each session lives in a holder task that opens it,
lists the tools, reports ready and waits until it is told to stop. Calls from the graph
use the session from their own tasks (the SDK's streams allow that). A server that
dies is noticed by the call that finds it gone, or by the ping at the start of the next
turn, and is started again then. One that failed to start is tried again after a pause
that doubles (5 s up to 5 min), not at every turn: a hung server would add its start
timeout to each of them.

stdio servers get a clean environment: the SDK's minimal one (PATH, HOME, USER,
LOGNAME, SHELL, TERM) plus the config's `env`, never DuckLM's own variables or the
parent's secrets; `${VAR}` in the config is filled when the server starts
(`variables.py`), so an unset one fails that server alone. Their stderr goes to
`<data dir>/mcp/<server>.log` (0600), whose last line explains a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from langchain_core.tools import BaseTool

from ducklm.mcp.asks import CallAsks
from ducklm.mcp.catalog import page
from ducklm.mcp.config import ServerSpec
from ducklm.mcp.errors import authorization_words, failure_words
from ducklm.mcp.held import HeldCalls
from ducklm.mcp.media import media_folder
from ducklm.mcp.resources import resource_tools
from ducklm.mcp.tools import adapt_tool
from ducklm.stores.private import create_private_file

if TYPE_CHECKING:
    from ducklm.mcp.oauth.person import Show, SignIn
    from ducklm.mcp.session import DuckSession

log = logging.getLogger(__name__)

State = Literal["stopped", "running", "failed", "crashed"]
PING_TIMEOUT_S = 5.0
FIRST_PAUSE_S = 5.0
MAX_PAUSE_S = 300.0
START_FAILED = "MCP server {name!r} did not start: {why}"
CRASHED = "MCP server {name!r} crashed: {why}"
NO_ANSWER = "it did not answer within {s:.0f} s"


class McpServer:
    """The session of one configured server and the tools it offers."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        workspace: Path,
        log_dir: Path,
        timeout_s: float,
        person: Show | SignIn | None = None,
    ):
        self.spec = spec
        self.state: State = "stopped"
        self.error: str | None = None
        """Why it is not running (for `failed` and `crashed`), in words for people."""
        self.tools: list[BaseTool] = []
        self._workspace = workspace
        self._log_path = log_dir / f"{spec.name}.log"
        self.media_dir = media_folder(log_dir)
        """Where images, audio and blobs from its results are saved."""
        self.token_path = log_dir / "oauth" / f"{spec.name}.json"
        """Its OAuth tokens and client registration (`oauth/storage.py`)."""
        self._person = person
        """Who signs in when the server asks (`ducklm mcp login`); nobody in a turn."""
        self._timeout_s = spec.timeout_s or timeout_s
        self._pause_s = FIRST_PAUSE_S
        self._retry_at = 0.0
        self._session: DuckSession | None = None
        self._holder: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._refreshing: set[asyncio.Task[None]] = set()
        self.asking: list[CallAsks] = []
        """The calls in flight that take the server's questions (`asks.py`)."""
        self.held = HeldCalls(self.asking)
        """The calls waiting, open, for the person's answer to the server's question."""

    @property
    def timeout_s(self) -> float:
        """Seconds one call may take in all."""
        return self._timeout_s

    @property
    def idle_timeout_s(self) -> float:
        """Seconds one call may go without a progress notification."""
        return min(self.spec.idle_timeout_s or self._timeout_s, self._timeout_s)

    def retry_in_s(self) -> float:
        """Seconds until a failed server is tried again (0: at the next `ensure`)."""
        if self.state != "failed":
            return 0.0
        return max(0.0, self._retry_at - asyncio.get_running_loop().time())

    @property
    def session(self) -> DuckSession | None:
        """The open session, while the server runs."""
        return self._session if self.state == "running" else None

    @property
    def revision(self) -> str | None:
        """The MCP revision agreed with the server (`2026-07-28`, `2025-11-25`...), running."""
        session = self.session
        return session.protocol_version if session is not None else None

    async def ensure(self) -> None:
        """Running after this, or `failed`/`crashed` with `error` set; a dead one restarts."""
        if self.state == "running" and await self._answers():
            return
        if self.state == "running":
            await self.mark_crashed("it stopped answering")
        loop = asyncio.get_running_loop()
        if self.state == "failed" and loop.time() < self._retry_at:
            return  # tried a moment ago: `error` still says why
        await self.stop()
        await self._start()
        if self.state == "failed":
            self._retry_at, self._pause_s = (
                loop.time() + self._pause_s,
                min(self._pause_s * 2, MAX_PAUSE_S),
            )
        else:
            self._pause_s = FIRST_PAUSE_S

    async def start_now(self) -> None:
        """`ensure` without waiting out a failed start's pause: a person just signed in."""
        self._retry_at = 0.0
        await self.ensure()

    def for_person(self, person: Show | SignIn, wait_s: float) -> McpServer:
        """A new server of the same spec that `person` signs in to, given `wait_s` more to start.

        The web chat's Connect (`connect.py`) signs in on it, then starts this one afresh.
        """
        spec = self.spec.model_copy(update={"start_timeout_s": self.spec.start_timeout_s + wait_s})
        return McpServer(
            spec,
            workspace=self._workspace,
            log_dir=self._log_path.parent,
            timeout_s=self._timeout_s,
            person=person,
        )

    async def mark_crashed(self, why: str) -> str:
        """Record that the server died (its tools go until the next turn starts it again).

        Returns:
            The crash in words, with the last line the server wrote to stderr.
        """
        if self.state == "running":
            words = (
                why
                if self._worded(why)
                else CRASHED.format(name=self.spec.name, why=await self._last_words(why))
            )
            self.state, self.error, self.tools = "crashed", words, []
            log.warning("%s", words)
        return self.error or CRASHED.format(name=self.spec.name, why=why)

    async def stop(self) -> None:
        """End the session (and a stdio server's process)."""
        self.held.drop_all()
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
        # The MCP SDK loads when a server first starts (about 1 s of imports that every
        # DuckLM process paid, mcp.json or not), in a thread: importing reads files.
        await asyncio.to_thread(importlib.import_module, "ducklm.mcp.session")
        if self.spec.transport == "http":  # with its OAuth providers
            await asyncio.to_thread(importlib.import_module, "ducklm.mcp.http")
        self._stop = asyncio.Event()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._holder = asyncio.create_task(self._hold(ready), name=f"mcp:{self.spec.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout=self.spec.start_timeout_s)
        except TimeoutError:
            await self.stop()
            await self._fail(NO_ANSWER.format(s=self.spec.start_timeout_s))
        except Exception as exc:  # the holder's reason, already worded
            await self.stop()
            await self._fail(str(exc))

    async def _fail(self, why: str) -> None:
        self.state, self.tools = "failed", []
        if self._worded(why):
            self.error = why
        else:
            self.error = START_FAILED.format(name=self.spec.name, why=await self._last_words(why))
        log.warning("%s", self.error)

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        try:
            async with self._open() as session:
                await session.negotiate()
                self.tools = await self._list_tools(session)
                self._session, self.state, self.error = session, "running", None
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(RuntimeError(self._start_failure(exc)))
            elif not isinstance(exc, asyncio.CancelledError) and not self._stop.is_set():
                await self.mark_crashed(self._failure(exc))
            if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt | SystemExit):
                raise
        finally:
            self._session = None

    async def _list_tools(self, session: DuckSession) -> list[BaseTool]:
        found, cursor = [], None
        while True:
            got = await session.list_tools(params=page(cursor))
            found.extend(got.tools)
            cursor = got.next_cursor
            if not cursor:
                own = [adapt_tool(self, t) for t in found]
                names = {t.name for t in own}  # a server's own tool of that name wins
                return own + [t for t in resource_tools(self, session) if t.name not in names]

    async def _tools_changed(self) -> None:
        # Called from the session's reading task, which must go on reading for the
        # answer to arrive: the list is fetched in a task of its own.
        task = asyncio.create_task(self._refresh(), name=f"mcp:{self.spec.name}:tools")
        self._refreshing.add(task)
        task.add_done_callback(self._refreshing.discard)

    async def _refresh(self) -> None:
        session = self._session
        if session is None:
            return
        try:
            tools = await asyncio.wait_for(self._list_tools(session), timeout=PING_TIMEOUT_S * 6)
        except Exception:  # the old list stays; a broken session shows at the next call
            log.warning(
                "MCP server %r: could not list its changed tools", self.spec.name, exc_info=True
            )
            return
        if self._session is session:
            self.tools = tools

    def _start_failure(self, exc: BaseException) -> str:
        cwd = self.spec.cwd or self._workspace
        if isinstance(exc, FileNotFoundError) and exc.filename == str(cwd):
            return f"its working folder {cwd} does not exist"
        return self._failure(exc)

    def _failure(self, exc: BaseException) -> str:
        """Why the session ended: a whole line when it wants authorization (`_worded`)."""
        words = authorization_words(
            exc, self.spec.name, static_token=self.spec.static_authorization
        )
        return failure_words(exc) if words is None else words

    def _worded(self, why: str) -> bool:
        # An authorization line names the server itself and says what to do: kept whole.
        return why.startswith(f"MCP server {self.spec.name!r}")

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[DuckSession]:
        # Loaded by `_start` already (off the loop); named here for the types.
        from mcp import StdioServerParameters  # noqa: PLC0415
        from mcp.client.stdio import stdio_client  # noqa: PLC0415

        from ducklm.mcp.session import root_uri  # noqa: PLC0415  it imports the SDK

        spec = self.spec.expanded(os.environ)
        root = spec.cwd or self._workspace
        uri = await asyncio.to_thread(root_uri, root)
        if spec.transport == "http":
            from ducklm.mcp.http import open_http  # noqa: PLC0415  it imports the SDK

            async with (
                open_http(spec, self.token_path, self._person, self._asking) as (read, write),
                self._session_over(read, write, uri) as session,
            ):
                yield session
            return
        params = StdioServerParameters(
            command=spec.command or "",
            args=list(spec.args),
            env=dict(spec.env),
            cwd=root,
        )
        errlog = await asyncio.to_thread(self._open_log)
        try:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                self._session_over(read, write, uri) as session,
            ):
                yield session
        finally:
            await asyncio.to_thread(errlog.close)

    def _session_over(self, read: Any, write: Any, uri: str) -> DuckSession:
        from ducklm.mcp.session import DuckSession  # noqa: PLC0415  it imports the SDK

        return DuckSession(
            read,
            write,
            root_uri=uri,
            on_tools_changed=self._tools_changed,
            asking=self._asking,
        )

    def _asking(self) -> list[CallAsks]:
        return list(self.asking)

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
