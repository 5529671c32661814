"""The composer's MCP completion: `/` lists a real server's prompts, one runs as sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from ducklm.config.settings import Settings
from tests.e2e.test_web_chat import last_turn, quiet
from tests.support.mcp_prompt_config import prompt_server
from tests.support.mcp_servers import write_config
from tests.support.scripted_llm import ScriptedLLM, reply

pytestmark = pytest.mark.slow


@pytest.fixture
def server_settings(settings: Settings, tmp_path: Path) -> Settings:
    config = write_config(tmp_path / "mcp.json", notes=prompt_server())
    return settings.model_copy(update={"mcp_config": config})


async def test_slash_lists_prompts_with_arguments_and_runs_the_chosen_one(
    page: Page, llm: ScriptedLLM
) -> None:
    llm.script(reply("Looks fine."))
    await quiet(page)
    box = page.get_by_test_id("composer-input")
    await box.press_sequentially("/")
    items = page.get_by_test_id("mcp-complete-item")
    # The first `/` starts the server (a Python process): allow for a loaded machine.
    await expect(items).to_have_count(2, timeout=120_000)
    review = items.filter(has_text="/notes:review")
    await expect(review).to_contain_text("Review a piece of code")
    await expect(review.get_by_test_id("mcp-args")).to_have_text("code language?")

    await box.press_sequentially("notes:r")
    await expect(items).to_have_count(1)
    await box.press("Enter")  # takes the prompt, does not send
    await expect(box).to_have_value("/notes:review ")
    await box.press_sequentially('"x = 1"')
    await box.press("Enter")

    sent = page.get_by_test_id("user-message").last.get_by_test_id("sent-message")
    await expect(sent).to_have_text("Please review this python code:\nx = 1", timeout=120_000)
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text(
        "Looks fine.", timeout=120_000
    )
