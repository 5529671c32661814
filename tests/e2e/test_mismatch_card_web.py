"""The approval card for a call that is not what the request asked for (issue 44): the
browser shows why first, and Deny is the default a hurried Enter takes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from tests.e2e.test_web_chat import quiet, send
from tests.support.scripted_llm import ScriptedLLM, call, reply

pytestmark = pytest.mark.slow

# The first turn in a process loads the embedding model: on a loaded 2-core machine, slow.
FIRST_TURN_MS = 240_000


async def test_an_overwrite_for_a_delete_is_flagged_and_enter_denies_it(
    page: Page, llm: ScriptedLLM, workspace: Path
) -> None:
    log = workspace / "old.log"
    await asyncio.to_thread(log.write_text, "kept for years\n")
    llm.script(
        reply(tool_calls=[call("file_write", path="old.log", content="")]),
        reply("I left old.log as it was."),
    )
    await quiet(page)
    await send(page, "Delete old.log")

    card = page.get_by_test_id("approval-card")
    await expect(card).to_be_visible(timeout=FIRST_TURN_MS)
    why = card.get_by_test_id("action-description")
    await expect(why).to_contain_text(
        "Does not match the request: this replaces everything in old.log, but the request "
        "asked to delete old.log."
    )
    deny, allow = card.get_by_test_id("deny"), card.get_by_test_id("approve-once")
    # Deny is the card's primary action and holds the focus; allowing takes a deliberate click.
    await expect(deny).to_have_class("danger primary")
    await expect(allow).not_to_have_class("primary")
    await expect(deny).to_be_focused()

    await page.keyboard.press("Enter")
    await expect(card.get_by_test_id("approval-outcome")).to_have_text("Denied")
    await expect(page.get_by_test_id("assistant-turn").last).to_contain_text(
        "I left old.log as it was."
    )
    assert await asyncio.to_thread(log.read_text) == "kept for years\n"

    # The call that was asked for: a plain card, Allow its primary action.
    llm.script(reply(tool_calls=[call("file_delete", path="old.log")]), reply("Deleted."))
    await send(page, "Delete old.log")
    second = page.get_by_test_id("approval-card").last
    await expect(second.get_by_test_id("action-description")).to_have_text("delete old.log")
    await expect(second.get_by_test_id("approve-once")).to_have_class("primary")
    await second.get_by_test_id("approve-once").click()
    await expect(page.get_by_test_id("assistant-turn").last).to_contain_text("Deleted")
    assert not await asyncio.to_thread(log.exists)
