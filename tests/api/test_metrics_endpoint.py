"""`GET /metrics` over real HTTP on the scripted model: the numbers move with the runs.

A turn with a tool call and an answer moves the runs, the tool calls by tool and
verdict, the model calls and tokens by role, the first-token and per-node histograms;
a question moves the questions waiting. The endpoint wants the token and a known Host.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served, stream

QUIET = {"critic": False, "memory": False}
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


async def _scrape(served: Served) -> Samples:
    answer = await served.client.get("/metrics")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }


def _value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def _sum(samples: Samples, name: str, **labels: str) -> float:
    """The sum over every series of `name` whose labels include `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, found), v in samples.items() if n == name and wanted <= set(found))


async def test_a_turn_with_a_tool_call_moves_the_metrics(
    served: Served, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "notes.md").write_text, "Porto in May.\n")
    before = await _scrape(served)
    llm.script(reply(tool_calls=[call("file_read", path="notes.md")]), reply("Porto, in May."))
    events = await stream(served, "/v1/chat/stream", {"message": "where do I go?", **QUIET})
    assert events[-1]["status"] == "completed"
    finished = next(e for e in events if e["type"] == "tool_call_finished")
    after = await _scrape(served)

    def moved(name: str, **labels: str) -> float:
        return _sum(after, name, **labels) - _sum(before, name, **labels)

    assert moved("ducklm_runs_total", status="completed") == 1
    assert _value(after, "ducklm_runs_running") == 0
    tool = {"tool": "file_read", "verdict": finished["verdict"], "status": "success"}
    assert moved("ducklm_tool_calls_total", **tool) == 1
    facts = next(e for e in events if e["type"] == "answer_facts")
    assert moved("ducklm_model_calls_total", role=facts["role"]) == 1
    # The scripted server counts the completion in words.
    output = {"role": facts["role"], "direction": "output"}
    assert moved("ducklm_model_tokens_total", **output) == len(["Porto,", "in", "May."])
    assert moved("ducklm_time_to_first_token_seconds_count") == 1
    assert moved("ducklm_time_to_first_token_seconds_bucket", le="+Inf") == 1
    assert 0 < moved("ducklm_time_to_first_token_seconds_sum") < 60
    # Every root step is timed under its node; the tool step ran once.
    nodes = {
        dict(labels)["node"] for (name, labels) in after if name == "ducklm_node_seconds_count"
    }
    assert len(nodes) >= 3, nodes
    assert moved("ducklm_node_seconds_count") >= 3
    assert moved("ducklm_node_seconds_bucket", le="+Inf") == moved("ducklm_node_seconds_count")
    assert _value(after, "ducklm_questions_waiting") == 0
    assert _value(after, "ducklm_queue_depth") == 0


async def test_a_question_waits_until_answered(
    served: Served, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "a.txt").write_text, "old")
    overwrite = call("file_write", path="a.txt", content="new", overwrite=True)
    llm.script(reply(tool_calls=[overwrite]))
    events = await stream(served, "/v1/chat/stream", {"message": "overwrite a.txt", **QUIET})
    asked = next(e for e in events if e["type"] == "approval_requested")
    waiting = await _scrape(served)
    assert _value(waiting, "ducklm_questions_waiting") == 1
    assert _value(waiting, "ducklm_questions_total", kind="approval") == 1
    assert _value(waiting, "ducklm_runs_total", status="interrupted") == 1

    llm.script(reply("Overwritten."))
    body = {"decisions": [{"type": "approve"}], "interrupt_id": asked["interrupt_id"]}
    rest = await stream(served, f"/v1/tasks/{asked['task_id']}/continue/stream", body)
    assert rest[-1]["status"] == "completed"
    answered = await _scrape(served)
    assert _value(answered, "ducklm_questions_waiting") == 0
    assert _value(answered, "ducklm_runs_total", status="completed") == 1


async def test_metrics_want_the_token_and_a_known_host(served: Served) -> None:
    async with httpx.AsyncClient(base_url=served.url) as anonymous:
        refused = await anonymous.get("/metrics")
        assert refused.status_code == 401
        assert "ducklm_" not in refused.text
        wrong = await anonymous.get("/metrics", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        foreign = await anonymous.get(
            "/metrics", headers={**served.headers, "Host": "evil.example"}
        )
        assert foreign.status_code == 400
        assert "ducklm_" not in foreign.text
