"""Stream modes `events` and `debug` on DuckLM's door: no secret in them, joins by mode.

Both modes show the graph's run in detail (every runnable's input and output, every
checkpoint), so they are where a secret would leak: a sudo password given to a paused
run, or the model server's key. The password run is streamed in every mode at once and
the text of the whole stream is searched. A join that asks for one mode of a resumable
run gets that mode's events with the ids the whole stream gave them.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from langgraph_sdk.client import LangGraphClient

from ducklm.config.settings import Settings
from tests.support.agent_runs import QUIET, collect, new_thread, prompt
from tests.support.fake_sudo import PASSWORD
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served

MODEL_KEY = "sk-model-key-never-streamed-0123456789"
EVERY_MODE = ["values", "updates", "messages-tuple", "custom", "events", "debug"]


@pytest.fixture
def server_settings(settings: Settings) -> Settings:
    """The served app's settings, with a key for the model server."""
    return settings.model_copy(update={"llm_api_key": MODEL_KEY})


async def test_a_sudo_password_is_in_no_mode(
    client: LangGraphClient, llm: ScriptedLLM, fake_sudo: Path, served: Served
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply(tool_calls=[call("shell_exec", command="sudo ls /root")]))
    await client.runs.wait(thread_id, "ducklm", input=prompt("list /root"), context=QUIET)
    asked = await client.runs.wait(
        thread_id, "ducklm", command={"resume": {"decisions": [{"type": "approve"}]}}
    )
    assert isinstance(asked, dict)
    assert asked["__interrupt__"][0]["value"]["type"] == "password"

    llm.script(reply("Listed."))
    stream = client.runs.stream(
        thread_id,
        "ducklm",
        command={"resume": {"password": PASSWORD}},
        stream_mode=EVERY_MODE,  # type: ignore[arg-type]
    )
    parts = await collect(stream)
    assert await asyncio.to_thread(fake_sudo.read_text) == "match\n", "sudo got the password"
    events = [p.data for p in parts if p.event == "events"]
    ran = [e for e in events if e["event"] == "on_tool_start" and e["name"] == "shell_exec"]
    assert ran, "the command ran inside the streamed run"
    assert {p.event for p in parts} >= {"events", "debug", "values", "custom"}
    sent = json.dumps([p.data for p in parts])
    for secret in (PASSWORD, MODEL_KEY, served.token):
        assert secret not in sent


async def test_a_join_for_one_mode_gets_its_events_with_their_ids(
    client: LangGraphClient, llm: ScriptedLLM
) -> None:
    thread_id = await new_thread(client)
    llm.script(reply("One two three four.", chunk_delay_s=0.02))
    run = await client.runs.create(
        thread_id,
        "ducklm",
        input=prompt(),
        stream_mode=["events", "debug"],
        stream_resumable=True,
        context=QUIET,
    )
    whole = await collect(client.runs.join_stream(thread_id, run["run_id"], last_event_id="-1"))
    debug = await collect(
        client.runs.join_stream(thread_id, run["run_id"], stream_mode="debug", last_event_id="-1")
    )
    assert {p.event for p in whole} == {"metadata", "events", "debug"}
    wanted = [(p.id, p.data) for p in whole if p.event in ("metadata", "debug")]
    assert [(p.id, p.data) for p in debug] == wanted
    assert [p.data["type"] for p in debug[1:]].count("checkpoint") >= 2
