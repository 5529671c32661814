"""The API survives fuzzing: schemathesis sends generated requests to every `/v1` and
Agent Protocol operation of the real server, valid and invalid ones. No answer may be a
5xx, and every answer must match the OpenAPI document: a declared status code, the
declared content type, a body that fits the declared schema.

The server runs on its own thread and event loop (schemathesis calls over blocking
`requests`), still under blockbuster. Its model is the scripted server answering "Done."
to everything, so the operations that start runs (`/v1/chat`, `runs/wait`...) are fuzzed
too and take milliseconds each. Before fuzzing, the test makes one of each thing (a
finished task, a question waiting for approval, a memory, a thread) so list routes
answer with real records, not only empty lists.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import requests
import schemathesis
from hypothesis import Phase, given
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from ducklm.config.settings import Settings, load_settings
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import serve


def invalid_bodies_and_paths_rejected(ctx: Any, response: Any, case: Any) -> bool | None:
    """`negative_data_rejection`, but not for query strings.

    A query value is text on the wire: `?conversation_id=True` is a fine string, though
    the fuzzer meant a boolean, and a parameter whose name `requests` drops never
    arrives. Unknown and repeated query parameters are refused all the same; test_bad_input
    pins that.
    """
    if case.meta.phase.data.parameter_location == ParameterLocation.QUERY:
        return None
    return negative_data_rejection(ctx, response, case)


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    invalid_bodies_and_paths_rejected,
    ignored_auth,
]
NOT_FUZZED_TAGS = {"login"}
"""The browser login's routes (server/login.py): their tests cover them."""


@dataclass
class Running:
    """The server on its thread: where it listens, its token and its OpenAPI document."""

    url: str
    headers: dict[str, str]
    openapi: dict[str, Any]


@contextmanager
def serve_on_thread(settings: Settings) -> Iterator[Running]:
    """`serve(settings)` on a thread of its own until the block ends."""
    started = threading.Event()
    box: dict[str, Any] = {}

    async def main() -> None:
        try:
            async with serve(settings) as served:
                box["stop"] = asyncio.Event()
                box["loop"] = asyncio.get_running_loop()
                openapi = served.server.config.app.openapi()
                box["running"] = Running(served.url, served.headers, openapi)
                started.set()
                await box["stop"].wait()
        finally:
            started.set()

    thread = threading.Thread(target=asyncio.run, args=(main(),), name="fuzzed-server")
    thread.start()
    started.wait(timeout=120)
    try:
        assert "running" in box, "the server did not start"
        yield box["running"]
    finally:
        if "loop" in box:
            box["loop"].call_soon_threadsafe(box["stop"].set)
        thread.join(timeout=60)


@pytest.fixture
def fuzz_settings(tmp_path: Path, llm: ScriptedLLM, skills_dir: Path) -> Settings:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "b.txt").write_text("old")  # overwriting it asks a person
    (tmp_path / "projects").mkdir()
    return load_settings(
        env_file=None,
        llm_base_url=llm.base_url,
        # The scripted server's embeddings: no model loads in process.
        embeddings_url=llm.base_url,
        data_dir=tmp_path / "data",
        workspace=workspace,
        workspaces=[tmp_path / "projects"],
        skills_dir=skills_dir,
        model_retry_attempts=1,
        model_retry_initial_interval=0.01,
        # A review behind an answer writes checkpoints on the server's thread while
        # hypothesis draws the next case; LangGraph's checkpoint ids come from the
        # global `random`, which hypothesis then blames on the strategy. The API is the
        # same either way.
        review_behind=False,
    )


def _seed(api: requests.Session, url: str, llm: ScriptedLLM) -> None:
    """One of each thing, so the list routes answer with real records."""
    quiet = {"critic": False, "memory": False}
    done = api.post(f"{url}/v1/chat", json={"message": "hi", **quiet}, timeout=60)
    assert done.status_code == 200, done.text
    llm.script(reply(tool_calls=[call("file_write", path="b.txt", content="x", overwrite=True)]))
    asked = api.post(f"{url}/v1/chat", json={"message": "write b.txt", **quiet}, timeout=60)
    assert asked.json()["status"] == "interrupted", asked.text
    memory = api.post(f"{url}/v1/memory", json={"text": "Ducks like bread."}, timeout=60)
    assert memory.status_code == 201, memory.text
    thread = api.post(f"{url}/threads", json={}, timeout=60).json()
    run = {"assistant_id": "ducklm", "input": {"messages": [{"type": "human", "content": "hi"}]}}
    ran = api.post(f"{url}/threads/{thread['thread_id']}/runs/wait", json=run, timeout=60)
    assert ran.status_code == 200, ran.text


SHARDS = 4
"""The operations are fuzzed in this many tests, each on a server of its own, so that
pytest-xdist spreads them over its workers (one test took 6 minutes)."""


@pytest.mark.parametrize("shard", range(SHARDS))
def test_no_operation_answers_5xx_or_off_schema(
    fuzz_settings: Settings, llm: ScriptedLLM, shard: int
) -> None:
    llm.set_default(reply("Done."))
    with serve_on_thread(fuzz_settings) as running, requests.Session() as api:
        api.headers.update(running.headers)
        _seed(api, running.url, llm)
        schema = schemathesis.openapi.from_dict(running.openapi, config=SchemathesisConfig())
        failures: dict[str, str] = {}
        operations = [result.ok() for result in schema.get_all_operations()]
        fuzzed = [op for op in operations if not NOT_FUZZED_TAGS & set(op.tags or ())]
        assert len(fuzzed) > 40, [op.label for op in fuzzed]
        for operation in fuzzed[shard::SHARDS]:
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                problem = _fuzz(operation, mode, api, running)
                if problem is not None:
                    failures[f"{operation.label} ({mode.value})"] = problem
    assert not failures, "\n\n".join(f"{label}:\n{text}" for label, text in failures.items())


def _fuzz(
    operation: Any, mode: GenerationMode, api: requests.Session, running: Running
) -> str | None:
    # Examples per operation and mode, seeds and deadlines come from the loaded profile
    # (tests/support/hypothesis_profiles.py: `ci` draws 8, the same ones every run).
    @hypothesis.settings(phases=[Phase.explicit, Phase.generate])
    @given(case=operation.as_strategy(generation_mode=mode))
    def check(case: Any) -> None:
        case.call_and_validate(base_url=running.url, session=api, checks=CHECKS, timeout=60)

    try:
        check()
    except Unsatisfiable:
        # No invalid request exists for it (only free-form string ids in the path): the
        # positive run covered it.
        assert mode is GenerationMode.NEGATIVE
    except (Exception, BaseExceptionGroup) as exc:  # a failed check: keep it, go on
        # Hypothesis reports a check that failed once and passed on its retry as a group:
        # the first failure is what to read.
        inner = exc.exceptions if isinstance(exc, BaseExceptionGroup) else ()
        return "\n".join([str(exc), *(f"  {e!r}"[:1500] for e in inner)])[:3000]
    return None
