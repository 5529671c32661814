"""Per-answer facts and a conversation's model, through the API on the scripted server.

An answer's `answer_facts` (model, first token, tokens and rate, cut) come before `done`
and are in the reopened transcript; `GET /v1/models/server` says what the server offers;
`PUT /v1/conversations/{id}/model` switches the answering roles of the later turns (the
scripted server sees the name in their requests), keeps the history, and refuses a
name the server does not offer, listing the ones it does.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ducklm.models.local.exit_status import Ending
from ducklm.models.local.state import LOCAL_SERVERS, ServerState
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served, stream

QUIET = {"critic": False, "memory": False}
CRASH = Ending(pid=1, server_pid=2, exit_code=None, signal="SIGSEGV", ended_at=time.time(),
               requested=False)  # fmt: skip
ANSWER = "Lisbon is the capital of Portugal and sits on the Tagus."
CONFIGURED = "local"
"""The answering roles' model in the packaged models.yaml (the scripted server takes any)."""


async def _send(served: Served, conversation: str, message: str) -> list[dict[str, Any]]:
    body = {"message": message, "conversation_id": conversation, **QUIET}
    events = await stream(served, "/v1/chat/stream", body)
    assert events[-1]["type"] == "done"
    assert events[-1]["status"] == "completed", events[-1]
    return events


async def _new_conversation(served: Served) -> str:
    return str((await served.client.post("/v1/conversations", json={})).json()["id"])


async def test_an_answer_carries_its_facts_live_and_when_reopened(
    served: Served, llm: ScriptedLLM
) -> None:
    conversation = await _new_conversation(served)
    llm.script(reply(ANSWER))
    events = await _send(served, conversation, "What is the capital of Portugal?")

    types = [e["type"] for e in events]
    assert types[-2] == "answer_facts", "the facts come just before done"
    facts = events[-2]
    assert facts["model"] == CONFIGURED
    assert facts["role"] in ("action", "thinker")
    # The scripted server counts the completion in words and sends it as usage.
    assert facts["tokens"] == len(ANSWER.split())
    assert facts["tokens_counted_by"] == "server"
    assert 0 < facts["first_token_s"] < 30
    assert facts["cut"] is None and facts["prompt_cut"] is False

    transcript = (await served.client.get(f"/v1/conversations/{conversation}/transcript")).json()
    (exchange,) = transcript["exchanges"]
    assert exchange["facts"]["model"] == CONFIGURED
    assert exchange["facts"]["tokens"] == facts["tokens"]
    assert exchange["facts"]["first_token_s"] == facts["first_token_s"]


async def test_a_cut_answer_says_so_in_its_facts(served: Served, llm: ScriptedLLM) -> None:
    conversation = await _new_conversation(served)
    llm.script(reply("A long answer that ran out of room", finish_reason="length"))
    events = await _send(served, conversation, "Say a lot")
    facts = next(e for e in events if e["type"] == "answer_facts")
    assert facts["cut"] == "length"


async def test_the_model_server_says_what_it_offers(served: Served, llm: ScriptedLLM) -> None:
    llm.models = ["scripted", "bigger"]
    answer = await served.client.get("/v1/models/server")
    assert answer.status_code == 200
    server = answer.json()
    assert server["status"] == "up"
    assert server["base_url"] == llm.base_url
    assert server["models"] == ["scripted", "bigger"]
    assert server["default"] == CONFIGURED
    assert server["local"] is False


async def test_a_picked_model_answers_the_later_turns_and_keeps_the_history(
    served: Served, llm: ScriptedLLM
) -> None:
    llm.models = ["scripted", "bigger"]
    conversation = await _new_conversation(served)
    llm.script(reply("First answer."))
    await _send(served, conversation, "first")
    assert llm.requests[-1]["model"] == CONFIGURED

    path = f"/v1/conversations/{conversation}/model"
    picked = await served.client.put(path, json={"model": "bigger"})
    assert picked.status_code == 200
    assert picked.json() == {
        "conversation_id": conversation,
        "model": "bigger",
        "chosen": True,
        "default": CONFIGURED,
    }
    before = len(llm.requests)
    llm.script(reply("Second answer."))
    events = await _send(served, conversation, "second")
    asked = [r["model"] for r in llm.requests[before:] if r.get("stream")]
    assert asked and set(asked) == {"bigger"}, asked
    facts = next(e for e in events if e["type"] == "answer_facts")
    assert facts["model"] == "bigger"
    # The history went along: the second request holds the first exchange.
    said = [m.get("content") for m in llm.requests[-1]["messages"]]
    assert "first" in said and "First answer." in said

    transcript = (await served.client.get(f"/v1/conversations/{conversation}/transcript")).json()
    models = [exchange["facts"]["model"] for exchange in transcript["exchanges"]]
    assert models == [CONFIGURED, "bigger"]

    reset = await served.client.put(path, json={"model": None})
    assert reset.json()["model"] == CONFIGURED and reset.json()["chosen"] is False
    assert (await served.client.get(path)).json()["chosen"] is False


async def test_an_unknown_model_is_refused_with_the_offered_ones(
    served: Served, llm: ScriptedLLM
) -> None:
    llm.models = ["scripted", "bigger"]
    conversation = await _new_conversation(served)
    path = f"/v1/conversations/{conversation}/model"
    refused = await served.client.put(path, json={"model": "gpt-9"})
    assert refused.status_code == 422
    detail = refused.json()["detail"]
    assert "unknown model 'gpt-9'" in detail and "offers scripted, bigger" in detail
    assert (await served.client.get(path)).json()["model"] == CONFIGURED, "nothing stored"

    bad = await served.client.put(path, json={"model": ""})
    assert bad.status_code == 422
    unknown = await served.client.get("/v1/conversations/no-such-one/model")
    assert unknown.status_code == 404


async def test_the_header_says_when_the_kept_server_restarts_or_is_down(
    served: Served, llm: ScriptedLLM
) -> None:
    await asyncio.to_thread(llm.close)
    down = (await served.client.get("/v1/models/server")).json()
    assert down["status"] == "down" and down["models"] == []
    assert down["detail"] == "not reachable" and down["fix"], "what to do about it"

    with LOCAL_SERVERS.kept(llm.base_url, restart_wait_s=60.0, notice_s=1.0) as watch:
        watch.set(ServerState("restarting", CRASH))
        restarting = (await served.client.get("/v1/models/server")).json()
        assert restarting["status"] == "restarting" and restarting["local"] is True
        assert restarting["detail"].startswith("restarting: it crashed (SIGSEGV)")
        assert restarting["fix"] == "", "DuckLM restarts it: nothing for the person to run"

    conversation = await _new_conversation(served)
    refused = await served.client.put(
        f"/v1/conversations/{conversation}/model", json={"model": "bigger"}
    )
    assert refused.status_code == 503
    assert "cannot check the model 'bigger'" in refused.json()["detail"]


async def test_a_copied_thread_answers_with_its_sources_model(
    served: Served, llm: ScriptedLLM
) -> None:
    llm.models = ["scripted", "bigger"]
    conversation = await _new_conversation(served)
    llm.script(reply("Hello."))
    await _send(served, conversation, "hi")
    await served.client.put(f"/v1/conversations/{conversation}/model", json={"model": "bigger"})
    copied = await served.client.post(f"/threads/{conversation}/copy")
    assert copied.status_code == 200, copied.text
    copy = copied.json()["thread_id"]
    assert (await served.client.get(f"/v1/conversations/{copy}/model")).json()["model"] == "bigger"
