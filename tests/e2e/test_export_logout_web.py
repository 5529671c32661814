"""The web chat's Export menu and Log out, a login kept across a restart, `ducklm open THREAD`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, Download, Page, expect

from ducklm.config.settings import Settings
from tests.e2e.conftest import DESKTOP, TIMEOUT_MS, screenshot
from tests.e2e.test_web_chat import last_turn, quiet, send
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served, serve, stream

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


async def test_a_restart_keeps_the_browser_logged_in_and_open_thread_lands_there(
    browser: Browser, settings: Settings, llm: ScriptedLLM
) -> None:
    context = await browser.new_context(viewport=DESKTOP)
    fresh = await browser.new_context(viewport=DESKTOP)
    page = await context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    try:
        async with serve(settings) as first:
            made = await first.client.post("/v1/conversations", json={"title": "Kept"})
            thread = made.json()["id"]
            llm.script(reply("Still here."))
            body = {"message": "are you there?", "conversation_id": thread}
            body |= {"critic": False, "memory": False}
            assert (await stream(first, "/v1/chat/stream", body))[-1]["status"] == "completed"
            await page.goto(await first.login_url())
            await expect(page.get_by_test_id("composer")).to_be_visible()
            port = int(first.url.rsplit(":", 1)[1])

        # The same port, as `ducklm serve` restarted: the browser sends the same cookie.
        async with serve(settings, port=port) as second:
            await page.goto(f"{second.url}/#/c/{thread}")
            await expect(page.get_by_test_id("user-message")).to_have_text(["are you there?"])
            await expect(page.get_by_test_id("login-page")).to_have_count(0)
            await screenshot(page, "logged_in_after_restart")

            # `ducklm open THREAD` in a browser not logged in: it lands on the conversation.
            opened = await second.client.post("/v1/login-codes", params={"thread": thread})
            other = await fresh.new_page()
            await other.goto(opened.json()["url"])
            assert other.url == f"{second.url}/#/c/{thread}"
            await expect(other.get_by_test_id("view-title")).to_have_text("Kept")
            await expect(other.get_by_test_id("user-message")).to_have_text(["are you there?"])
    finally:
        await context.close()
        await fresh.close()
    assert not problems, problems
