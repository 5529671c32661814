"""The web chat's Revert buttons: a tool card that changed files and its turn roll the
workspace back through the real server, proven on disk; an outside change is refused
until the person says "Revert anyway"."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from tests.e2e.test_web_chat import last_turn, quiet, send
from tests.support.disk import snapshot
from tests.support.scripted_llm import ScriptedLLM, call, reply

pytestmark = pytest.mark.slow

# The first turn loads the embedding model: on a loaded 2-core machine, a minute or more.
FIRST_TURN_MS = 240_000
REPLACE = "find . -name '*.txt' -exec sed -i s/foo/bar/g {} +"


@pytest.fixture
async def txt_files(workspace: Path) -> Path:
    def seed() -> None:
        (workspace / "a.txt").write_text("foo and foo\n")
        (workspace / "sub").mkdir()
        (workspace / "sub" / "b.txt").write_text("foo\n")
        (workspace / "sub" / "b.txt").chmod(0o600)

    await asyncio.to_thread(seed)
    return workspace


async def test_revert_turn_puts_back_what_the_approved_command_changed(
    page: Page, llm: ScriptedLLM, txt_files: Path
) -> None:
    before = await snapshot(txt_files)
    llm.script(reply(tool_calls=[call("shell_exec", command=REPLACE)]), reply("Replaced."))
    await quiet(page)
    await send(page, "replace every 'foo' with 'bar' in the txt files")
    approve = page.get_by_test_id("approval-card").get_by_test_id("approve-once")
    await expect(approve).to_be_visible(timeout=FIRST_TURN_MS)
    await approve.click()
    turn = last_turn(page)
    card = turn.get_by_test_id("tool-card")
    await expect(card.get_by_test_id("tool-changes")).to_contain_text("a.txt (modified)")
    await expect(card.get_by_test_id("tool-changes")).to_contain_text("sub/b.txt (modified)")
    assert await asyncio.to_thread((txt_files / "a.txt").read_text) == "bar and bar\n"

    await turn.get_by_test_id("turn-revert").click()
    await expect(turn.get_by_test_id("turn-revert")).to_have_text("Reverted")
    await expect(page.get_by_test_id("toast-info")).to_contain_text("Reverted 2 file(s)")
    assert await snapshot(txt_files) == before


async def test_a_card_reverts_after_a_reload_and_an_outside_change_needs_force(
    page: Page, llm: ScriptedLLM, txt_files: Path
) -> None:
    command = "echo new > made.txt"
    llm.script(reply(tool_calls=[call("shell_exec", command=command)]), reply("Made."))
    await quiet(page)
    await send(page, "make a file")
    await expect(last_turn(page).get_by_test_id("tool-revert")).to_be_visible(timeout=FIRST_TURN_MS)
    await page.reload()  # the button comes back from the audited events
    button = last_turn(page).get_by_test_id("tool-revert")
    await expect(button).to_have_text("Revert")

    await asyncio.to_thread((txt_files / "made.txt").write_text, "edited by hand\n")
    await button.click()
    await expect(page.get_by_test_id("toast-error")).to_contain_text("changed outside DuckLM")
    await expect(button).to_have_text("Revert anyway")
    assert await asyncio.to_thread((txt_files / "made.txt").exists)
    await button.click()
    await expect(button).to_have_text("Reverted")
    assert not await asyncio.to_thread((txt_files / "made.txt").exists)


async def test_after_a_reload_a_turn_reverts_alone_and_then_reads_as_reverted(
    page: Page, llm: ScriptedLLM, txt_files: Path
) -> None:
    """The bug: after a reload, "Revert this turn" on an earlier turn deleted a file
    uploaded after it, unasked; and reverted turns offered "Revert this turn" again."""
    llm.script(reply(tool_calls=[call("shell_exec", command="echo over >> a.txt")]), reply("Ok."))
    await quiet(page)
    await send(page, "add a line to a.txt")
    await expect(last_turn(page).get_by_test_id("turn-revert")).to_be_visible(timeout=FIRST_TURN_MS)
    notes = {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"uploaded later\n"}
    async with page.expect_file_chooser() as chosen:
        await page.get_by_test_id("upload-button").click()
    await (await chosen.value).set_files(notes)
    await expect(page.get_by_test_id("upload-item")).to_contain_text("Uploaded notes.txt")

    await page.reload()
    turn = last_turn(page)
    await expect(turn.get_by_test_id("turn-revert")).to_have_text("Revert this turn")
    await turn.get_by_test_id("turn-revert").click()
    await expect(page.get_by_test_id("toast-info")).to_contain_text("Reverted 1 file(s): a.txt")
    assert await asyncio.to_thread((txt_files / "a.txt").read_text) == "foo and foo\n"
    assert await asyncio.to_thread((txt_files / "notes.txt").read_bytes) == b"uploaded later\n"

    await page.reload()  # reverted reads as reverted, in the turn and on its card
    turn = last_turn(page)
    await expect(turn.get_by_test_id("turn-revert")).to_have_text("Reverted")
    await expect(turn.get_by_test_id("turn-revert")).to_be_disabled()
    await expect(turn.get_by_test_id("tool-revert")).to_have_text("Reverted")
