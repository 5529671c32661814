"""A task whose process died mid-run, in the web chat: the restart card's Go on and Stop.

A `ducklm chat` process is killed while its model request is in flight, on the data dir
the server then starts on; the server's startup marks the task interrupted by restart.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, Route, expect

from ducklm.config.settings import Settings
from tests.e2e.conftest import screenshot
from tests.e2e.test_web_chat import last_turn, quiet, send
from tests.support.cli import cli_env, kill_mid_run
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served, stream

pytestmark = pytest.mark.slow

THREAD = "restarted"
RESTART_TEXT = "stopped when DuckLM restarted"


@pytest.fixture
async def server_settings(settings: Settings, llm: ScriptedLLM, tmp_path: Path) -> Settings:
    """The server's settings, once a CLI run on them has died mid-run (before it starts)."""
    await kill_mid_run(llm, cli_env(settings), tmp_path, THREAD)
    return settings


async def the_task(served: Served) -> dict[str, Any]:
    response = await served.client.get("/v1/tasks", params={"conversation_id": THREAD})
    (task,) = response.json()
    return task


async def expect_card(page: Page) -> None:
    card = page.get_by_test_id("restart-card")
    await expect(card).to_have_count(1)
    await expect(card).to_be_visible()
    await expect(card.get_by_test_id("restart-text")).to_contain_text(RESTART_TEXT)
    await expect(card.get_by_test_id("restart-reason")).to_have_text("interrupted by restart")
    await expect(card.get_by_role("button", name="Go on")).to_be_enabled()
    await expect(card.get_by_role("button", name="Stop")).to_be_enabled()
    await expect(page.get_by_test_id("approval-card")).to_have_count(0)
    hint = page.get_by_test_id("composer-hint")
    await expect(hint).to_contain_text("Go on")
    await expect(hint).not_to_contain_text("question")
    await expect(page.get_by_test_id("send-button")).to_be_disabled()


async def test_go_on_resumes_a_task_stopped_by_a_restart(
    page: Page, llm: ScriptedLLM, served: Served
) -> None:
    task = await the_task(served)
    assert (task["status"], task["error"], task["pending"]) == (
        "interrupted",
        "interrupted by restart",
        [],
    )

    # Chosen in the sidebar, then again after a reload: both load the task's state.
    await page.get_by_test_id("conversation-item").get_by_role("link").click()
    await expect(page.get_by_test_id("user-message")).to_have_text(["hello"])
    await expect_card(page)
    await page.reload()
    await expect_card(page)
    for theme in ("dark", "light"):
        await expect(page.locator("html")).to_have_attribute("data-theme", theme)
        await screenshot(page, f"restart_card_{theme}")
        await page.get_by_test_id("theme-toggle").click()

    llm.script(reply("Recovered."))
    await page.get_by_test_id("restart-card").get_by_role("button", name="Go on").click()

    turn = last_turn(page)
    await expect(turn.get_by_test_id("answer-text")).to_have_text("Recovered.")
    await expect(turn).to_have_attribute("data-state", "completed")
    await expect(page.get_by_test_id("restart-card")).to_have_count(0)
    await expect(page.get_by_test_id("send-button")).to_be_enabled()
    await expect(page.get_by_test_id("composer-hint")).to_have_text("")
    assert (await the_task(served))["status"] == "completed"


async def test_stop_on_the_card_cancels_the_task(
    page: Page, llm: ScriptedLLM, served: Served
) -> None:
    await page.goto(f"/#/c/{THREAD}")
    await expect_card(page)
    await page.get_by_test_id("restart-card").get_by_role("button", name="Stop").click()

    await expect(page.get_by_test_id("restart-card")).to_have_count(0)
    await expect(last_turn(page).get_by_test_id("turn-status")).to_have_text("Stopped.")
    await expect(page.get_by_test_id("stop-button")).to_be_hidden()
    await expect(page.get_by_test_id("composer-hint")).to_have_text("")
    assert (await the_task(served))["status"] == "cancelled"

    # The conversation takes a new message again.
    llm.script(reply("Fresh start."))
    await quiet(page)
    await send(page, "are you there?")
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text("Fresh start.")
    await expect(page.get_by_test_id("send-button")).to_be_enabled()


async def test_a_refused_go_on_is_reported_and_the_card_stays(
    page: Page, llm: ScriptedLLM, served: Served
) -> None:
    held: asyncio.Queue[Route] = asyncio.Queue()

    async def hold(route: Route) -> None:
        await held.put(route)

    await page.route("**/resume/stream", hold)
    await page.goto(f"/#/c/{THREAD}")
    await expect_card(page)
    card = page.get_by_test_id("restart-card")
    await card.get_by_role("button", name="Go on").click()

    # While the request is on its way, neither button can be pressed again.
    route = await asyncio.wait_for(held.get(), 10)
    await expect(card.get_by_role("button", name="Go on")).to_be_disabled()
    await expect(card.get_by_role("button", name="Stop")).to_be_disabled()

    # Another client goes on with the task first: the page's request is then refused.
    llm.script(reply("Done elsewhere."))
    task = await the_task(served)
    events = await stream(served, f"/v1/tasks/{task['task_id']}/resume/stream", {})
    assert events[-1]["status"] == "completed"
    await route.continue_()

    await expect(page.get_by_test_id("toast-error")).to_be_visible()
    await expect(card).to_be_visible()
    await expect(card.get_by_role("button", name="Go on")).to_be_enabled()
    await expect(card.get_by_role("button", name="Stop")).to_be_enabled()
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_count(0)
