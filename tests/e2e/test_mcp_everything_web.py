"""The real npm everything server's tools in the web chat, as a Claude Code user tries them.

`@modelcontextprotocol/server-everything` in mcp.json (trusted: its read-only tools run
unasked) and the scripted model calling echo, the long-running operation, the tiny
image, resource links and structured content in one step: each tool card shows what
came back, in the words `ducklm/mcp/content.py` renders for the model (an image by the
path it was saved at, a link by its URI, structured content as JSON), and as the person
expects it (`ui/mcp-content.js`): the long-running call's progress while it runs
(`tool_progress`), the image itself (from `/v1/mcp/media/`), the links listed, the
structured content as a folded JSON block.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.async_api import Locator, Page, expect

from ducklm.config.settings import Settings
from tests.e2e.test_web_chat import last_turn, quiet, send
from tests.support.mcp_servers import npm_server, write_config
from tests.support.scripted_llm import ScriptedLLM, call, reply

pytestmark = pytest.mark.slow


@pytest.fixture
def server_settings(settings: Settings, tmp_path: Path) -> Settings:
    config = write_config(
        tmp_path / "mcp.json", everything=npm_server("server-everything", trust="trusted")
    )
    return settings.model_copy(update={"mcp_config": config, "mcp_tool_tokens": 100_000})


def card(turn: Locator, tool: str) -> Locator:
    return turn.locator(f'[data-testid="tool-card"][data-tool="everything__{tool}"]')


async def test_the_everything_servers_tools_show_on_their_cards(
    page: Page, llm: ScriptedLLM
) -> None:
    calls = [
        call("everything__echo", message="quack quack"),
        call("everything__trigger-long-running-operation", duration=3, steps=4),
        call("everything__get-tiny-image"),
        call("everything__get-resource-links", count=2),
        call("everything__get-structured-content", location="New York"),
    ]
    llm.script(reply(tool_calls=calls), reply("All five ran."))
    await quiet(page)
    await send(page, "try the everything server's tools")

    turn = last_turn(page)
    long_run = card(turn, "trigger-long-running-operation")
    # Seen while it runs (the first turn starts the server under Node: allow for a loaded
    # machine); the progress line goes when the call ends.
    progress = long_run.get_by_test_id("tool-progress-text")
    await expect(progress).to_have_text(re.compile(r"step [1-4] of 4"), timeout=120_000)
    await expect(long_run.get_by_test_id("tool-progress-bar")).to_have_attribute("max", "4")
    await expect(turn.get_by_test_id("answer-text")).to_have_text("All five ran.", timeout=120_000)
    await expect(long_run.get_by_test_id("tool-progress")).to_be_hidden()
    await expect(card(turn, "echo").get_by_test_id("tool-output")).to_contain_text("quack quack")
    await expect(long_run.get_by_test_id("tool-status")).to_have_text("done")
    await expect(long_run.get_by_test_id("tool-output")).to_contain_text("completed")
    image = card(turn, "get-tiny-image").get_by_test_id("tool-output")
    await expect(image).to_contain_text("[image image/png")
    await expect(image).to_contain_text("/mcp/media/")
    shown = card(turn, "get-tiny-image").get_by_test_id("mcp-image")
    await expect(shown).to_have_attribute("src", re.compile(r"^/v1/mcp/media/[0-9a-f]{24}\.png$"))
    # Loaded through the session, under the page's CSP: the browser decoded the image.
    await expect(shown).to_have_js_property("complete", True)
    assert await shown.evaluate("img => img.naturalWidth") > 0
    links_card = card(turn, "get-resource-links")
    links = links_card.get_by_test_id("tool-output")
    await expect(links).to_contain_text("[resource link: demo://resource/")
    uris = links_card.get_by_test_id("mcp-link-uri")
    await expect(uris).to_have_count(2)
    await expect(uris.first).to_have_text(re.compile(r"^demo://resource/"))
    folded = card(turn, "get-structured-content").get_by_test_id("mcp-structured")
    await folded.locator("summary").click()
    await expect(folded.locator("pre")).to_contain_text('"temperature":')
    structured = card(turn, "get-structured-content").get_by_test_id("tool-output")
    # The server's text block repeats its structured content, so the JSON shows once.
    await expect(structured).to_contain_text('"temperature":')
    await expect(structured).to_contain_text('"conditions":')
