"""DuckLM's tables on both backends: the stores, and what two processes must not break.

Two `open_database` calls on one location stand for two processes: each has its own
connection (SQLite) or pool (PostgreSQL), so only the database's own guarantees keep
them apart, never an in-process lock.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from ducklm.cli.doctor import run_checks
from ducklm.config.settings import Settings
from ducklm.runtime.audit_buffer import AuditBuffer
from ducklm.runtime.facade import DuckLM
from ducklm.stores import (
    ApprovalRules,
    AuditLog,
    CommandIntents,
    Conversations,
    Database,
    Runs,
    Tasks,
    ThreadRunning,
    open_database,
)
from ducklm.stores.experience import ExperienceLog, ExperienceRecord
from ducklm.stores.prune import PrunePolicy, prune_configured
from tests.support.postgres import on_backend
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served

QUIET = {"critic": False, "memory": False}


@pytest.fixture
def settings(settings: Settings, database_url: str | None) -> Settings:
    """Every test here on SQLite, then on PostgreSQL."""
    return on_backend(settings, database_url)


@pytest.fixture
async def db(settings: Settings) -> AsyncIterator[Database]:
    """DuckLM's tables on the test's backend."""
    await asyncio.to_thread(settings.data_dir.mkdir, parents=True)
    async with open_database(settings.database_location) as opened:
        yield opened


@pytest.fixture
async def other(settings: Settings, db: Database) -> AsyncIterator[Database]:
    """A second opening of the same tables, as another process has."""
    async with open_database(settings.database_location) as opened:
        yield opened


async def test_conversations_tasks_and_runs_round_trip(db: Database) -> None:
    conversations, tasks = Conversations(db), Tasks(db)
    created = await conversations.create("c1", title="First")
    assert (await conversations.create("c1", title="ignored")).title == created.title
    await conversations.touch("c1", "a later message", "/w")
    found = await conversations.get("c1")
    assert found is not None and (found.title, found.workspace) == ("First", "/w")
    assert await conversations.rename("c1", "Renamed")
    assert not await conversations.rename("nope", "x")
    for n in range(3):
        await tasks.start(f"t{n}", "c1", f"message {n}")
    await tasks.set_status("t2", "completed", answer="done")
    latest = await tasks.latest("c1")
    assert latest is not None and (latest.task_id, latest.answer) == ("t2", "done")
    assert [t.task_id for t in await tasks.list("c1")] == ["t2", "t1", "t0"]
    assert {t.task_id for t in await tasks.open_tasks()} == {"t0", "t1"}
    runs = Runs(db)
    await runs.start("r1", "c1", "t0")
    await runs.finish("r1", "completed", answer="hi")
    (run,) = await runs.for_thread("c1")
    assert (run.status, run.answer, run.task_id) == ("completed", "hi", "t0")
    assert await conversations.delete("c1")
    assert await tasks.list("c1") == [] and await runs.for_thread("c1") == []


async def test_rules_intents_and_experience(db: Database) -> None:
    rules = ApprovalRules(db)
    first = await rules.add("shell", "ls", "list")
    assert (await rules.add("shell", "ls")).id == first.id
    assert [r.pattern for r in await rules.list()] == ["ls"]
    assert await rules.revoke(first.id) and not await rules.revoke(first.id)
    intents = CommandIntents(db)
    assert await intents.begin("call-1", "c1", "ls")
    assert not await intents.begin("call-1", "c1", "ls")
    await intents.finish("call-1", 0)
    intent = await intents.get("call-1")
    assert intent is not None and intent.exit_code == 0
    log = ExperienceLog(db)
    stored = await log.add(ExperienceRecord("", "c1", None, 0.5, "ok", ["a"], [], "lesson"))
    (back,) = await log.list(thread_id="c1")
    assert back == stored and isinstance(back.created_at, float)


async def test_a_failed_transaction_leaves_nothing(db: Database) -> None:
    tasks = Tasks(db)
    with pytest.raises(RuntimeError):
        async with db.transaction():
            await tasks.start("t1", "c1", "hello")
            raise RuntimeError("boom")
    assert await tasks.get("t1") is None


async def test_one_running_run_per_thread_across_processes(db: Database, other: Database) -> None:
    await Runs(db).start("r1", "c1", "t1")
    with pytest.raises(ThreadRunning):
        await Runs(other).start("r2", "c1", "t1")
    await Runs(other).start("r3", "c2", "t2")  # another thread is free
    await Runs(db).finish("r1", "completed")
    await Runs(other).start("r2", "c1", "t1")  # free again once the first ended
    assert [r.run_id for r in await Runs(db).for_thread("c1")] == ["r1", "r2"]


async def test_a_cancel_is_asked_of_the_running_run_only(db: Database, other: Database) -> None:
    await Runs(db).start("r1", "c1", "t1")
    await Runs(db).start("r0", "c0", "t0")
    assert await Runs(other).to_stop(["r1", "r0"]) == []
    assert await Runs(other).request_cancel("t1") is True
    assert await Runs(db).to_stop(["r1", "r0"]) == [("r1", False)]
    await Runs(db).finish("r1", "cancelled")
    assert await Runs(db).to_stop(["r1"]) == []  # ended: nothing left to do
    assert await Runs(other).request_cancel("t1") is False
    assert await Runs(other).request_cancel("no-such-task") is False


async def test_two_writers_never_share_an_event_number(db: Database, other: Database) -> None:
    async def write(store: AuditLog, n: int) -> int:
        return await store.append("c1", None, {"type": "note", "n": n})

    seqs = await asyncio.gather(*(write(AuditLog(db if n % 2 else other), n) for n in range(60)))
    assert sorted(seqs) == list(range(1, 61))
    stored = await AuditLog(db).list("c1")
    assert [e.seq for e in stored] == list(range(1, 61))
    assert sorted(e.data["n"] for e in stored) == list(range(60))


async def test_a_runs_buffered_events_follow_its_first_in_order(db: Database) -> None:
    audit = AuditLog(db)
    first = await audit.append("c1", "r1", {"type": "run_started"})
    buffer = AuditBuffer(audit, "c1", "r1")
    buffer.start_after(first)
    numbers = [buffer.add({"type": "note", "n": n}) for n in range(5)]
    assert numbers == list(range(first + 1, first + 6))
    assert [e.seq for e in await audit.list("c1")] == [first]  # written behind the run
    await buffer.flush()
    stored = await audit.list("c1")
    assert [e.seq for e in stored] == list(range(first, first + 6))
    assert [e.data.get("n") for e in stored[1:]] == list(range(5))
    assert {e.run_id for e in stored} == {"r1"}


async def test_buffered_events_are_written_without_a_flush(db: Database) -> None:
    buffer = AuditBuffer(AuditLog(db), "c1", "r1")
    buffer.add({"type": "note"})
    for _ in range(200):  # written FLUSH_DELAY_S later by a task of its own
        if await AuditLog(db).list("c1"):
            break
        await asyncio.sleep(0.01)
    assert [e.seq for e in await AuditLog(db).list("c1")] == [1]


async def test_a_taken_event_number_renumbers_and_loses_nothing(
    db: Database, other: Database
) -> None:
    buffer = AuditBuffer(AuditLog(db), "c1", "r1")
    buffer.add({"type": "note", "n": 0})
    buffer.add({"type": "note", "n": 1})
    # A writer that ignored the running run took number 1 meanwhile.
    await AuditLog(other).append("c1", None, {"type": "intruder"})
    await buffer.flush()
    stored = await AuditLog(db).list("c1")
    assert [e.seq for e in stored] == [1, 2, 3]
    assert [e.data["type"] for e in stored] == ["intruder", "note", "note"]
    assert [e.data.get("n") for e in stored[1:]] == [0, 1]


async def test_a_postgres_restart_fails_no_statement(db: Database, other: Database) -> None:
    if db.dialect != "postgres":
        pytest.skip("an SQLite file has no server to restart")
    await Conversations(db).create("c1", title="before")
    # Every connection of `db`'s pool dies, as in a restart of PostgreSQL.
    await other.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE usename = current_user AND pid <> pg_backend_pid()"
    )
    found = await Conversations(db).get("c1")
    assert found is not None and found.title == "before"


async def test_doctor_names_the_database(duck: DuckLM, settings: Settings) -> None:
    (check,) = [c for c in await run_checks(duck) if c.name == "database"]
    assert check.ok, check
    assert check.detail.startswith("PostgreSQL " if settings.database_url else "SQLite file ")
    assert "MB" in check.detail


async def test_size_is_reported(db: Database) -> None:
    assert await db.size() > 0


async def test_fifty_concurrent_conversations_lose_nothing(
    served: Served, llm: ScriptedLLM
) -> None:
    llm.set_default(reply("done"))

    async def chat(n: int) -> dict[str, Any]:
        body = {"message": f"message {n}", "conversation_id": f"conv-{n}", **QUIET}
        response = await served.client.post("/v1/chat", json=body, timeout=120)
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    results = await asyncio.gather(*(chat(n) for n in range(50)))
    assert [r["status"] for r in results] == ["completed"] * 50
    listed = (await served.client.get("/v1/conversations")).json()
    assert {c["id"] for c in listed} == {f"conv-{n}" for n in range(50)}
    for n, result in enumerate(results):
        conversation = (await served.client.get(f"/v1/conversations/conv-{n}")).json()
        assert [m["content"] for m in conversation["messages"]] == [f"message {n}", "done"]
        events = (await served.client.get(f"/v1/tasks/{result['task_id']}/events")).json()
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))


async def test_prune_keeps_every_message(duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.set_default(reply("ok"))
    for n in range(3):
        await duck.run(f"turn {n}", thread_id="t1", critic=False, memory=False)
    # A replay forks the last turn: the old branch is what a young thread may lose.
    [_ async for _ in duck.replay("t1", critic=False, memory=False)]
    before = [m.text for m in await duck.messages("t1")]
    report = await prune_configured(duck.settings, PrunePolicy(keep_last=1))
    assert 0 < report.deleted < report.checkpoints
    assert report.size_before > 0 and report.size_after > 0
    assert [m.text for m in await duck.messages("t1")] == before
    again = await duck.run("turn 3", thread_id="t1", critic=False, memory=False)
    assert again.status == "completed"
    assert [m.text for m in await duck.messages("t1")] == [*before, "turn 3", "ok"]
