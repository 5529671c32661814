"""DuckLM's side of an MCP session: who it says it is, its roots, cancelling, questions.

Imported only when a server starts (it needs the `mcp` SDK, about 1 s of imports).
The SDK's `ClientSession` introduces itself as `mcp`, offers no roots, and when a
request is given up on (a timeout, Stop, a cancelled task) it forgets it without telling
the server, which keeps working; `DuckSession` fixes the three. It also takes the
server's questions during a call (`elicitation/create` in form and URL mode,
`sampling/createMessage`) to the call's `CallAsks` (`asks.py`); given the callbacks, the
SDK (1.30) advertises `elicitation: {form, url}` and `sampling`. It counts the
server's `list_changed` notices for prompts and resources (`changes`).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import ClientSession, types
from mcp.shared.context import RequestContext
from mcp.shared.session import RequestResponder

from ducklm.mcp.asks import (
    MANY_CALLS,
    NO_CALL,
    CallAsks,
    QuestionPending,
    Refused,
    SamplingAsk,
)

log = logging.getLogger(__name__)
A = TypeVar("A")
R = TypeVar("R")

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
        asking: Callable[[], list[CallAsks]],
    ) -> None:
        self._root_uri = root_uri
        self._on_tools_changed = on_tools_changed
        self._asking = asking
        self.changes = {"prompts": 0, "resources": 0}
        """How often the server said its prompts or resources changed (`list_changed`):
        the lists cached by `prompts.py` and `mentions.py` are read again when it moves."""
        super().__init__(
            read,
            write,
            client_info=CLIENT_INFO,
            list_roots_callback=self._list_roots,
            message_handler=self._handle_message,
            elicitation_callback=self._elicit,
            sampling_callback=self._sample,
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

    async def _elicit(
        self, context: RequestContext[ClientSession, Any], params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        del context
        if isinstance(params, types.ElicitRequestURLParams):
            message, url = params.message, params.url
            return await self._ask(
                lambda asks: asks.elicit_url(message, url), types.ElicitResult.model_validate
            )
        return await self._ask(
            lambda asks: asks.elicit(params.message, dict(params.requestedSchema)),
            types.ElicitResult.model_validate,
        )

    async def _sample(
        self, context: RequestContext[ClientSession, Any], params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        del context
        ask = SamplingAsk(
            messages=[{"role": m.role, "text": _words(m.content)} for m in params.messages],
            system_prompt=params.systemPrompt,
            max_tokens=params.maxTokens,
        )
        return await self._ask(
            lambda asks: asks.sample(ask),
            lambda sampled: types.CreateMessageResult(
                role="assistant",
                content=types.TextContent(type="text", text=sampled.text),
                model=sampled.model,
                stopReason="endTurn",
            ),
        )

    async def _ask(
        self, ask: Callable[[CallAsks], Awaitable[A]], result: Callable[[A], R]
    ) -> R | types.ErrorData:
        """The server's question put to the call it belongs to, or an error for the server."""
        asking = self._asking()
        if len(asking) != 1:  # the request carries no id of the call it belongs to
            return _error(NO_CALL if not asking else MANY_CALLS)
        (asks,) = asking
        try:
            return result(await ask(asks))
        except QuestionPending as exc:
            await asks.wait_released()  # the server hears the cancel before this error
            return _error(str(exc))
        except Refused as exc:
            return _error(str(exc))

    async def _handle_message(
        self,
        message: RequestResponder[types.ServerRequest, types.ClientResult]
        | types.ServerNotification
        | Exception,
    ) -> None:
        if not isinstance(message, types.ServerNotification):
            return
        if isinstance(message.root, types.ToolListChangedNotification):
            await self._on_tools_changed()
        elif isinstance(message.root, types.PromptListChangedNotification):
            self.changes["prompts"] += 1
        elif isinstance(message.root, types.ResourceListChangedNotification):
            self.changes["resources"] += 1


def _error(message: str) -> types.ErrorData:
    return types.ErrorData(code=types.INVALID_REQUEST, message=message)


def _words(content: Any) -> str:
    """A sampling message's content as text; other kinds named in words."""
    blocks = content if isinstance(content, list) else [content]
    return " ".join(
        b.text if isinstance(b, types.TextContent) else f"[{getattr(b, 'type', 'content')}]"
        for b in blocks
    )


def _given_up(exc: BaseException) -> bool:
    """Whether `exc` means DuckLM stopped waiting, not that the server answered."""
    return isinstance(exc, TimeoutError | anyio.get_cancelled_exc_class())
