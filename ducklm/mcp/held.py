"""Calls held open while the person answers their server's question (2025-11-25).

At 2025-11-25 a server asks during `tools/call` (an `elicitation/create` or
`sampling/createMessage` request) and waits for the answer inside that call. A person
is asked only by `interrupt()`, which ends the tool node; the node runs again from its
top when the answer comes. So the call does not belong to the node: `tools.py` starts
it as a task, and when its server asks something no answer in hand fits, the task is
handed here, still waiting, and the node's attempt ends with the question. The server
(`server.py:McpServer`, owned by the runtime) keeps it. When the person answers, the
node's next attempt at the same call finds it here by call id and question (`take`),
hands it the answer and waits for its result: the server sees one call.

A held call waits `asks.HOLD_S` at most (the card says so, `asks.HELD`): then its
question is answered with an error, the call is cancelled (`notifications/cancelled`)
and dropped, and the next attempt makes the call again with the answer in hand, as
after a restart, which loses every held call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ducklm.mcp.asks import LATE, CallAsks, same_question

Listener = Callable[[float, float | None, str | None], None]


@dataclass
class Progress:
    """A call's progress callback: pushes the idle deadline back, tells the listener.

    Retargeted when a held call is taken up by the node's next attempt (its deadlines
    and listener are that attempt's), and silent while the call is held.
    """

    idle_s: float
    deadline: float
    limit: asyncio.Timeout | None
    listener: Listener | None

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        """The SDK's progress callback."""
        if self.limit is not None:
            loop_time = asyncio.get_running_loop().time()
            self.limit.reschedule(min(loop_time + self.idle_s, self.deadline))
        if self.listener is not None:
            self.listener(progress, total, message)


@dataclass
class Held:
    """One call waiting, open, for the person's answer to its server's question."""

    running: asyncio.Future[Any]
    asks: CallAsks
    progress: Progress
    expiry: asyncio.TimerHandle | None = field(default=None, repr=False)


class HeldCalls:
    """A server's held calls, by DuckLM's call id.

    A held call is out of the server's `asking` (the calls in flight that take its
    questions), so that another call's question is not taken for its; it goes back in
    when taken up.
    """

    def __init__(self, asking: list[CallAsks]) -> None:
        self._calls: dict[str, Held] = {}
        self._asking = asking

    def __len__(self) -> int:
        return len(self._calls)

    def keep(self, held: Held, wait_s: float) -> None:
        """Hold `held` for `wait_s` at most; an earlier one of the same call is dropped."""
        self.drop(held.asks.call_id)
        held.progress.limit = held.progress.listener = None  # the node's attempt has ended
        if held.asks in self._asking:
            self._asking.remove(held.asks)
        loop = asyncio.get_running_loop()
        held.expiry = loop.call_later(wait_s, self.drop, held.asks.call_id)
        held.running.add_done_callback(_read_out)
        self._calls[held.asks.call_id] = held

    def take(self, asks: CallAsks) -> Held | None:
        """The call held for `asks`, given the answer to its question, or `None`.

        Found by call id; its question must be the one `asks` holds the last answer to
        (else it is a stale call, cancelled).
        """
        held = self._calls.pop(asks.call_id, None)
        if held is None:
            return None
        if held.expiry is not None:
            held.expiry.cancel()
        pending = held.asks.pending
        if held.running.done():  # it ended by itself meanwhile (the server went on, or died)
            held.asks.give_up()
            self._asking.append(held.asks)
            return held
        last = asks.answered[-1] if asks.answered else None
        if last is None or pending is None or not same_question(pending, last.question):
            _stop(held)
            return None
        self._asking.append(held.asks)  # before the answer: the server may ask again at once
        held.asks.deliver(last.answer)
        return held

    def drop(self, call_id: str) -> None:
        """Give up the call held for `call_id`, if any: its server is told."""
        held = self._calls.pop(call_id, None)
        if held is not None:
            if held.expiry is not None:
                held.expiry.cancel()
            _stop(held)

    def drop_all(self) -> None:
        """Give up every held call (the server stops)."""
        for call_id in list(self._calls):
            self.drop(call_id)


def _stop(held: Held) -> None:
    held.asks.give_up(LATE)
    held.running.cancel()  # the SDK sends `notifications/cancelled`


def _read_out(running: asyncio.Future[Any]) -> None:
    """Read a held call's end, so a failure nobody took up is not logged as unread."""
    if not running.cancelled():
        running.exception()
