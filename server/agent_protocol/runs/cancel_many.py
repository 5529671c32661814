"""`POST /runs/cancel`: several runs cancelled at once (langgraph-sdk `runs.cancel_many`).

As the LangGraph server takes it (`langgraph_api/api/runs.py`): the runs `run_ids` of
`thread_id`, or every run of a `status` (`pending`, `running`, or `all` of both) on any
thread; `action` (`interrupt` or `rollback`) as for one run (`runs/cancel.py`). DuckLM
also takes `thread_id` alone: every pending or running run of that thread. `204` once
they are cancelled; `404` when none of the runs named is pending or running; `422` for
a status beside a thread or ids, or neither.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Response

from ducklm.server.agent_protocol.common.deps import DoorDep, DuckDep, HubDep
from ducklm.server.agent_protocol.common.schemas import RunsCancel
from ducklm.server.agent_protocol.runs.cancel import (
    ACTIVE,
    NOTHING_TO_CANCEL,
    CancelAction,
    cancel_found,
)
from ducklm.server.agent_protocol.runs.lookup import FoundRun, thread_runs
from ducklm.server.agent_protocol.runs.views import run_status
from ducklm.server.responses import errors

router = APIRouter()


@router.post("/runs/cancel", status_code=204, responses=errors(404, 422))
async def cancel_runs(
    body: RunsCancel,
    *,
    duck: DuckDep,
    door: DoorDep,
    hub: HubDep,
    action: Annotated[str, Query()] = "interrupt",
) -> Response:
    """Cancel the runs named, or every run of a status: `interrupt` or `rollback` each."""
    how: CancelAction = "rollback" if action == "rollback" else "interrupt"
    wanted = ACTIVE if body.status in (None, "all") else frozenset({body.status})
    chosen = [f for f in await _named(body, duck, door) if _status(f) in wanted]
    if not chosen:
        raise HTTPException(404, NOTHING_TO_CANCEL)
    for found in chosen:
        await cancel_found(found, how, duck=duck, hub=hub, door=door)
    return Response(status_code=204)


async def _named(body: RunsCancel, duck: DuckDep, door: DoorDep) -> list[FoundRun]:
    """The runs the body names: of its thread (those of `run_ids`), or of every active thread."""
    threads = [body.thread_id] if body.thread_id else await door.runs.active_threads()
    found = [f for thread_id in threads for f in await thread_runs(thread_id, duck, door)]
    if body.run_ids is not None:
        found = [f for f in found if f.run_id in set(body.run_ids)]
    return found


def _status(found: FoundRun) -> str:
    return run_status(found.row, found.record)
