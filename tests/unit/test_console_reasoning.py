"""The CLI shows a model's reasoning as it streams: one run of text on stderr, apart from
the answer on stdout."""

from __future__ import annotations

import pytest

from ducklm.cli.console import ConsolePrinter


def test_reasoning_streams_on_stderr_and_the_answer_on_stdout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    printer = ConsolePrinter(as_json=False)
    for piece in ("The person ", "wants a list."):
        printer.show({"type": "reasoning", "text": piece, "source": "thinker"})
    printer.show({"type": "token", "text": "Here it is."})
    printer.show({"type": "done", "status": "completed", "answer": "", "thread_id": "t1"})

    out, err = capsys.readouterr()
    assert out == "Here it is.\n"
    # Not a terminal here: no colour codes, one line for the whole reasoning.
    assert err.splitlines()[0] == "(thinking) The person wants a list."
