"""A worker that stalled past its lease stops the run another worker took over.

On PostgreSQL a worker's runs are leased (`ducklm.stores.leases`); a worker whose event
loop stalls for three heartbeats has its runs taken over by another worker's reaper,
which goes on with the task. When the stalled worker comes back it must not run the
run beside it: its cancel watch finds the run lost and stops it, and none of its end
(the run's status, the task's, a `done` in the audit) is written over the new owner's.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from ducklm.config.settings import Settings
from ducklm.runtime.reaper import LEASE_LOST, take_over
from ducklm.stores import RunStores
from ducklm.stores.backend import open_database
from ducklm.stores.owner import ProcessOwner
from tests.support.postgres import fresh_schema, on_backend, require_postgres
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import serve, stream

pytestmark = pytest.mark.slow

QUIET = {"critic": False, "memory": False}


@pytest.fixture
async def url() -> AsyncIterator[str]:
    """A fresh schema on the test server."""
    async with fresh_schema(require_postgres()) as fresh:
        yield fresh


async def test_a_run_taken_over_elsewhere_stops_here_and_writes_none_of_its_end(
    settings: Settings, llm: ScriptedLLM, url: str
) -> None:
    llm.script(reply("too late", delay_s=60))
    body = {"message": "take your time", "conversation_id": "stalled", **QUIET}
    async with serve(on_backend(settings, url)) as served:
        chat = asyncio.create_task(stream(served, "/v1/chat/stream", body))
        for _ in range(400):
            if llm.requests:
                break
            await asyncio.sleep(0.05)
        assert llm.requests, "the run never asked the model"

        # What another worker's reaper does once this worker's lease has expired (as
        # after three heartbeats of a stalled event loop): here the lease ends at once.
        owner = await asyncio.to_thread(ProcessOwner.current)
        async with open_database(url) as db:
            await db.execute("UPDATE runs SET lease_until = 0 WHERE thread_id = 'stalled'")
            taken = await take_over(RunStores.on(db, owner), 10)
            assert [run.thread_id for run, _ in taken] == ["stalled"]
            (run, _), task_id = taken[0], taken[0][0].task_id

            events = await asyncio.wait_for(chat, 10)  # stopped, not left to run on
            assert events[-1]["type"] == "done", events[-1]
            assert (events[-1]["status"], events[-1]["reason"]) == ("interrupted", LEASE_LOST)

            stores = RunStores.on(db, owner)
            record = await stores.runs.get(run.run_id)
            assert record is not None and (record.status, record.error) == (
                "interrupted",
                LEASE_LOST,
            )
            task = await stores.tasks.get(task_id or "")
            assert task is not None and task.status == "interrupted"
            audit = await stores.audit.list("stalled")
            ends = [e.data for e in audit if e.data["type"] == "done"]
            assert ends == [], "the stalled worker wrote an end over the new owner's"
    assert len(llm.requests) == 1  # it did not go on asking the model
