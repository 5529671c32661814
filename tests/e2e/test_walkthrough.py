"""Issue 27's web-chat walkthrough, as one person's conversation in a real browser.

One conversation on the scripted model: a greeting, a read, a write the person allows,
a command the person denies, a revert, a stopped answer, a reload and a restart of
DuckLM on the same data dir. The model-crash step needs a real (fake) local model server
kept by DuckLM instead of the scripted one, so it is a second, shorter test.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from playwright.async_api import Locator, Page, expect

from ducklm.config.settings import Settings
from ducklm.models.local.state import ServerWatch
from tests.e2e.conftest import screenshot
from tests.e2e.test_reopened_history_web import _decide, _stop_an_answer
from tests.e2e.test_web_chat import last_turn, quiet, send, write
from tests.integration.test_model_restart import crash_server, kept
from tests.support.fake_llama_server import ANSWER, hold_starts, release_starts
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served, serve

pytestmark = pytest.mark.slow

FIRST_TURN_MS = 240_000  # the first turn in a process loads the embedding model
GREETING = "Hello! The pond is quiet and I am ready to help."
OLD = "feed the ducks\n"
NEW = "feed the ducks\nclean the pond\n"


@pytest.fixture
async def stack() -> AsyncIterator[AsyncExitStack]:
    """Holds the first server, so the walkthrough can stop it mid-test."""
    async with AsyncExitStack() as held:
        yield held


@pytest.fixture
async def served(server_settings: Settings, stack: AsyncExitStack) -> Served:
    """The app as tests/conftest.py serves it, but stoppable with `stack.aclose()`."""
    return await stack.enter_async_context(serve(server_settings))


async def settled(page: Page) -> None:
    """Wait until the last turn has ended: Enter sends nothing while a turn runs."""
    await expect(last_turn(page)).to_have_attribute("data-state", "completed")
    await expect(page.get_by_test_id("send-button")).to_be_enabled()


def turn(page: Page, number: int) -> Locator:
    """The assistant turn at `number` (from 0) of the open conversation."""
    return page.get_by_test_id("assistant-turn").nth(number)


async def greet(page: Page, llm: ScriptedLLM) -> None:
    """(1) "hello" gets its answer token by token."""
    llm.script(reply(GREETING, chunk_delay_s=0.1))
    await quiet(page)
    await send(page, "hello")
    # Seen part-way: the answer streams in, it does not land whole at the end.
    await page.wait_for_function(
        """full => {
            const el = document.querySelector('[data-testid="answer-text"]');
            return el && el.textContent.length > 0 && el.textContent.length < full.length;
        }""",
        arg=GREETING,
        timeout=FIRST_TURN_MS,
    )
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text(GREETING)
    await settled(page)
    await expect(last_turn(page)).to_have_attribute("data-state", "completed")


async def read_notes(page: Page, llm: ScriptedLLM) -> None:
    """(2) The model reads notes.md; its card succeeds and shows the file."""
    llm.script(reply(tool_calls=[call("file_read", path="notes.md")]), reply("It says: feed."))
    await send(page, "what is in notes.md?")
    card = last_turn(page).get_by_test_id("tool-card")
    await expect(card).to_have_attribute("data-status", "success")
    await expect(card.get_by_test_id("tool-command")).to_contain_text("file_read")
    await expect(card.get_by_test_id("tool-output")).to_contain_text("feed the ducks")
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text("It says: feed.")
    await settled(page)


async def write_notes(page: Page, llm: ScriptedLLM, notes: Path) -> None:
    """(3) A write onto notes.md asks "overwrite" with its diff; Allow once writes it."""
    llm.script(reply(tool_calls=[call("file_write", path="notes.md", content=NEW)]))
    # Asked as a write: an append asked for and done as an overwrite is flagged instead
    # (test_mismatch_card_web.py).
    await send(page, "write 'clean the pond' into notes.md as well")
    card = last_turn(page).get_by_test_id("approval-card")
    await expect(card.get_by_test_id("action-description")).to_have_text(
        "overwrite existing file notes.md"
    )
    diff = card.get_by_test_id("diff")
    await expect(diff.locator(".diff-add")).to_have_text(["+clean the pond"])
    await screenshot(page, "walkthrough_write_question")
    assert await asyncio.to_thread(notes.read_text) == OLD, "nothing is written before Allow"
    llm.script(reply("Added it."))
    await card.get_by_test_id("approve-once").click()
    await expect(card.get_by_test_id("approval-outcome")).to_have_text("Allowed once")
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text("Added it.")
    await expect(last_turn(page).get_by_test_id("tool-changes")).to_contain_text("notes.md")
    assert await asyncio.to_thread(notes.read_text) == NEW
    await settled(page)


async def deny_rm(page: Page, llm: ScriptedLLM, notes: Path) -> None:
    """(4) `rm notes.md` asks; Deny leaves the file and labels the call denied."""
    await _decide(page, llm, "rm notes.md", "deny", "Left it alone.")
    card = last_turn(page).get_by_test_id("tool-card")
    await expect(card).to_have_attribute("data-status", "denied")
    await expect(card.get_by_test_id("tool-outcome")).to_have_text("denied by you")
    assert await asyncio.to_thread(notes.exists)
    await settled(page)


async def revert_write(page: Page, notes: Path) -> None:
    """(5) The write's turn is reverted: notes.md has its old text back."""
    button = turn(page, 2).get_by_test_id("turn-revert")
    await button.click()
    await expect(button).to_have_text("Reverted")
    await expect(page.get_by_test_id("toast-info")).to_contain_text("Reverted 1 file(s)")
    assert await asyncio.to_thread(notes.read_text) == OLD


async def expect_history(page: Page, partial: str) -> None:
    """(7, 8) The conversation as it happened, labelled as it was live."""
    await expect(page.get_by_test_id("user-message")).to_have_count(5)
    greeting, read, written, denied, stopped = [turn(page, n) for n in range(5)]
    await expect(greeting.get_by_test_id("answer-text")).to_have_text(GREETING)
    await expect(read.get_by_test_id("tool-card")).to_have_attribute("data-status", "success")
    await expect(written.get_by_test_id("approval-outcome")).to_have_text("Allowed once")
    await expect(written.get_by_test_id("tool-outcome")).to_have_text("approved by you")
    await expect(denied.get_by_test_id("approval-outcome")).to_have_text("Denied")
    await expect(denied.get_by_test_id("tool-outcome")).to_have_text("denied by you")
    await expect(stopped).to_have_attribute("data-state", "cancelled")
    await expect(stopped.get_by_test_id("answer-cut")).to_have_text("stopped")
    shown = await stopped.get_by_test_id("answer-text").inner_text()
    assert shown.startswith(partial), (shown, partial)


async def test_the_walkthrough_in_one_conversation(
    page: Page,
    llm: ScriptedLLM,
    workspace: Path,
    server_settings: Settings,
    stack: AsyncExitStack,
) -> None:
    notes = await write(workspace / "notes.md", OLD)
    await greet(page, llm)
    await read_notes(page, llm)
    await write_notes(page, llm, notes)
    await deny_rm(page, llm, notes)
    await revert_write(page, notes)
    # (6) A slow answer stopped part-way.
    await _stop_an_answer(page, llm)
    await expect(last_turn(page).get_by_test_id("turn-status")).to_have_text("Stopped.")
    partial = await last_turn(page).get_by_test_id("answer-text").inner_text()
    await screenshot(page, "walkthrough_stopped")

    # (7) Reopen: a reload shows the same conversation, each turn labelled.
    await page.reload()
    await expect_history(page, partial)
    await screenshot(page, "walkthrough_reopened")

    # (8) Restart: the page goes, DuckLM stops and starts again on the same data dir.
    await page.goto("about:blank")  # closes the page's streams, as closing the tab does
    await stack.aclose()
    async with serve(server_settings) as again:
        await page.goto(await again.login_url())  # sessions do not outlive a restart
        await page.get_by_test_id("conversation-item").get_by_role("link").click()
        await expect_history(page, partial)
        await quiet(page)
        llm.script(reply("Still here."))
        await send(page, "are you still there?")
        await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text("Still here.")
        await settled(page)
        await expect(page.get_by_test_id("user-message")).to_have_count(6)
        await screenshot(page, "walkthrough_after_restart")
        await page.goto("about:blank")  # before this server stops, as above


class TestModelCrash:
    """(9) The local model server crashes; the page says so, then answers."""

    @pytest.fixture
    async def keeping(
        self, settings: Settings, tmp_path: Path
    ) -> AsyncIterator[tuple[Settings, ServerWatch]]:
        async with kept(settings, tmp_path, backoff_s=0.5, wait_s=60.0) as (local, watch, _):
            yield local, watch

    @pytest.fixture
    def server_settings(self, keeping: tuple[Settings, ServerWatch]) -> Settings:
        return keeping[0]

    async def test_a_crash_mid_conversation_is_said_and_the_answer_follows(
        self, page: Page, keeping: tuple[Settings, ServerWatch]
    ) -> None:
        local, watch = keeping
        await send(page, "hello")
        await expect(last_turn(page)).to_contain_text(ANSWER, timeout=FIRST_TURN_MS)
        await settled(page)

        assert local.llama_model is not None
        await asyncio.to_thread(hold_starts, local.llama_model)
        await crash_server(local, watch)
        await send(page, "hello again")
        line = last_turn(page).get_by_test_id("model-restart")
        await expect(line).to_contain_text("Restarting the model server")
        await expect(last_turn(page)).not_to_contain_text(ANSWER)  # the answer waits
        await screenshot(page, "walkthrough_model_restarting")
        await asyncio.to_thread(release_starts, local.llama_model)
        await expect(line).to_have_attribute("data-state", "restarted")
        await expect(last_turn(page)).to_contain_text(ANSWER)
        await expect(last_turn(page).get_by_test_id("turn-error")).to_have_count(0)
        await expect(page.get_by_test_id("user-message")).to_have_count(2)
