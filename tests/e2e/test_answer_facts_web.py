"""Under each answer its facts and Copy; Copy on a tool's output; the header's model box.

On the scripted model, which offers two models: the facts line names the model, the
first token's wait and the tokens; Copy answer puts the answer's Markdown source on the
clipboard and a tool card's Copy output its output; the model server shows as up; the
picker switches the conversation to the other model, which the scripted server then
sees in the next turn's requests; after a reload both answers keep their facts and the
picker keeps the choice. The route's chips and the tool card's badges are plain words
with the terms behind them one click away, and the composer's placeholder fits a phone.
"""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Locator, Page, expect

from tests.e2e.conftest import DESKTOP, TIMEOUT_MS, screenshot
from tests.e2e.test_web_chat import PHONE, last_turn, quiet, send, shell
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served

pytestmark = pytest.mark.slow

FIRST_TURN_MS = 3 * TIMEOUT_MS
CONFIGURED = "local"
"""The answering roles' model in the packaged models.yaml."""
ANSWER = "It printed **hello**, as asked."
PLAIN_ROUTE = {"looked in memory", "made a plan", "wrote code", "checks its answer"}
"""The route chips' words (ui/words.js), besides "simple request" and the rule's chips."""
PHONE_375 = {"width": 375, "height": 812}
# The placeholder's width in the textarea's font, and the room its box has for it.
PLACEHOLDER_ROOM = """(box) => {
  const style = getComputedStyle(box);
  const pen = document.createElement("canvas").getContext("2d");
  pen.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const room = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return { text: box.placeholder, width: pen.measureText(box.placeholder).width, room };
}"""


async def _placeholder_fits(page: Page) -> str:
    """The composer's placeholder, checked to fit on one line of its box as shown."""
    box = page.get_by_test_id("composer-input")
    shown = await box.evaluate(PLACEHOLDER_ROOM)
    assert shown["width"] <= shown["room"], f"the placeholder is cut: {shown}"
    text: str = shown["text"]
    return text


async def _plain_words(turn: Locator) -> None:
    """The route's chips and the tool card's badges in plain words, the terms one click away."""
    chips = await turn.get_by_test_id("route-chip").all_text_contents()
    assert chips, "a route line with chips"
    for chip in chips:
        assert chip in PLAIN_ROUTE | {"simple request", "no tool needed"} or chip.startswith(
            "used a rule: "
        ), chip
    route = turn.get_by_test_id("route")
    await route.locator("summary").click()
    await expect(route.get_by_test_id("route-reasons")).to_contain_text("(recall): ")
    cards = turn.get_by_test_id("tool-card")
    await expect(cards).to_have_count(2)
    tool, failed = cards.first, cards.last
    await expect(tool.get_by_test_id("tool-status")).to_have_text("done")
    await expect(tool.get_by_test_id("tool-facts")).to_have_text("exit code 0 · only reads")
    details = tool.get_by_test_id("tool-details")
    await expect(details.locator("dl")).to_be_hidden()
    await details.locator("summary").click()
    terms = ["shell_exec", "done", "safe to run without asking", "only reads", "DuckLM's rules"]
    await expect(details.locator("dd")).to_have_text(terms)
    # The error card: how it ended, not "done"; no policy words in sight.
    await expect(failed.get_by_test_id("tool-status")).to_have_text("ended with code 1")
    await expect(failed.get_by_test_id("tool-facts")).to_have_text("exit code 1 · only reads")
    await expect(failed.get_by_test_id("tool-outcome")).not_to_contain_text("policy")
    await expect(failed.get_by_test_id("tool-details").locator("dl")).to_be_hidden()


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

    # Two calls, the second fails: an error card gets the same plain words.
    calls = [shell("echo hello"), shell("cat missing.txt")]
    llm.script(reply(tool_calls=calls), reply(ANSWER))
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
    tool = turn.get_by_test_id("tool-card").first
    await expect(tool.get_by_test_id("tool-outcome")).to_have_text(
        "allowed without asking: DuckLM's rules call it safe"
    )
    await _plain_words(turn)
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

    await _on_a_phone(page)


async def _on_a_phone(page: Page) -> None:
    """The model box keeps its dot and picker, nothing scrolls sideways, the placeholder fits."""
    await page.set_viewport_size(PHONE)
    await expect(page.get_by_test_id("model-health")).to_be_visible()
    await expect(page.get_by_test_id("model-picker")).to_be_visible()
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], "nothing may scroll sideways"
    await screenshot(page, "answer_facts_phone")
    # The placeholder fits a small phone whole, and the desktop keeps the keys' hint.
    # The page swaps it on the media query's change event, after the resize returns.
    box = page.get_by_test_id("composer-input")
    await page.set_viewport_size(PHONE_375)
    await expect(box).to_have_attribute("placeholder", "Message DuckLM")
    assert await _placeholder_fits(page) == "Message DuckLM"
    await page.set_viewport_size(DESKTOP)
    await expect(box).to_have_attribute("placeholder", re.compile("Enter sends"))
    assert "Enter sends" in await _placeholder_fits(page)
