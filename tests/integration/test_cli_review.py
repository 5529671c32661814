"""`ducklm chat` in-process finishes the review behind its answer before it exits.

A real `ducklm` process on the scripted server: the answer is printed, then a
"reviewing..." line, and the memory policy stores what it decided before the process
ends. Ctrl-C (SIGINT) during the review skips it, recorded as skipped by the person.
"""

from __future__ import annotations

import asyncio
import json
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from ducklm.cli.chat import REVIEW_SKIPPED, REVIEWING
from ducklm.config.settings import Settings
from ducklm.runtime.operator import open_operator_stores
from ducklm.runtime.reviews import SKIPPED_BY_PERSON
from tests.support.cli import cli_env, start_cli
from tests.support.scripted_llm import Reply, ScriptedLLM, reply

pytestmark = pytest.mark.slow

REMEMBER = "Please remember: my favourite editor is Helix."
FACT = "My favourite editor is Helix."
"""What the request asked to keep, kept by rule (the memory policy's model is not asked)."""


class Reviewers:
    """The turn's answer at once; the critic after `critic_delay_s`; the memory to store."""

    def __init__(self, critic_delay_s: float) -> None:
        self.critic_delay_s = critic_delay_s
        self.critic_asked = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Reply:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        if schema == "Critique":
            self.critic_asked.set()
            critique = {"score": 0.9, "summary": "noted the editor"}
            return reply(json.dumps(critique), delay_s=self.critic_delay_s)
        return reply("Noted: Helix.")


async def test_chat_finishes_the_review_before_it_exits(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    llm.set_responder(Reviewers(critic_delay_s=0.5))
    proc = await start_cli("chat", REMEMBER, env=cli_env(settings), cwd=tmp_path)
    out, err = await asyncio.wait_for(proc.communicate(), 300)

    assert proc.returncode == 0, err.decode()
    assert out.decode() == "Noted: Helix.\n"
    assert REVIEWING in err.decode()
    async with open_operator_stores(settings) as stores:
        (thread,) = [c.id for c in await stores.conversations.list()]
        runs = await stores.runs.for_thread(thread)
        assert [(r.kind, r.status) for r in runs] == [
            ("turn", "completed"),
            ("review", "completed"),
        ]
        types = [r.type for r in await stores.audit.list(thread)]
        assert "memory_stored" in types and types[-1] == "review_finished"
        stored = await stores.db.fetchall("SELECT text FROM memories", ())
    assert [row[0] for row in stored] == [FACT]


async def test_ctrl_c_during_the_review_skips_it(
    settings: Settings, llm: ScriptedLLM, tmp_path: Path
) -> None:
    reviewers = Reviewers(critic_delay_s=60.0)
    llm.set_responder(reviewers)
    proc = await start_cli("chat", REMEMBER, env=cli_env(settings), cwd=tmp_path)
    assert proc.stderr is not None
    seen = b""
    while REVIEWING.encode() not in seen:  # the answer is out and the review is going
        line = await asyncio.wait_for(proc.stderr.readline(), 300)
        assert line, seen.decode()
        seen += line
    assert await asyncio.to_thread(reviewers.critic_asked.wait, 60)

    proc.send_signal(signal.SIGINT)
    out, err = await asyncio.wait_for(proc.communicate(), 60)

    assert proc.returncode == 0, (seen + err).decode()
    assert out.decode() == "Noted: Helix.\n"
    assert REVIEW_SKIPPED in err.decode()
    async with open_operator_stores(settings) as stores:
        (thread,) = [c.id for c in await stores.conversations.list()]
        _, review = await stores.runs.for_thread(thread)
        assert (review.kind, review.status, review.error) == (
            "review",
            "cancelled",
            SKIPPED_BY_PERSON,
        )
        closing = (await stores.audit.list(thread))[-1]
        assert (closing.type, closing.data["reason"]) == ("review_skipped", SKIPPED_BY_PERSON)
