"""Connect in the web chat: a server behind OAuth signed in to from its card in the drawer.

The authorization server (tests/support/oauth_mcp_server.py) approves at once, so the
tab Connect opens goes there and straight back to DuckLM's callback page; the card then
says "connected".
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from ducklm.config.settings import Settings
from tests.e2e.conftest import screenshot
from tests.e2e.test_web_chat import last_turn, quiet, send
from tests.support.mcp_servers import oauth_server, write_config
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served

pytestmark = pytest.mark.slow


@pytest.fixture
async def server_settings(settings: Settings, tmp_path: Path) -> AsyncIterator[Settings]:
    async with oauth_server(60) as url:
        config = await asyncio.to_thread(write_config, tmp_path / "mcp.json", notes={"url": url})
        yield settings.model_copy(update={"mcp_config": config})


async def test_connect_signs_in_and_the_card_says_connected(
    page: Page, llm: ScriptedLLM, served: Served
) -> None:
    llm.script(reply("Quack."))
    await quiet(page)
    await send(page, "hi")  # the turn starts the server, which wants a sign-in
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text(
        "Quack.", timeout=120_000
    )
    await page.get_by_test_id("activity-toggle").click()
    card = page.locator('[data-testid="mcp-server"][data-server="notes"]')
    await expect(card).to_contain_text("needs sign-in")
    await screenshot(page, "mcp_needs_sign_in")

    async with page.context.expect_page() as opened:
        await card.get_by_test_id("mcp-connect").click()
    tab = await opened.value
    await tab.wait_for_url(re.compile(re.escape(f"{served.url}/v1/mcp/oauth/callback?")))
    await expect(tab.locator("p")).to_have_text(
        re.compile(r"DuckLM is connected to MCP server 'notes' \(\d+ tools\)\. You can close")
    )
    assert await tab.evaluate("window.opener") is None  # the sign-in tab cannot reach the chat

    await expect(card).to_have_attribute("data-state", "running", timeout=30_000)
    await expect(card).to_contain_text("connected")
    await expect(card.get_by_test_id("mcp-connect")).to_have_count(0)
