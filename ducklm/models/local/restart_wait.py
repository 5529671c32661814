"""A model call to the local server that DuckLM is restarting waits for it, then goes on.

`ducklm serve` restarts its local model server a few seconds after a crash
(`ducklm.models.local.keeper`). A model call whose connection is refused meanwhile would
fail the turn, although the server is about to answer again: this transport, under the
model clients' HTTP client, waits for the restart instead (at most the watch's
`restart_wait_s`) and sends the request again. Only a refused connection waits: nothing
of the request reached the server, so sending it again cannot do anything twice. A
request cut off by the crash itself is the nodes' `RetryPolicy`'s to repeat; its retry
then finds the connection refused, and waits here.

The run hears of it as `model_restarting` and `model_restarted` events, which the web
chat shows as "restarting the model server".
"""

from __future__ import annotations

import logging
import time
from typing import Any

import httpx
from langgraph.runtime import get_runtime

from ducklm.kit.events import EventType, emit
from ducklm.models.local.state import LOCAL_SERVERS, LocalServers, ServerWatch

log = logging.getLogger(__name__)


class RestartWaitingTransport(httpx.AsyncBaseTransport):
    """An HTTP transport whose refused connections to a restarting local server wait."""

    def __init__(
        self, inner: httpx.AsyncBaseTransport, servers: LocalServers = LOCAL_SERVERS
    ) -> None:
        """Send requests through `inner`; wait on the kept servers of `servers`."""
        self._inner = inner
        self._servers = servers

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request`; when a kept server refuses it while restarting, wait and send again."""
        try:
            return await self._inner.handle_async_request(request)
        except httpx.ConnectError:
            watch = self._servers.find(str(request.url))
            if watch is None or not await wait_for_restart(watch):
                raise
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        """Close the inner transport's connections."""
        await self._inner.aclose()


async def wait_for_restart(watch: ServerWatch) -> bool:
    """Wait for the kept server of `watch` to be up again; whether it is (within the bound).

    A server that is gone but still `up` is one the keeper has not seen end yet: give it
    `notice_s` to say `restarting`.
    """
    if watch.state.status == "up" and not await watch.changes_within(watch.notice_s):
        return False  # it refuses, yet runs as far as the keeper knows: not a restart
    state = watch.state
    if state.status != "restarting" or watch.outlasted:
        return state.status == "up"
    began = time.monotonic()
    why = state.cause()
    _announce("model_restarting", message=RESTARTING, why=why, wait_s=watch.restart_wait_s)
    back = await watch.back_up(watch.restart_wait_s)
    waited = round(time.monotonic() - began, 1)
    if back:
        _announce("model_restarted", message=RESTARTED.format(waited=waited), waited_s=waited)
    else:
        log.warning("the model server at %s was not back within %.0f s", watch.url, waited)
    return back


RESTARTING = "restarting the model server"
RESTARTED = "the model server is back (after {waited:g} s)"


def _announce(type_: EventType, **data: Any) -> None:
    """Tell the run this model call belongs to, if any (a call outside a graph has none)."""
    try:
        runtime = get_runtime()
    except RuntimeError:
        return
    emit(runtime, type_, **data)
