"""DuckLM's side of an MCP session: who it says it is, its roots, and cancelling calls.

Imported only when a server starts (it needs the `mcp` SDK, about 1 s of imports).
The SDK's `ClientSession` introduces itself as `mcp`, offers no roots, and when a
request is given up on (a timeout, Stop, a cancelled task) it forgets it without telling
the server, which keeps working; `DuckSession` fixes the three.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, types
from mcp.shared.context import RequestContext
from mcp.shared.session import RequestResponder

log = logging.getLogger(__name__)

CANCELLED_REASON = "DuckLM stopped waiting (timeout or cancel)"


def _client_info() -> types.Implementation:
    """`ducklm` and its installed version, as DuckLM introduces itself to servers."""
    try:
        version = importlib.metadata.version("ducklm")
    except importlib.metadata.PackageNotFoundError:  # a source tree that was not installed
        version = "0"
    return types.Implementation(name="ducklm", version=version)


def root_uri(folder: Path) -> str:
    """The `file://` URI of `folder`, the one root DuckLM offers; blocking (`absolute`)."""
    return folder.absolute().as_uri()


# Read once, with the module: the package metadata is a file, and sessions open on the loop.
CLIENT_INFO = _client_info()


class DuckSession(ClientSession):
    """A `ClientSession` that tells the server when DuckLM gives up on a request."""

    def __init__(
        self,
        read: Any,
        write: Any,
        *,
        root_uri: str,
        on_tools_changed: Callable[[], Awaitable[None]],
    ) -> None:
        self._root_uri = root_uri
        self._on_tools_changed = on_tools_changed
        super().__init__(
            read,
            write,
            client_info=CLIENT_INFO,
            list_roots_callback=self._list_roots,
            message_handler=self._handle_message,
        )

    async def send_request(self, request: Any, result_type: Any, *args: Any, **kwargs: Any) -> Any:
        """The SDK's request, plus `notifications/cancelled` when it is given up on."""
        # The SDK numbers requests with this counter and reads it before its first await,
        # so this is the id the request goes out with.
        request_id = self._request_id
        try:
            return await super().send_request(request, result_type, *args, **kwargs)
        except BaseException as exc:
            if _given_up(exc):
                await self._cancel(request_id)
            raise

    async def _cancel(self, request_id: int) -> None:
        note = types.CancelledNotification(
            params=types.CancelledNotificationParams(requestId=request_id, reason=CANCELLED_REASON)
        )
        # Shielded: the caller's scope is already cancelled, and the notice must still go.
        with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
            with anyio.fail_after(5):
                await self.send_notification(types.ClientNotification(note))

    async def _list_roots(
        self, context: RequestContext[ClientSession, Any]
    ) -> types.ListRootsResult:
        del context
        root = types.Root(uri=self._root_uri, name="workspace")  # type: ignore[arg-type]
        return types.ListRootsResult(roots=[root])

    async def _handle_message(
        self,
        message: RequestResponder[types.ServerRequest, types.ClientResult]
        | types.ServerNotification
        | Exception,
    ) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(
            message.root, types.ToolListChangedNotification
        ):
            await self._on_tools_changed()


def _given_up(exc: BaseException) -> bool:
    """Whether `exc` means DuckLM stopped waiting, not that the server answered."""
    return isinstance(exc, TimeoutError | anyio.get_cancelled_exc_class())
