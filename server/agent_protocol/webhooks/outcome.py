"""What a webhook receives: the run as `GET .../runs/{id}` shows it, and how it ended.

As the LangGraph server sends it (`langgraph_api/webhook.py`): the `Run`, its final
`status`, `run_started_at`, `run_ended_at`, `webhook_sent_at` and the thread's `values`
(the run's last `values` chunk; else the thread's state, when the thread is still
there); a failed run adds `error` (`{"error", "message"}`, a message for people).
"""

from __future__ import annotations

import json
import time
from typing import Any

from ducklm.kit.events import Event
from ducklm.runtime.facade import DuckLM
from ducklm.server.agent_protocol.common.views import iso_time
from ducklm.server.agent_protocol.common.wire import dumps
from ducklm.server.agent_protocol.runs.views import BY_DUCK_STATUS, run_view
from ducklm.server.agent_protocol.streaming.events import FAILED
from ducklm.server.tasks import Chunk, LiveTask
from ducklm.stores.agent_protocol.runs import RunRow


async def run_outcome(
    row: RunRow, live: LiveTask, duck: DuckLM, started_at: float
) -> dict[str, Any]:
    """The webhook body of the run `row` that `live` ran, once it has ended."""
    done = _last(live.events, "done")
    status = BY_DUCK_STATUS.get(str(done.get("status")) if done else "failed", "error")
    body: dict[str, Any] = {
        **run_view(row, None),
        "status": status,
        "run_started_at": iso_time(started_at),
        # Read as soon as the run has ended: its end, to the delivery's precision.
        "run_ended_at": iso_time(time.time()),
        "webhook_sent_at": iso_time(time.time()),
        "values": await _values(live, duck),
    }
    failure = _last(live.events, "error")
    if status == "error" and failure is not None:
        body["error"] = {"error": FAILED, "message": failure.get("message", "")}
    return body


def _last(events: list[Event], kind: str) -> Event | None:
    return next((item for item in reversed(events) if item.get("type") == kind), None)


async def _values(live: LiveTask, duck: DuckLM) -> Any:
    chunks = [c for c in live.wire or () if isinstance(c, Chunk) and c.mode == "values"]
    if chunks:
        return json.loads(dumps(chunks[-1].data))
    if await duck.conversations.get(live.thread_id) is None:
        return None  # a thread-less run's thread, gone with its end
    snapshot = await duck.states.snapshot(live.thread_id)
    return json.loads(dumps(snapshot.values))
