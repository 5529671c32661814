"""The real agent-chat-ui in Chromium against DuckLM's server, the README's way.

The UI is agent-chat-ui as npm's `create-agent-chat-app` ships it (templates/vite),
built unchanged into tests/agent_chat_ui/dist by tests/agent_chat_ui/build.sh
(`scripts/system-deps.sh --test` installs and builds it). The page is served from an
origin of its own and talks to DuckLM browser-direct: the origin allowed by
`allowed_origins`, the token typed into the UI's "LangSmith API Key" field, assistant
`agent`. tests/api/test_agent_chat_ui.py replays its requests; this is the real thing.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, Response, expect

from ducklm.config.settings import Settings
from tests.e2e.conftest import DESKTOP, TIMEOUT_MS, screenshot
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served

pytestmark = pytest.mark.slow

DIST = Path(__file__).parents[1] / "agent_chat_ui" / "dist"
OVERWRITE = call("file_write", path="a.txt", content="new", overwrite=True)
# The template's index.html links a stylesheet it does not ship (its CSS is bundled).
TEMPLATE_404 = "/src/styles.css"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def ui_origin() -> Iterator[str]:
    """The built UI on a free loopback port, served from a thread (like the model)."""
    if not (DIST / "index.html").exists():
        missing = f"{DIST} is missing: run scripts/system-deps.sh --test"
        if os.environ.get("CI"):  # CI builds it: its absence there is a failure
            pytest.fail(missing)
        pytest.skip(missing)
    handler = functools.partial(_Quiet, directory=str(DIST))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def server_settings(settings: Settings, ui_origin: str) -> Settings:
    return settings.model_copy(update={"allowed_origins": [ui_origin]})


@pytest.fixture
async def page(
    browser: Browser, served: Served, llm: ScriptedLLM, request: pytest.FixtureRequest
) -> AsyncIterator[Page]:
    """A fresh profile; fails the test on a script error or a refused call to DuckLM."""
    llm.set_schema_replies(  # the reviewers behind each answer take none of the queue
        {
            "Critique": reply(json.dumps({"score": 0.8, "summary": "fine"})),
            "MemoryProposal": reply(json.dumps({"should_store": False})),
        }
    )
    context = await browser.new_context(viewport=DESKTOP)
    opened = await context.new_page()
    opened.set_default_timeout(TIMEOUT_MS)
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(f"page error: {error}"))

    def on_response(response: Response) -> None:
        if response.status >= 400 and not response.url.endswith(TEMPLATE_404):
            problems.append(f"{response.status} {response.request.method} {response.url}")

    opened.on("response", on_response)
    try:
        yield opened
    finally:
        await screenshot(opened, request.node.name)
        await context.close()
    assert not problems, problems


async def connect(page: Page, ui_origin: str, served: Served) -> None:
    """The README's browser-direct steps: the UI's form, filled in."""
    await page.goto(ui_origin)
    await page.locator("#apiUrl").fill(served.url)
    await page.locator("#assistantId").fill("agent")
    await page.locator("#apiKey").fill(served.token)
    await page.get_by_role("button", name="Continue").click()


async def send(page: Page, text: str) -> None:
    await page.get_by_placeholder("Type your message...").fill(text)
    await page.get_by_role("button", name="Send").click()


async def ask_overwrite(page: Page, llm: ScriptedLLM, target: Path) -> None:
    """A message whose file_write over `target` waits for the card; the file says "old"."""
    await asyncio.to_thread(target.write_text, "old")
    llm.script(reply(tool_calls=[OVERWRITE]))
    await send(page, "overwrite a.txt")
    await expect(page.get_by_role("button", name="Ignore")).to_be_visible()


async def test_connect_chat_approve_reject_and_reload(
    page: Page, ui_origin: str, served: Served, llm: ScriptedLLM, workspace: Path
) -> None:
    await connect(page, ui_origin, served)
    llm.script(reply("Hello there, duck."))
    await send(page, "hello there")
    await expect(page.get_by_text("Hello there, duck.")).to_be_visible()

    target = workspace / "a.txt"
    await ask_overwrite(page, llm, target)
    llm.script(reply("Overwritten."))
    await page.get_by_role("button", name="Accept", exact=True).click()
    await expect(page.get_by_text("Overwritten.")).to_be_visible()
    assert await asyncio.to_thread(target.read_text) == "new"

    await ask_overwrite(page, llm, target)
    llm.script(reply("Left alone."))
    await page.get_by_role("button", name="Ignore").click()
    await expect(page.get_by_text("Left alone.")).to_be_visible()
    await expect(page.get_by_text("the user rejected this call")).to_be_visible()
    assert await asyncio.to_thread(target.read_text) == "old"

    # Reload the thread, then find it again from a fresh start in the thread list.
    await page.reload()
    await expect(page.get_by_text("Left alone.")).to_be_visible()
    await page.goto(f"{ui_origin}/?apiUrl={served.url}&assistantId=agent&chatHistoryOpen=true")
    listed = page.get_by_role("button", name="hello there")
    await expect(listed).to_be_visible()
    await listed.click()
    await expect(page.get_by_text("Hello there, duck.")).to_be_visible()
    await expect(page.get_by_text("Left alone.")).to_be_visible()
