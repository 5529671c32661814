"""A cut answer is marked where people read it; sampling fields load strictly."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk

from ducklm.cli.console import ConsolePrinter
from ducklm.models.answer_stream import AnswerStream, answer_message, cut_of
from ducklm.models.local.autostart import local_models_path
from ducklm.models.roles import ModelsConfigError, load_roles
from ducklm.models.sampling import Sampling
from ducklm.server.routes.views import message_view


def test_the_cli_says_the_answer_was_cut_after_it(capsys: pytest.CaptureFixture[str]) -> None:
    printer = ConsolePrinter(as_json=False)
    for item in (
        {"type": "token", "text": "Projects are amazing!"},
        {"type": "answer_cut", "reason": "repeating", "note": "stopped: repeating", "dropped": 0},
        {
            "type": "done",
            "status": "completed",
            "answer": "Projects are amazing!",
            "thread_id": "T",
        },
    ):
        printer.show(item)
    out, err = capsys.readouterr()
    assert out == "Projects are amazing!\n", "the answer is printed once"
    assert err.splitlines() == ["[stopped: repeating]", "[completed] thread T"]


def test_a_stored_answer_keeps_why_it_was_cut() -> None:
    view = message_view(answer_message("Once upon a", "length"))
    assert view is not None and (view.content, view.cut) == ("Once upon a", "length")
    assert cut_of(AIMessage(content="x", response_metadata={"finish_reason": "stop"})) is None


def test_length_is_read_from_the_last_chunk() -> None:
    answer = AnswerStream()
    assert answer.admit(AIMessageChunk(content="Once upon a"))
    assert answer.admit(AIMessageChunk(content="", response_metadata={"finish_reason": "length"}))
    assert answer.cut == "length"
    assert answer.cut_fields("thinker")["dropped"] == 0


def test_the_bundled_models_file_sends_only_what_llama_cpp_python_reads() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed")
    # Its request model, read in a process of its own: importing llama_cpp opens files
    # it never closes.
    fields = (
        "from llama_cpp.server.types import CreateChatCompletionRequest as R;"
        " print(*R.model_fields)"
    )
    found = subprocess.run(
        [sys.executable, "-c", fields], capture_output=True, text=True, check=True
    )
    accepted = set(found.stdout.split())
    roles = load_roles(local_models_path())
    sent = {name for role in roles.values() for name in role.sampling.body()}
    assert sent and sent <= accepted
    assert roles["thinker"].sampling == Sampling(repeat_penalty=1.1, frequency_penalty=0.2)
    for name in ("critic", "memory_policy"):
        # Their texts looped to the output limit on SmolLM2 (issue 44); the grammar keeps
        # the braces and keys the penalties would otherwise push the model off.
        assert roles[name].sampling.body(), f"{name}: penalties on its looping texts"
    assert roles["action"].sampling.body() == {}, "directives repeat the names they act on"


def test_a_misspelt_sampling_field_says_where(tmp_path: Path) -> None:
    models = tmp_path / "models.yaml"
    models.write_text(
        "defaults: {model: m, base_url: u}\nroles: {thinker: {sampling: {dry_mult: 1}}}"
    )
    with pytest.raises(ModelsConfigError, match="dry_mult"):
        load_roles(models)
