"""Under each answer its facts and Copy; Copy on a tool's output; the header's model box.

On the scripted model, which offers two models: the facts line names the model, the
first token's wait and the tokens; Copy answer puts the answer's Markdown source on the
clipboard and a tool card's Copy output its output; the model server shows as up; the
picker switches the conversation to the other model, which the scripted server then
sees in the next turn's requests; after a reload both answers keep their facts and the
picker keeps the choice.
"""

from __future__ import annotations

import pytest
from playwright.async_api import Page, expect

from tests.e2e.conftest import TIMEOUT_MS, screenshot
from tests.e2e.test_web_chat import PHONE, last_turn, quiet, send, shell
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served

pytestmark = pytest.mark.slow

FIRST_TURN_MS = 3 * TIMEOUT_MS
CONFIGURED = "local"
"""The answering roles' model in the packaged models.yaml."""
ANSWER = "It printed **hello**, as asked."


async def _clipboard(page: Page) -> str:
    text: str = await page.evaluate("navigator.clipboard.readText()")
    return text


async def test_facts_copy_buttons_and_the_model_picker(
    page: Page, served: Served, llm: ScriptedLLM
) -> None:
    llm.models = ["scripted", "bigger"]
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    await page.reload()  # the header asks the server for its models as the page loads
    health = page.get_by_test_id("model-health")
    await expect(health).to_have_attribute("data-state", "up")
    await expect(health).to_have_text("Model server: up")
    picker = page.get_by_test_id("model-picker")
    await expect(picker).to_have_value(CONFIGURED)

    llm.script(reply(tool_calls=[shell("echo hello")]), reply(ANSWER))
    await quiet(page)
    await send(page, "please run echo hello")
    turn = last_turn(page)
    await expect(turn).to_have_attribute("data-state", "completed", timeout=FIRST_TURN_MS)
    facts = turn.get_by_test_id("answer-facts")
    await expect(facts).to_contain_text(f"{CONFIGURED} · first token after ")
    await expect(facts).to_contain_text(f"{len(ANSWER.split())} tokens")

    await turn.get_by_test_id("copy-answer").click()
    await expect(turn.get_by_test_id("copy-answer")).to_have_text("Copied")
    assert await _clipboard(page) == ANSWER, "the Markdown source, not the rendered text"
    tool = turn.get_by_test_id("tool-card")
    await expect(tool.get_by_test_id("tool-outcome")).to_have_text(
        "allowed without asking: DuckLM's rules call it safe"
    )
    await expect(tool.get_by_test_id("tool-meta")).not_to_contain_text("policy")
    await tool.get_by_test_id("tool-copy").click()
    copied = await _clipboard(page)
    assert copied == await tool.get_by_test_id("tool-output").text_content()
    assert copied.splitlines()[-1] == "hello"

    await picker.select_option("bigger")
    await expect(page.get_by_test_id("toasts")).to_contain_text("come from bigger")
    before = len(llm.requests)
    llm.script(reply("Now from the bigger one."))
    await send(page, "and now?")
    await expect(last_turn(page).get_by_test_id("answer-facts")).to_contain_text("bigger · ")
    assert {r["model"] for r in llm.requests[before:] if r.get("stream")} == {"bigger"}

    await page.reload()  # the reopened conversation: the same facts, the same choice
    await expect(page.get_by_test_id("answer-facts")).to_have_count(2)
    shown = page.get_by_test_id("answer-facts")
    await expect(shown.first).to_contain_text(f"{CONFIGURED} · ")
    await expect(shown.last).to_contain_text("bigger · ")
    await expect(picker).to_have_value("bigger")
    await screenshot(page, "answer_facts_and_model_picker")

    # On a phone the model box keeps its dot and picker, and nothing scrolls sideways.
    await page.set_viewport_size(PHONE)
    await expect(health).to_be_visible()
    await expect(picker).to_be_visible()
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], "nothing may scroll sideways"
    await screenshot(page, "answer_facts_phone")
