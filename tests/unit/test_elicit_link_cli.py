"""A server's link to open (URL-mode elicitation) at the terminal: printed, never opened.

`ducklm chat` and `ducklm resume` show the link whole with who asks, and take only
accept, decline or cancel (no form fields: a link's answer carries no content).
"""

from __future__ import annotations

import io

import pytest

from ducklm.cli.console import ConsolePrinter
from ducklm.cli.elicit import prompt_answer

LINK = "https://pay.example.com/checkout?order=7"
REQUEST = {
    "type": "elicitation",
    "mode": "url",
    "call_id": "c1",
    "server": "shop",
    "tool": "pay",
    "message": "Pay for order 7",
    "url": LINK,
}


def test_the_printer_shows_the_link_and_the_answers_it_takes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    event = {"type": "elicitation_requested", "thread_id": "T", "request": REQUEST}
    ConsolePrinter(as_json=False).show(event)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "shop > pay asks: Pay for order 7"
    assert lines[1].endswith(f"(DuckLM does not open it): {LINK}")
    assert lines[-1] == "Answer with: ducklm resume T --elicit accept|decline|cancel"


@pytest.mark.parametrize("typed", ["accept", "decline", "cancel"])
async def test_the_chat_prints_the_link_and_asks_only_what_the_person_did(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, typed: str
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{typed}\n"))
    answer = await prompt_answer(REQUEST)
    assert answer.wire() == {"action": typed}  # no fields asked, no content sent
    assert LINK in capsys.readouterr().out
