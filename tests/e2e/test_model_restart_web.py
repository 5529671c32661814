"""The web chat says "restarting the model server" while DuckLM restarts it, then answers.

The served app talks to `tests/support/fake_llama_server.py`, kept as `ducklm serve`
keeps its local server; the test kills that server and sends a message while the
keeper waits to restart it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from ducklm.config.settings import Settings
from ducklm.models.local.state import ServerWatch
from tests.e2e.conftest import screenshot
from tests.e2e.test_web_chat import last_turn, send
from tests.integration.test_model_restart import crash_server, kept
from tests.support.fake_llama_server import ANSWER, hold_starts, release_starts

pytestmark = pytest.mark.slow

FIRST_TURN_MS = 240_000  # the first turn in a process loads the embedding model


@pytest.fixture
async def keeping(
    settings: Settings, tmp_path: Path
) -> AsyncIterator[tuple[Settings, ServerWatch]]:
    """The fake server kept by DuckLM; the keeper restarts it half a second after a crash."""
    async with kept(settings, tmp_path, backoff_s=0.5, wait_s=60.0) as (served, watch, _):
        yield served, watch


@pytest.fixture
def server_settings(keeping: tuple[Settings, ServerWatch]) -> Settings:
    """The app serves on the kept fake server."""
    return keeping[0]


async def test_a_message_during_a_restart_shows_the_restart_and_is_answered(
    page: Page, keeping: tuple[Settings, ServerWatch]
) -> None:
    served, watch = keeping
    await send(page, "hello")  # the first turn loads what a turn needs
    await expect(last_turn(page)).to_contain_text(ANSWER, timeout=FIRST_TURN_MS)

    model = served.llama_model
    assert model is not None
    await asyncio.to_thread(hold_starts, model)  # the restarted server waits until released
    await crash_server(served, watch)
    await send(page, "hello again")
    line = last_turn(page).get_by_test_id("model-restart")
    await expect(line).to_contain_text("Restarting the model server (it crashed (SIGSEGV) at ")
    await expect(line).to_contain_text("The answer waits for it, up to 60 s.")
    await expect(page.get_by_text("ducklm llama start")).to_have_count(0)
    await screenshot(page, "model_restarting")
    await asyncio.to_thread(release_starts, model)
    await expect(line).to_have_attribute("data-state", "restarted")
    await expect(line).to_contain_text("The model server is back after ")
    await expect(last_turn(page)).to_contain_text(ANSWER)
    await expect(last_turn(page).get_by_test_id("turn-error")).to_have_count(0)
    await expect(page.get_by_text("ducklm llama start")).to_have_count(0)
