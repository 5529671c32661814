"""Logging the browser in: the login URL, the session cookie, and the page without one."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, BrowserContext, expect

from tests.e2e.conftest import DESKTOP, TIMEOUT_MS, screenshot
from tests.e2e.test_web_chat import last_turn, quiet, send
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served

pytestmark = pytest.mark.slow

FIRST_TURN_MS = 3 * TIMEOUT_MS


@pytest.fixture
async def context(browser: Browser, served: Served) -> AsyncIterator[BrowserContext]:
    """A fresh browser profile that has not logged in."""
    fresh = await browser.new_context(viewport=DESKTOP, base_url=served.url)
    fresh.set_default_timeout(TIMEOUT_MS)
    try:
        yield fresh
    finally:
        await fresh.close()


async def test_the_login_url_opens_the_chat_and_a_reload_keeps_it(
    context: BrowserContext, served: Served, llm: ScriptedLLM
) -> None:
    page = await context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))

    await page.goto("/")  # no session: the page says how to log in, and has no chat
    await expect(page.get_by_test_id("login-page")).to_contain_text("ducklm open")
    await expect(page.get_by_test_id("composer")).to_have_count(0)
    await screenshot(page, "login_help")

    login = await served.login_url()
    await page.goto(login)
    assert page.url == f"{served.url}/"
    (cookie,) = await context.cookies()
    assert cookie["name"] == served.cookie_name
    assert cookie["httpOnly"] is True
    assert cookie["sameSite"] == "Strict"
    assert cookie["value"] != served.token
    assert await page.evaluate("document.cookie") == ""  # no script can read it

    llm.script(reply("Quack from the session."))
    await quiet(page)
    await send(page, "hello")  # a POST: needs the cookie and the CSRF header
    # Run first in a process, this turn loads the embedding model: slow on a busy machine.
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text(
        "Quack from the session.", timeout=FIRST_TURN_MS
    )
    await expect(page.get_by_test_id("send-button")).to_be_enabled()

    await page.reload()
    await expect(page.get_by_test_id("user-message")).to_have_text(["hello"])
    await expect(page.get_by_test_id("conversation-item")).to_have_count(1)
    await screenshot(page, "logged_in_after_reload")

    await page.goto(login)  # a used link does not log in again
    await expect(page.get_by_test_id("login-reason")).to_contain_text("already used")
    assert not problems, problems
