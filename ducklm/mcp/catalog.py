"""A server's prompts, resources and resource templates: listed once per session.

They are listed again after `list_changed` (2025-11-25), or once the list's TTL ran out
(2026-07-28: `session.py:DuckSession.fresh_until`). The person's completion list asks for them
at each `/` or `@` typed; listing again each time would be a round trip per keystroke. A
list is kept with the session it came from and the count of that session's
`list_changed` notices (`session.py:DuckSession.changes`), so a restarted server or a
changed list is read afresh.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from weakref import WeakKeyDictionary

from ducklm.mcp.errors import TypedInputError

if TYPE_CHECKING:
    from mcp import ClientSession, types

    from ducklm.mcp.running import RunningServer, ServerSet

T = TypeVar("T")
S = TypeVar("S", bound="RunningServer")
Kind = Literal["prompts", "resources"]
NOT_RUNNING = "the MCP server {name!r} is not running: {why}"
FAILED = "the MCP server {name} could not {what}: {why}"

_lists: WeakKeyDictionary[Any, dict[Kind, tuple[int, list[Any]]]] = WeakKeyDictionary()


def running_session(server: RunningServer) -> ClientSession:
    """The server's open session.

    Raises:
        TypedInputError: It is not running; the message says why.
    """
    session = server.session
    if session is None:
        why = server.error or server.state
        raise TypedInputError(NOT_RUNNING.format(name=server.spec.name, why=why))
    return session


def page(cursor: str | None) -> types.PaginatedRequestParams | None:
    """The parameters of a list request for the page at `cursor` (`None`: the first)."""
    from mcp import types  # noqa: PLC0415  loaded with the session

    return None if cursor is None else types.PaginatedRequestParams(cursor=cursor)


def offers(session: ClientSession, kind: Kind) -> bool:
    """Whether the server announced the capability `kind` when it started."""
    capabilities = session.server_capabilities
    return capabilities is not None and getattr(capabilities, kind, None) is not None


async def listed(
    server: RunningServer, kind: Kind, fetch: Callable[[ClientSession], Awaitable[list[T]]]
) -> list[T]:
    """The server's list of `kind`, from the cache while its session, count and TTL hold."""
    session = running_session(server)
    if not offers(session, kind):
        return []
    count = getattr(session, "changes", {}).get(kind, 0)
    fresh = getattr(session, "fresh_until", {}).get(kind, math.inf)
    kept = _lists.setdefault(session, {}).get(kind)
    if kept is not None and kept[0] == count and asyncio.get_running_loop().time() < fresh:
        return list(kept[1])
    found = await guarded(server, f"list its {kind}", fetch(session))
    _lists[session][kind] = (count, found)
    return list(found)


async def from_each(
    mcp: ServerSet[S], each: Callable[[S], Awaitable[list[T]]]
) -> tuple[list[T], list[tuple[str, str]]]:
    """`each` of every server (started if need be), and `(server, why)` of those that failed."""
    await mcp.ensure()
    found: list[T] = []
    problems: list[tuple[str, str]] = []
    for server in mcp.servers:
        try:
            found.extend(await each(server))
        except TypedInputError as exc:
            problems.append((server.spec.name, str(exc)))
    return found, problems


async def guarded(
    server: RunningServer, what: str, work: Awaitable[T], error: type[Exception] = TypedInputError
) -> T:
    """`work` within the server's total deadline; its failures as `error`, in words."""
    try:
        return await asyncio.wait_for(work, timeout=server.timeout_s)
    except error:
        raise
    except Exception as exc:  # a JSON-RPC error, a timeout, a broken session
        why = getattr(getattr(exc, "error", None), "message", None) or type(exc).__name__
        raise error(FAILED.format(name=server.spec.name, what=what, why=why)) from None


async def list_templates(session: ClientSession) -> list[Any]:
    """The server's resource templates (`resources/templates/list`), every page.

    A server with resources need not answer it (the method is optional): its error is
    no templates, not a failed list.
    """
    from mcp import MCPError  # noqa: PLC0415  loaded with the session

    found: list[Any] = []
    cursor: str | None = None
    while True:
        try:
            got = await session.list_resource_templates(params=page(cursor))
        except MCPError:
            return found
        found.extend(got.resource_templates)
        cursor = got.next_cursor
        if not cursor:
            return found
