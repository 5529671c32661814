"""The web chat's Export menu (Markdown, JSONL) and its Log out button, in a real browser."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Download, Page, expect

from tests.e2e.conftest import TIMEOUT_MS, screenshot
from tests.e2e.test_web_chat import last_turn, quiet, send
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served

pytestmark = pytest.mark.slow

FIRST_TURN_MS = 3 * TIMEOUT_MS


async def _download(page: Page, testid: str) -> tuple[Download, str]:
    """Open the Export menu, take one format; the download and its text."""
    await page.get_by_test_id("export-button").click()
    async with page.expect_download() as started:
        await page.get_by_test_id(testid).click()
    download = await started.value
    path = await download.path()
    return download, await asyncio.to_thread(Path(path).read_text, encoding="utf-8")


async def test_export_both_formats_import_the_jsonl_then_log_out(
    page: Page, served: Served, llm: ScriptedLLM
) -> None:
    await expect(page.get_by_test_id("export-menu")).to_be_hidden()  # no conversation yet
    llm.script(reply("Porto, in May."))
    await quiet(page)
    await send(page, "where do I go?")
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text(
        "Porto, in May.", timeout=FIRST_TURN_MS
    )
    await expect(page.get_by_test_id("send-button")).to_be_enabled()
    conversation = page.url.rsplit("#/c/", 1)[1]

    await expect(page.get_by_test_id("export-menu")).to_be_visible()
    download, markdown = await _download(page, "export-md")
    assert download.suggested_filename == f"ducklm-{conversation}.md"
    assert "## You\n\nwhere do I go?" in markdown
    assert "## DuckLM\n\nPorto, in May." in markdown
    await page.get_by_test_id("export-button").click()
    await expect(page.get_by_test_id("export-jsonl")).to_be_visible()
    await screenshot(page, "export_menu")
    await page.get_by_test_id("export-button").click()  # closes it again

    download, jsonl = await _download(page, "export-jsonl")
    assert download.suggested_filename == f"ducklm-{conversation}.jsonl"
    lines = [json.loads(line) for line in jsonl.splitlines()]
    said = [(line["role"], line["content"]) for line in lines if line["type"] == "message"]
    assert said == [("user", "where do I go?"), ("assistant", "Porto, in May.")]
    assert any(line["type"] == "event" for line in lines)

    # The JSONL back as a new conversation: the same messages, shown in the chat.
    imported = await served.client.post("/v1/conversations/import", json={"jsonl": jsonl})
    assert imported.status_code == 201
    await page.goto(f"/#/c/{imported.json()['id']}")
    await page.reload()  # a new hash alone only switches views: the list is read on load
    await expect(page.get_by_test_id("conversation-item")).to_have_count(2)
    await expect(page.get_by_test_id("user-message")).to_have_text(["where do I go?"])
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text("Porto, in May.")

    (cookie,) = await page.context.cookies()
    await page.get_by_test_id("logout-button").click()
    await expect(page.get_by_test_id("login-page")).to_contain_text("ducklm open")
    await screenshot(page, "logged_out")
    assert await page.context.cookies() == []
    # The session is over on the server too: the old cookie, sent again, opens nothing.
    client = await asyncio.to_thread(httpx.AsyncClient, base_url=served.url, timeout=30)
    async with client:
        again = await client.get(
            "/v1/conversations", headers={"Cookie": f"{cookie['name']}={cookie['value']}"}
        )
    assert again.status_code == 401
    await page.reload()
    await expect(page.get_by_test_id("login-page")).to_be_visible()
