"""Webhooks of Agent Protocol runs: delivered to a real loopback receiver, or refused.

DuckLM's real server on its scripted model; the receiver is a real HTTP server on
loopback (`tests/support/webhook_receiver.py`). What each delivery did is read back from
the door's record (`ap_webhooks`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from langgraph_sdk.client import LangGraphClient

from ducklm.server.agent_protocol.webhooks import delivery
from ducklm.stores.agent_protocol.webhooks import Delivery
from tests.support.agent_runs import QUIET, door_of, new_thread, prompt
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served
from tests.support.webhook_receiver import Receiver, webhook_receiver


@pytest.fixture
def elsewhere() -> Iterator[Receiver]:
    """A second receiver: another host, as far as a redirect is concerned."""
    with webhook_receiver() as running:
        yield running


async def recorded(served: Served, run_id: str) -> Delivery:
    """The one recorded delivery of `run_id`'s webhook, once it is recorded."""
    for _ in range(500):
        found = await door_of(served).webhooks.deliveries(run_id)
        if found:
            [only] = found
            return only
        await asyncio.sleep(0.02)
    raise AssertionError(f"no delivery recorded for run {run_id}")


async def test_a_finished_run_is_posted_to_its_webhook(
    client: LangGraphClient, served: Served, llm: ScriptedLLM, receiver: Receiver
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply("Delivered."))
    run = await client.runs.create(
        thread_id, "ducklm", input=prompt(), context=QUIET, webhook=f"{receiver.url}/hook"
    )
    await client.runs.join(thread_id, run["run_id"])

    [got] = await receiver.wait_for(1)
    assert got.path == "/hook"
    assert (got.body["run_id"], got.body["thread_id"]) == (run["run_id"], thread_id)
    assert got.body["status"] == "success"
    assert got.body["values"]["final"] == "Delivered."
    assert got.body["kwargs"]["webhook"] == f"{receiver.url}/hook"
    assert {"run_started_at", "run_ended_at", "webhook_sent_at"} <= set(got.body)
    record = await recorded(served, run["run_id"])
    assert (record.outcome, record.attempts, record.status_code) == ("delivered", 1, 200)


async def test_a_webhook_outside_the_policy_is_refused(served: Served, llm: ScriptedLLM) -> None:
    thread = (await served.client.post("/threads", json={})).json()["thread_id"]
    body = {"assistant_id": "ducklm", "input": prompt(), "context": QUIET}
    for url, why in (
        ("http://example.com/hook", "neither loopback nor in DUCK_WEBHOOK_HOSTS"),
        ("https://example.com/hook", "neither loopback nor in DUCK_WEBHOOK_HOSTS"),
        ("ftp://127.0.0.1/hook", "only http and https"),
        ("/threads", "absolute http(s) URL"),
    ):
        refused = await served.client.post(f"/threads/{thread}/runs", json={**body, "webhook": url})
        assert refused.status_code == 422, url
        assert why in refused.json()["detail"], refused.json()
        stateless = await served.client.post("/runs/wait", json={**body, "webhook": url})
        assert stateless.status_code == 422, url
    # Nothing ran: no run was made, the model was never asked.
    assert (await served.client.get(f"/threads/{thread}/runs")).json() == []
    assert llm.requests == []


async def test_a_redirect_to_another_host_is_not_followed(
    client: LangGraphClient,
    served: Served,
    llm: ScriptedLLM,
    receiver: Receiver,
    elsewhere: Receiver,
) -> None:
    port = elsewhere.url.rsplit(":", 1)[1]
    receiver.answer("/hook", 307, Location=f"http://localhost:{port}/stolen")
    llm.script(reply("Redirected."))
    result = await client.runs.wait(
        None, "ducklm", input=prompt(), context=QUIET, webhook=f"{receiver.url}/hook"
    )
    assert isinstance(result, dict)
    assert result["final"] == "Redirected."
    [got] = await receiver.wait_for(1)
    record = await recorded(served, got.body["run_id"])
    assert elsewhere.received == []
    assert (record.outcome, record.status_code) == ("failed", 307)
    assert "not followed" in (record.error or "")


async def test_a_failing_receiver_is_tried_a_few_times_then_recorded(
    client: LangGraphClient,
    served: Served,
    llm: ScriptedLLM,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(delivery, "BACKOFF_S", (0.01, 0.01))
    receiver.answer("/down", 503)
    thread_id = await new_thread(client)
    llm.script(reply("Nobody listens."))
    run = await client.runs.create(
        thread_id, "ducklm", input=prompt(), context=QUIET, webhook=f"{receiver.url}/down"
    )
    await client.runs.join(thread_id, run["run_id"])
    record = await recorded(served, run["run_id"])
    assert (record.outcome, record.attempts, record.status_code) == ("failed", 3, 503)
    assert len(receiver.received) == delivery.ATTEMPTS
