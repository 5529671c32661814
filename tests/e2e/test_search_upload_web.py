"""The web chat's conversation search opens a conversation at the message that matched;
the Memory page lists what was said beside the facts; a file uploaded with the Attach
button lands in the workspace and its Undo takes it out; a tool card downloads the file
its call wrote."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect

from tests.api.test_search_and_uploads import chat, search_until
from tests.e2e.conftest import TIMEOUT_MS, screenshot
from tests.e2e.test_web_chat import last_turn, quiet, send
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served

pytestmark = pytest.mark.slow

FIRST_TURN_MS = 240_000  # the first turn loads the embedding model on a loaded machine
FILLER = "\n\n".join(f"Line {n} of a long answer about something else." for n in range(40))


async def test_search_opens_the_conversation_at_the_message(
    page: Page, served: Served, llm: ScriptedLLM
) -> None:
    porto = await chat(
        served, llm, "Plan a weekend trip for me", "Go to Porto: the Ribeira at dusk."
    )
    for n in range(3):  # pushes the Porto answer far above the bottom the chat opens at
        await chat(served, llm, f"tell me more, part {n}", FILLER)
    other = await chat(served, llm, "What is a monad?", "A monoid of endofunctors.")

    def said_in_porto(hits: list[dict[str, Any]]) -> bool:
        return any(h["conversation_id"] == porto and h["kind"] == "message" for h in hits)

    assert said_in_porto(await search_until(served, "Porto", said_in_porto))
    await page.goto(f"/#/c/{other}")
    await page.reload()  # the conversation list is read on load
    await expect(page.get_by_test_id("user-message")).to_have_text(["What is a monad?"])

    await page.get_by_test_id("conversation-search-input").fill("Porto")
    results = page.locator('[data-testid="search-result"][data-kind="message"]')
    result = results.filter(has_text="Ribeira")
    await expect(result).to_have_count(1, timeout=TIMEOUT_MS)
    await expect(result).to_contain_text("DuckLM said")
    await expect(result.locator("mark")).to_have_text("Porto")
    await screenshot(page, "conversation_search")
    await result.click()

    await expect(page).to_have_url(f"{served.url}/#/c/{porto}")
    hit = page.locator(".search-hit")
    await expect(hit).to_have_text("Go to Porto: the Ribeira at dusk.")
    await expect(hit).to_be_in_viewport()
    await screenshot(page, "search_opened_at_message")

    # The Memory page: no fact holds Porto (memory was off), what was said does.
    await page.get_by_test_id("nav-memory").click()
    await page.get_by_test_id("memory-query").fill("Porto")
    await page.get_by_test_id("memory-query").press("Enter")
    said = page.get_by_test_id("said-item").filter(has_text="Ribeira")
    await expect(said).to_contain_text("DuckLM said in “Plan a weekend trip for me”")
    await expect(page.get_by_test_id("said-status")).to_contain_text("said in conversations")
    await expect(page.get_by_test_id("memory-status")).to_contain_text("0 found")


async def test_attach_uploads_into_the_workspace_undo_and_a_tool_card_downloads(
    page: Page, llm: ScriptedLLM, workspace: Path
) -> None:
    llm.script(
        reply(tool_calls=[call("file_write", path="report.txt", content="made by DuckLM\n")]),
        reply("Wrote report.txt."),
    )
    await quiet(page)
    await send(page, "write a report")
    card = last_turn(page).get_by_test_id("tool-card")
    link = card.get_by_test_id("tool-download")
    await expect(link).to_have_text("report.txt", timeout=FIRST_TURN_MS)
    async with page.expect_download() as started:
        await link.click()
    download = await started.value
    got = await asyncio.to_thread(Path(await download.path()).read_text)
    assert got == "made by DuckLM\n" and download.suggested_filename == "report.txt"

    # A payload, not a path: Playwright's stat of a path would block the loop.
    notes = {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"my own notes\n"}
    async with page.expect_file_chooser() as chosen:
        await page.get_by_test_id("upload-button").click()
    await (await chosen.value).set_files(notes)
    item = page.get_by_test_id("upload-item")
    await expect(item).to_contain_text("Uploaded notes.txt")
    assert await asyncio.to_thread((workspace / "notes.txt").read_text) == "my own notes\n"
    await screenshot(page, "upload_attached")

    await item.get_by_test_id("upload-undo").click()
    await expect(item).to_contain_text("Upload of notes.txt undone")
    assert not await asyncio.to_thread((workspace / "notes.txt").exists)
    assert await asyncio.to_thread((workspace / "report.txt").exists)  # the tool's file stays
