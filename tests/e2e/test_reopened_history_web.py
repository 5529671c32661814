"""A reloaded conversation shows what the live view showed, in a real browser.

The person stops an answer, has a turn fail, denies one command and allows another, and
gets an answer the model reasoned about; after a reload the page must show the stopped
answer's text marked "stopped", the failed turn's error, each call and question labelled
as it was live, and the reasoning apart from the answer in its collapsed block.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from playwright.async_api import Locator, Page, expect

from tests.e2e.test_web_chat import last_turn, quiet, send, shell
from tests.support.scripted_llm import ScriptedLLM, reply

pytestmark = pytest.mark.slow

SLOW = " ".join(f"word{n}" for n in range(100))
THOUGHT = "A duck greets with a quack."


async def _stop_an_answer(page: Page, llm: ScriptedLLM) -> None:
    llm.script(reply(SLOW, chunk_delay_s=0.1))
    await quiet(page)
    await send(page, "talk for a long time")
    await expect(last_turn(page).get_by_test_id("answer-text")).to_contain_text("word2")
    await page.get_by_test_id("stop-button").click()
    await expect(last_turn(page)).to_have_attribute("data-state", "cancelled")
    await expect(last_turn(page).get_by_test_id("answer-cut")).to_have_text("stopped")


async def _fail_a_turn(page: Page) -> str:
    """Nothing is scripted: the model server answers with an error. The error shown."""
    await send(page, "this one fails")
    error = last_turn(page).get_by_test_id("turn-error")
    await expect(error).to_be_visible()
    await expect(last_turn(page)).to_have_attribute("data-state", "failed")
    return await error.inner_text()


async def _decide(page: Page, llm: ScriptedLLM, command: str, decision: str, answer: str) -> None:
    """Have the model want to run `command`; answer its question with `decision`."""
    llm.script(reply(tool_calls=[shell(command)]))
    await send(page, f"please run {command}")
    card = last_turn(page).get_by_test_id("approval-card")
    await expect(card.get_by_test_id("tool-command")).to_have_text(f"$ {command}")
    llm.script(reply(answer))
    await card.get_by_test_id(decision).click()
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text(answer)


async def test_a_reload_shows_stopped_failed_denied_and_approved_turns(
    page: Page, llm: ScriptedLLM, workspace: Path
) -> None:
    for name in ("a.txt", "b.txt"):
        await asyncio.to_thread((workspace / name).write_text, "old")
    await _stop_an_answer(page, llm)
    partial = await last_turn(page).get_by_test_id("answer-text").inner_text()
    error = await _fail_a_turn(page)
    await _decide(page, llm, "rm a.txt", "deny", "Left it alone.")
    await expect(last_turn(page).get_by_test_id("tool-outcome")).to_have_text("denied by you")
    await _decide(page, llm, "rm b.txt", "approve-once", "Removed it.")
    await expect(last_turn(page).get_by_test_id("tool-outcome")).to_have_text("approved by you")
    llm.script(reply("Quack.", reasoning=THOUGHT))
    await send(page, "say hello as a duck")
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text("Quack.")
    await _expect_reasoning(last_turn(page))

    await page.reload()
    await expect(page.get_by_test_id("user-message")).to_have_count(5)
    stopped, failed, denied, approved, reasoned = [
        page.get_by_test_id("assistant-turn").nth(n) for n in range(5)
    ]
    await expect(stopped).to_have_attribute("data-state", "cancelled")
    await expect(stopped.get_by_test_id("turn-status")).to_have_text("Stopped.")
    await expect(stopped.get_by_test_id("answer-cut")).to_have_text("stopped")
    # At least what the page had shown when Stop was pressed (later tokens may have landed).
    assert (await stopped.get_by_test_id("answer-text").inner_text()).startswith(partial)

    await expect(failed.get_by_test_id("turn-error")).to_have_text(error)
    await expect(failed.get_by_test_id("turn-status")).to_have_text("The task failed.")

    await expect(denied.get_by_test_id("approval-outcome")).to_have_text("Denied")
    await expect(denied.get_by_test_id("approval-card").get_by_role("button")).to_have_count(0)
    await expect(denied.get_by_test_id("tool-card")).to_have_attribute("data-status", "denied")
    await expect(denied.get_by_test_id("tool-outcome")).to_have_text("denied by you")

    await expect(approved.get_by_test_id("approval-outcome")).to_have_text("Allowed once")
    await expect(approved.get_by_test_id("tool-outcome")).to_have_text("approved by you")
    await expect(approved.get_by_test_id("tool-meta")).to_contain_text("exit code 0")
    await expect(approved.get_by_test_id("answer-text")).to_have_text("Removed it.")

    await expect(reasoned.get_by_test_id("answer-text")).to_have_text("Quack.")
    await _expect_reasoning(reasoned)


async def _expect_reasoning(turn: Locator) -> None:
    """The turn's reasoning in its collapsed "Thinking" block, apart from the answer."""
    block = turn.get_by_test_id("reasoning").first
    await expect(block.get_by_test_id("reasoning-text")).to_be_hidden()
    await block.locator("summary").click()
    await expect(block.get_by_test_id("reasoning-text")).to_have_text(THOUGHT)
