"""Browser fixtures: the real server on the scripted model, and Debian's Chromium.

Playwright's async API runs on the test's event loop beside the server (see
tests/support/server.py), so blockbuster keeps watching both; the sync API would block
the loop. Each test leaves a screenshot of its last state in tests/e2e/artifacts/.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from blockbuster import BlockBuster
from playwright.async_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    async_playwright,
    expect,
)

from tests.support.chromium import shared_chromium
from tests.support.server import Served

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).parent / "artifacts"
DESKTOP = {"width": 1280, "height": 800}
# The first turn in a process loads the embedding model (several seconds); after that a
# turn on the scripted model takes well under a second.
TIMEOUT_MS = 30_000
expect.set_options(timeout=TIMEOUT_MS)


# Playwright's start-up looks for its bundled driver on disk, a blocking call that runs
# once before any test code; everything after it is asynchronous.
PLAYWRIGHT_START = ("playwright/_impl/_driver.py", {"compute_driver_executable"})


@pytest.fixture(scope="session")
def chromium() -> Iterator[str]:
    """One headless Chromium for the whole session: its DevTools endpoint.

    Each test connects to it and gets fresh browser contexts (profiles), so no test
    sees another's cookies or storage; launching Chromium once per test cost 1-3 s each.
    """
    if not shutil.which(CHROMIUM):
        missing = f"{CHROMIUM} is missing: run scripts/system-deps.sh --test"
        if os.environ.get("CI"):  # CI installs it: its absence there is a failure
            pytest.fail(missing)
        pytest.skip(missing)
    with shared_chromium(CHROMIUM) as endpoint:
        yield endpoint


@pytest.fixture
async def browser(chromium: str, blockbuster: BlockBuster) -> AsyncIterator[Browser]:
    """The session's Chromium (Debian's package), connected for this test."""
    for function in blockbuster.functions.values():
        function.can_block_in(*PLAYWRIGHT_START)
    async with async_playwright() as playwright:
        connected = await playwright.chromium.connect_over_cdp(chromium)
        try:
            yield connected
        finally:
            await connected.close()  # closes this test's contexts, not Chromium


@pytest.fixture
def viewport() -> dict[str, int]:
    """The window size; a test overrides this fixture to try phone width."""
    return DESKTOP


@pytest.fixture
async def page(
    browser: Browser, served: Served, viewport: dict[str, int], request: pytest.FixtureRequest
) -> AsyncIterator[Page]:
    """A fresh browser profile logged in to the web chat; fails the test on any script error.

    It logs in as a person does: it opens a one-time login URL, which sets the session
    cookie and goes on to the chat.

    The screenshot is taken whatever the outcome: a failing test's is the one that
    explains it.
    """
    context: BrowserContext = await browser.new_context(viewport=viewport, base_url=served.url)
    opened = await context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(f"page error: {error}"))

    def on_console(message: ConsoleMessage) -> None:
        # A refused API call logs "Failed to load resource"; the chat shows those itself
        # and tests that provoke them check the notice. Anything else (CSP, script) fails.
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            problems.append(f"console error: {message.text}")

    opened.on("console", on_console)
    opened.set_default_timeout(TIMEOUT_MS)
    await opened.goto(await served.login_url())
    try:
        yield opened
    finally:
        await screenshot(opened, request.node.name)
        await context.close()
    assert not problems, problems


async def screenshot(page: Page, name: str) -> None:
    """Save the whole page as tests/e2e/artifacts/<name>.png (also for states mid-test)."""
    # Playwright would write the file with a blocking call on the loop; we write it.
    name = re.sub(r"[^\w.-]+", "_", name)
    image = await page.screenshot(full_page=True)
    await asyncio.to_thread(ARTIFACTS.mkdir, exist_ok=True)
    await asyncio.to_thread((ARTIFACTS / f"{name}.png").write_bytes, image)
