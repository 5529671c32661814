"""Resumable streams: a client that loses a run's stream joins it again, missing nothing.

Through the official `langgraph-sdk`: a streamed run is left mid-answer, then joined
with `join_stream(..., last_event_id=...)`; what the two connections got together is,
event for event and id for id, the whole stream (replayed from the start afterwards).
"""

from __future__ import annotations

from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.schema import StreamPart

from tests.support.agent_runs import QUIET, collect, new_thread, prompt
from tests.support.scripted_llm import ScriptedLLM, reply

ANSWER = "One two three four five six seven eight."
MODES = ["values", "messages-tuple", "custom"]


async def first_tokens(client: LangGraphClient, thread_id: str) -> list[StreamPart]:
    """The run's stream up to its second token, where the client drops the connection."""
    parts: list[StreamPart] = []
    stream = client.runs.stream(
        thread_id, "ducklm", input=prompt(), stream_mode=MODES, stream_resumable=True, context=QUIET
    )
    tokens = 0
    async for part in stream:
        assert isinstance(part, StreamPart)
        parts.append(part)
        if part.event == "custom" and part.data["type"] == "token":
            tokens += 1
            if tokens == 2:
                break
    await stream.aclose()  # type: ignore[attr-defined]
    return parts


async def test_a_join_after_a_disconnect_gets_exactly_the_missing_events(
    client: LangGraphClient, llm: ScriptedLLM
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply(ANSWER, chunk_delay_s=0.05))
    before = await first_tokens(client, thread_id)
    run_id = before[0].data["run_id"]
    assert before[0].event == "metadata" and before[0].id == "0"

    rest = await collect(client.runs.join_stream(thread_id, run_id, last_event_id=before[-1].id))
    assert rest, "the run was still answering: events were missed"
    assert rest[-1].event == "custom" and rest[-1].data["type"] == "done"
    # The whole stream, kept after the end for a resumable run: the two halves are it.
    whole = await collect(client.runs.join_stream(thread_id, run_id, last_event_id="-1"))
    assert [(p.id, p.event, p.data) for p in before + rest] == [
        (p.id, p.event, p.data) for p in whole
    ]
    assert [int(p.id or -1) for p in whole] == list(range(len(whole)))
    tokens = [p.data for p in whole if p.event == "custom" and p.data["type"] == "token"]
    text = "".join(token["text"] for token in tokens)
    assert text == ANSWER
    # DuckLM's events carry its own run id: one run.
    assert len({p.data["run_id"] for p in whole if p.event == "custom"}) == 1
    # A join for fewer modes gets those, with the same ids.
    only_custom = await collect(
        client.runs.join_stream(thread_id, run_id, stream_mode="custom", last_event_id="-1")
    )
    assert [p.id for p in only_custom] == [p.id for p in whole if p.event in ("metadata", "custom")]


async def test_a_join_without_an_id_follows_from_now(
    client: LangGraphClient, llm: ScriptedLLM
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply(ANSWER, chunk_delay_s=0.05))
    run = await client.runs.create(
        thread_id, "ducklm", input=prompt(), stream_mode="custom", context=QUIET
    )
    joined = await collect(client.runs.join_stream(thread_id, run["run_id"]))
    assert joined[-1].data["type"] == "done"
    assert all(p.event != "metadata" for p in joined)
    # Not resumable: once it has ended there is nothing left to follow.
    late = client.runs.join_stream(thread_id, run["run_id"], last_event_id="-1")
    assert await collect(late) == []
