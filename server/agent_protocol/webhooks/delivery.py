"""Sending a run's outcome to its webhook once the run ends, and recording what happened.

One POST of the outcome (JSON), tried `ATTEMPTS` times at most: again only when the
receiver could not be reached or answered 5xx/429, after `BACKOFF_S`. A redirect is
followed only to the same scheme, host and port (307/308, which keep the POST), at most
`MAX_REDIRECTS` times; any other is a failure. No proxy from the environment is used.
Every delivery is recorded in `ap_webhooks` (`ducklm/stores/agent_protocol/webhooks.py`:
delivered or failed, attempts, the last status or error) and a failure is logged; nothing
is ever tried again after that.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from ducklm.server.agent_protocol.webhooks.policy import same_origin
from ducklm.stores import Database
from ducklm.stores.agent_protocol.webhooks import Delivery, WebhookLog

log = logging.getLogger(__name__)

ATTEMPTS = 3
BACKOFF_S = (1.0, 5.0)
TIMEOUT_S = 10.0
MAX_REDIRECTS = 3
KEPT_REDIRECTS = frozenset({307, 308})
CLOSE_WAIT_S = 2.0

Outcome = Callable[[], Awaitable[dict[str, Any]]]
"""Builds the body to send, once the run has ended."""


class _Failed(Exception):
    """One attempt that did not deliver; `again`: worth another attempt."""

    def __init__(self, why: str, *, again: bool, status_code: int | None = None) -> None:
        super().__init__(why)
        self.again = again
        self.status_code = status_code


class Webhooks:
    """Deliveries of the door's runs' webhooks: started at a run's start, sent at its end."""

    def __init__(self, deliveries: WebhookLog, client: httpx.AsyncClient) -> None:
        self._deliveries = deliveries
        self._client = client
        self._pending: set[asyncio.Task[None]] = set()

    @classmethod
    async def open(cls, db: Database) -> Webhooks:
        """Deliveries recorded on `db` (their table created if missing)."""
        deliveries = await WebhookLog.open(db)
        # The client loads its TLS context from files: not on the loop.
        client = await asyncio.to_thread(
            httpx.AsyncClient, timeout=TIMEOUT_S, follow_redirects=False, trust_env=False
        )
        return cls(deliveries, client)

    def send_after(self, run_id: str, url: str, ended: asyncio.Event, outcome: Outcome) -> None:
        """POST `outcome()` to `url` once `ended` is set (in the background)."""
        task = asyncio.create_task(
            self._deliver_after(run_id, url, ended, outcome), name=f"ducklm-webhook-{run_id}"
        )
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def deliveries(self, run_id: str) -> list[Delivery]:
        """The recorded deliveries of `run_id`'s webhook."""
        return await self._deliveries.deliveries(run_id)

    async def close(self) -> None:
        """Give deliveries under way `CLOSE_WAIT_S`, cancel the rest, close the client."""
        if self._pending:
            _, left = await asyncio.wait(set(self._pending), timeout=CLOSE_WAIT_S)
            for task in left:
                task.cancel()
            await asyncio.gather(*left, return_exceptions=True)
        await self._client.aclose()

    async def _deliver_after(
        self, run_id: str, url: str, ended: asyncio.Event, outcome: Outcome
    ) -> None:
        await ended.wait()
        try:
            body = await outcome()
        except Exception:
            log.exception("webhook of run %s: its outcome could not be read", run_id)
            await self._deliveries.record(
                Delivery(run_id, url, "failed", 0, None, "no outcome", time.time())
            )
            return
        await self._deliveries.record(await self._post(run_id, url, body))

    async def _post(self, run_id: str, url: str, body: dict[str, Any]) -> Delivery:
        for attempt in range(1, ATTEMPTS + 1):
            try:
                status = await self._post_once(url, body)
                return Delivery(run_id, url, "delivered", attempt, status, None, time.time())
            except _Failed as failed:
                last = failed
            if not last.again or attempt == ATTEMPTS:
                break
            await asyncio.sleep(BACKOFF_S[min(attempt, len(BACKOFF_S)) - 1])
        log.warning("webhook of run %s to %s not delivered: %s", run_id, url, last)
        return Delivery(run_id, url, "failed", attempt, last.status_code, str(last), time.time())

    async def _post_once(self, url: str, body: dict[str, Any]) -> int:
        target = url
        for _ in range(MAX_REDIRECTS + 1):
            try:
                response = await self._client.post(target, json=body)
            except httpx.HTTPError as exc:
                raise _Failed(f"{type(exc).__name__} reaching {target}", again=True) from None
            if not response.is_redirect:
                return _accepted(response)
            location = str(response.url.join(response.headers.get("location", "")))
            if response.status_code not in KEPT_REDIRECTS or not same_origin(url, location):
                why = f"redirected ({response.status_code}) to {location}: not followed"
                raise _Failed(why, again=False, status_code=response.status_code)
            target = location
        raise _Failed(f"more than {MAX_REDIRECTS} redirects", again=False)


def _accepted(response: httpx.Response) -> int:
    """The status of a 2xx answer; a 4xx fails for good, a 5xx or 429 may be tried again."""
    status = response.status_code
    if 200 <= status < 300:
        return status
    again = status >= 500 or status == 429
    raise _Failed(f"the receiver answered {status}", again=again, status_code=status)
