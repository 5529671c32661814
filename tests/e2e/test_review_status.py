"""The web chat never waits in the dark for the review behind an answer.

The real server on the scripted model, in Chromium: after an answer the status line
says "Reviewing..."; a Revert and a new message during the review go ahead at once (the
review waits, then runs again); Skip ends it, recorded as skipped by the person.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect

from ducklm.config.settings import Settings
from ducklm.runtime.operator import open_operator_stores
from ducklm.runtime.reviews import SKIPPED_BY_PERSON
from tests.e2e.test_web_chat import last_turn, send
from tests.support.scripted_llm import Reply, ScriptedLLM, call, reply

pytestmark = pytest.mark.slow

FIRST_TURN_MS = 240_000  # the first turn in a process loads the embedding model
WRITE = "Write hi into new.txt, please."
# Far longer than any wait below: a turn that waited for the review could not pass.
CRITIC_DELAY_S = 120.0


class SlowCritic:
    """Answers the turns at once (a file write for `WRITE`); the critic takes minutes."""

    def __init__(self) -> None:
        self.critics = 0
        self.critic_asked = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Reply:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        if schema == "Critique":
            self.critics += 1
            self.critic_asked.set()
            return reply(json.dumps({"score": 0.8, "summary": "ok"}), delay_s=CRITIC_DELAY_S)
        if schema == "MemoryProposal":
            return reply(json.dumps({"should_store": False}))
        last = body["messages"][-1]
        if last["role"] == "tool":
            return reply("Wrote it.")
        if last["content"] == WRITE:
            return reply(tool_calls=[call("shell_exec", command="echo hi > new.txt")])
        return reply("A goose is a bird.")


async def test_revert_and_a_message_during_a_review_go_ahead_and_skip_ends_it(
    page: Page, llm: ScriptedLLM, workspace: Path, server_settings: Settings
) -> None:
    critic = SlowCritic()
    llm.set_responder(critic)
    review = page.get_by_test_id("review-status")

    await send(page, WRITE)
    turn = last_turn(page)
    await expect(turn.get_by_test_id("turn-revert")).to_be_visible(timeout=FIRST_TURN_MS)
    await expect(review).to_contain_text("Reviewing")
    assert await asyncio.to_thread(critic.critic_asked.wait, 60)

    await turn.get_by_test_id("turn-revert").click()  # the review is out: no 409
    await expect(turn.get_by_test_id("turn-revert")).to_have_text("Reverted")
    assert not await asyncio.to_thread((workspace / "new.txt").exists)

    await send(page, "Explain what a goose is.")
    await expect(last_turn(page)).to_contain_text("A goose is a bird.")
    await expect(review).to_contain_text("Reviewing")  # the deferred review runs again

    await review.get_by_test_id("review-skip").click()
    await expect(review).to_be_hidden()
    async with open_operator_stores(server_settings) as stores:
        (conversation,) = await stores.conversations.list()
        events = [r.data for r in await stores.audit.list(conversation.id)]
    kinds = [(e["type"], e.get("reason")) for e in events if e["type"].startswith("review_")]
    assert ("review_skipped", SKIPPED_BY_PERSON) in kinds
    assert [k for k, _ in kinds].count("review_deferred") >= 2  # by the revert, the message
    assert critic.critics >= 2
