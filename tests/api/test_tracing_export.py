"""Traces of a run reach a real OTLP/HTTP collector, and nothing of it loads when unset.

The collector is a real HTTP server on loopback (`tests/support/otlp_receiver.py`) that
decodes the protobuf the exporter posts: the run's spans arrive as a tree (the graph's
run, its nodes under it, the model call under its node, the tool under its step), with
DuckLM's run id and the thread, and no prompt or tool text unless the person opts in.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from ducklm.config.settings import Settings
from tests.support.cli import cli_env
from tests.support.otlp_receiver import ReceivedSpan, Receiver, otlp_receiver
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import serve, stream

QUIET = {"critic": False, "memory": False}
MESSAGE = "where do I go this spring?"
SECRET_NOTE = "Porto in May, quietly."
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    """A collector, and the server's environment pointing at it."""
    with otlp_receiver() as running:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", running.url)
        yield running


async def _traced_turn(settings: Settings, llm: ScriptedLLM, workspace: Path) -> dict[str, str]:
    """A turn with a tool call on a server that traces; its ids once the server stopped."""
    await asyncio.to_thread((workspace / "notes.md").write_text, SECRET_NOTE)
    async with serve(settings) as served:
        llm.script(reply(tool_calls=[call("file_read", path="notes.md")]), reply("Porto."))
        events = await stream(served, "/v1/chat/stream", {"message": MESSAGE, **QUIET})
        assert events[-1]["status"] == "completed"
    # The server's end flushed the spans left in the batch.
    return {"run_id": events[0]["run_id"], "thread_id": events[0]["thread_id"]}


def _children(spans: list[ReceivedSpan], parent: ReceivedSpan) -> list[ReceivedSpan]:
    return [s for s in spans if s.parent_id == parent.span_id]


async def test_a_run_arrives_as_a_tree_of_spans_without_its_text(
    settings: Settings, llm: ScriptedLLM, workspace: Path, receiver: Receiver
) -> None:
    ids = await _traced_turn(settings, llm, workspace)
    spans = await asyncio.to_thread(receiver.received)
    assert set(receiver.paths) == {"/v1/traces"}

    (root,) = [s for s in spans if not s.parent_id]
    assert root.name == "ducklm" and root.service == "ducklm"
    assert root.attributes["session.id"] == ids["thread_id"]
    assert json.loads(root.attributes["metadata"])["run_id"] == ids["run_id"]
    assert {s.trace_id for s in spans} == {root.trace_id}
    nodes = {s.name: s for s in _children(spans, root)}
    assert {"context", "action", "tool"} <= set(nodes), sorted(nodes)
    # The model call under the action node, the tool under the tool node's step.
    models = [s for s in spans if s.attributes.get("openinference.span.kind") == "LLM"]
    assert models and all(
        next(p for p in spans if p.span_id == m.parent_id).name == "action" for m in models
    )
    assert all(m.attributes["llm.token_count.completion"] > 0 for m in models)
    (tool,) = [s for s in spans if s.attributes.get("openinference.span.kind") == "TOOL"]
    assert tool.name == "file_read"
    step = next(p for p in spans if p.span_id == tool.parent_id)
    assert step.parent_id == nodes["tool"].span_id
    # Every span carries the run and the thread; none carries what was said or read.
    for span in spans:
        assert json.loads(span.attributes["metadata"])["run_id"] == ids["run_id"]
        assert span.attributes["session.id"] == ids["thread_id"]
        shown = json.dumps(span.attributes)
        assert "this spring" not in shown and "quietly" not in shown, span.name


async def test_the_text_is_traced_when_the_person_opts_in(
    settings: Settings, llm: ScriptedLLM, workspace: Path, receiver: Receiver
) -> None:
    shown = settings.model_copy(update={"trace_content": True})
    await _traced_turn(shown, llm, workspace)
    spans = await asyncio.to_thread(receiver.received)
    (root,) = [s for s in spans if not s.parent_id]
    assert "this spring" in root.attributes["input.value"]
    (tool,) = [s for s in spans if s.attributes.get("openinference.span.kind") == "TOOL"]
    assert "quietly" in tool.attributes["output.value"]


# A served turn in a fresh process: what it imported is all the server needed.
UNSET_PROBE = textwrap.dedent(
    """
    import asyncio, json, sys
    from ducklm.config.settings import load_settings
    from tests.support.server import serve, stream

    async def main():
        async with serve(load_settings(env_file=None)) as served:
            body = {"message": "hi", "critic": False, "memory": False}
            events = await stream(served, "/v1/chat/stream", body)
            metrics = await served.client.get("/metrics")
        print(json.dumps({"status": events[-1]["status"], "metrics": metrics.status_code,
                          "modules": sorted(sys.modules)}))

    asyncio.run(main())
    """
)


async def test_with_no_endpoint_nothing_of_tracing_is_imported(
    settings: Settings, llm: ScriptedLLM
) -> None:
    env = {k: v for k, v in cli_env(settings).items() if not k.startswith("OTEL_")}
    llm.script(reply("Quack."))
    probe = await asyncio.create_subprocess_exec(
        sys.executable, "-c", UNSET_PROBE, env=env, cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(probe.communicate(), timeout=300)
    assert probe.returncode == 0, err.decode()[-3000:]
    found = json.loads(out.decode().strip().splitlines()[-1])
    assert found["status"] == "completed" and found["metrics"] == 200
    # langsmith (under langchain-core) imports OpenTelemetry's API itself; DuckLM's
    # tracing (the instrumentor, the SDK's exporters, the OTLP exporter) stays out.
    loaded = [
        m
        for m in found["modules"]
        if m.startswith(
            ("openinference", "opentelemetry.exporter", "opentelemetry.sdk.trace.export")
        )
        or m == "ducklm.server.observability._otel"
    ]
    assert loaded == []
    assert "ducklm.server.observability.tracing" in found["modules"]
