"""DuckLM's side of an MCP session: who it says it is, its roots, the server's questions.

Imported only when a server starts (it needs the `mcp` SDK, about 1 s of imports).
The SDK's `ClientSession` introduces itself as `mcp` and offers no roots; `DuckSession`
fixes both. (A request DuckLM gives up on, by a timeout, Stop or a cancelled task, is
told to the server by the SDK itself: its dispatcher sends `notifications/cancelled`,
shielded, on every abandon.) It takes the server's questions to the call's `CallAsks`
(`asks.py`): at 2025-11-25 as requests during the call (`elicitation/create` in form
and URL mode, `sampling/createMessage`), which wait, the call held open, for the
person's answer (`held.py`), at 2026-07-28 as the `input_requests` of an
`input_required` result (`answer_input`, driven by `tools.py`). Given the callbacks,
the SDK advertises `elicitation: {form, url}` and `sampling`. It counts the server's
`list_changed` notices for prompts and resources (`changes`); at 2026-07-28, where those
notices need a subscription DuckLM does not hold, a list is kept as long as the server's
`ttlMs` says (`fresh_until`, 0 by default: read again each time).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import math
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from mcp import ClientSession, types
from mcp.client._probe import negotiate_auto
from mcp.client.session import ClientRequestContext
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import FileUrl

from ducklm.mcp.asks import (
    MANY_CALLS,
    NO_CALL,
    CallAsks,
    QuestionPending,
    Refused,
    SamplingAsk,
)

log = logging.getLogger(__name__)
R = TypeVar("R")
L = TypeVar("L")


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
    """A `ClientSession` with DuckLM's name and root, whose questions go to the call."""

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
        self.fresh_until = {"prompts": math.inf, "resources": math.inf}
        """Until when (the loop's clock) a list read last may be kept (2026-07-28's TTL)."""
        super().__init__(
            read,
            write,
            client_info=CLIENT_INFO,
            list_roots_callback=self._list_roots,
            message_handler=self._handle_message,
            elicitation_callback=self._elicit,
            sampling_callback=self._sample,
        )

    async def negotiate(self) -> None:
        """Agree on a revision: 2026-07-28 by `server/discover`, else the 2025-11-25 handshake.

        The SDK's `auto` policy: anything that is not positive evidence of a 2026-07-28
        server (an error, no shared revision) falls back to `initialize`; a transport
        failure is raised as it is.
        """
        await negotiate_auto(self)

    async def list_prompts(
        self, *, params: types.PaginatedRequestParams | None = None
    ) -> types.ListPromptsResult:
        """`prompts/list`, its TTL noted (`fresh_until`)."""
        return self._kept("prompts", await super().list_prompts(params=params))

    async def list_resources(
        self, *, params: types.PaginatedRequestParams | None = None
    ) -> types.ListResourcesResult:
        """`resources/list`, its TTL noted (`fresh_until`)."""
        return self._kept("resources", await super().list_resources(params=params))

    def _kept(self, kind: str, result: L) -> L:
        if self.protocol_version in MODERN_PROTOCOL_VERSIONS:
            ttl_s = (getattr(result, "ttl_ms", 0) or 0) / 1000
            self.fresh_until[kind] = asyncio.get_running_loop().time() + ttl_s
        return result

    async def answer_input(
        self, asks: CallAsks | None, request: types.InputRequest
    ) -> types.InputResponse:
        """The answer to one of an `input_required` result's requests (2026-07-28).

        The roots need nobody; a question needs the call's `asks`.

        Raises:
            QuestionPending: No answer in hand fits: the turn is to stop and ask.
            Refused: DuckLM will not answer it (a declined sampling, a bad link, no call
                that takes questions).
        """
        if isinstance(request, types.ListRootsRequest):
            return self._roots()
        if asks is None:
            raise Refused(NO_CALL)
        if isinstance(request, types.ElicitRequest):
            return await self._elicited(asks, request.params)
        return await self._sampled(asks, request.params)

    async def _list_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        del context
        return self._roots()

    def _roots(self) -> types.ListRootsResult:
        root = types.Root(uri=FileUrl(self._root_uri), name="workspace")
        return types.ListRootsResult(roots=[root])

    async def _elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        del context
        return await self._ask(lambda asks: self._elicited(asks, params, hold=True))

    async def _sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        del context
        return await self._ask(lambda asks: self._sampled(asks, params, hold=True))

    @staticmethod
    async def _elicited(
        asks: CallAsks, params: types.ElicitRequestParams, *, hold: bool = False
    ) -> types.ElicitResult:
        """`hold`: asked inside the call (2025-11-25), which may wait open for the person."""
        if isinstance(params, types.ElicitRequestURLParams):
            answer = await asks.elicit_url(params.message, params.url, hold=hold)
        else:
            answer = await asks.elicit(params.message, dict(params.requested_schema), hold=hold)
        return types.ElicitResult.model_validate(answer)

    @staticmethod
    async def _sampled(
        asks: CallAsks, params: types.CreateMessageRequestParams, *, hold: bool = False
    ) -> types.CreateMessageResult:
        ask = SamplingAsk(
            messages=[{"role": m.role, "text": _words(m.content)} for m in params.messages],
            system_prompt=params.system_prompt,
            max_tokens=params.max_tokens,
        )
        sampled = await asks.sample(ask, hold=hold)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=sampled.text),
            model=sampled.model,
            stop_reason="endTurn",
        )

    async def _ask(self, answer: Callable[[CallAsks], Awaitable[R]]) -> R | types.ErrorData:
        """The server's question put to the call it belongs to, or an error for the server."""
        asking = self._asking()
        if len(asking) != 1:  # the request carries no id of the call it belongs to
            return _error(NO_CALL if not asking else MANY_CALLS)
        (asks,) = asking
        try:
            return await answer(asks)
        except QuestionPending as exc:
            await asks.wait_released()  # the server hears the cancel before this error
            return _error(str(exc))
        except Refused as exc:
            return _error(str(exc))

    async def _handle_message(self, message: types.ServerNotification | Exception) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            await self._on_tools_changed()
        elif isinstance(message, types.PromptListChangedNotification):
            self.changes["prompts"] += 1
        elif isinstance(message, types.ResourceListChangedNotification):
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
