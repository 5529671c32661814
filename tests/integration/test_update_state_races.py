"""A state update right after a run, racing the review behind its answer (issue 43).

The review writes its results to the thread's state when it ends; a state update of the
same thread meanwhile defers it, as a new message does (`DuckLM.update_state`). Before,
both wrote onto the answer's checkpoint and the later one won: the update was lost.
On SQLite and on PostgreSQL, whose checkpointers order a thread's checkpoints each their
own way.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from ducklm.config.settings import Settings
from ducklm.runtime.facade import DuckLM
from tests.support.postgres import on_backend
from tests.support.scripted_llm import Reply, ScriptedLLM, reply

RACES = 50
JITTER_S = 0.004
"""Each update comes this much later than the last one after its turn's end (cycling
over ten steps): spread over the review's ~30 ms, some land while its reviewers run,
some while it writes its results back, some after."""
CRITIQUE = {"score": 0.8, "summary": "answered the question"}
# "Explain" keeps the router's critic on (it leaves chit-chat unreviewed).
QUESTION = "Explain what a duck is."


@pytest.fixture
def settings(settings: Settings, database_url: str | None, llm: ScriptedLLM) -> Settings:
    """Every test here on SQLite, then on PostgreSQL; no embedding model in process.

    The scripted server's embeddings (a vector per text, over HTTP) and no episodes: a
    turn's recall and indexing are not what races, and a race is a turn.
    """
    quick = {"embeddings_url": llm.base_url, "episodes": False}
    return on_backend(settings.model_copy(update=quick), database_url)


def answer_and_review(body: dict[str, Any]) -> Reply:
    """The turn's answer, and the critic's and memory policy's replies."""
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
    if schema == "Critique":
        return reply(json.dumps(CRITIQUE))
    if schema == "MemoryProposal":
        return reply(json.dumps({"should_store": False}))
    return reply(f"An answer to {body['messages'][-1]['content']}")


async def race(duck: DuckLM, n: int) -> None:
    """A turn, then soon (or once its review ended) an update; the update must stand."""
    thread_id = f"t{n}"
    result = await duck.run(QUESTION, thread_id=thread_id, memory=False)
    assert result.status == "completed"
    if n % 5 == 4:
        await duck.finish_review(thread_id)
    else:
        await asyncio.sleep(JITTER_S * (n % 10))  # where in the review the update lands
    note = HumanMessage(content=f"a note on {thread_id}")
    written = await duck.update_state(thread_id, {"messages": [note]})
    await duck.finish_review(thread_id)

    latest = await duck.states.snapshot(thread_id)
    assert (
        latest.config["configurable"]["checkpoint_id"] == (written["configurable"]["checkpoint_id"])
    ), f"the update of {thread_id} was written past"
    assert latest.values["messages"][-1].content == note.content
    assert latest.next == () and not latest.interrupts, f"{thread_id} is not at rest"


async def test_no_update_is_lost_to_a_review(duck: DuckLM, llm: ScriptedLLM) -> None:
    llm.set_responder(answer_and_review)
    for n in range(RACES):
        await race(duck, n)
    reviews = [r for n in range(RACES) for r in await duck.runs(f"t{n}") if r.kind == "review"]
    assert len(reviews) == RACES
    assert {r.status for r in reviews} == {"completed"}, "every review ran to its end"
