"""The web chat shows what happened (issue 44, item 5), in a real browser.

A planned turn's steps end with results of their own ("Created notes.txt."): live they
show in the plan, and the answer is the thinker's alone; after a reload, in Copy and in
the export they must not come back as answers. A search hit in another version opens
that version; Export offers all versions or the one shown, and Import sits beside it.
An answered approval card's title says what was decided, a tool card's details speak in
words, the model picker lists models (not DuckLM's role names), and a notice never lies
over a control.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.async_api import Page, expect

from tests.api.test_search_and_uploads import chat, search_until
from tests.e2e.conftest import screenshot
from tests.e2e.test_plans_and_diffs import PLAN, TASK, Model
from tests.e2e.test_web_chat import ask_approval, last_turn, quiet, send
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served, stream

pytestmark = pytest.mark.slow

ANSWER = "Created notes.txt, read it back and listed the folder."
STEP_RESULTS = ("Created notes.txt.", "It says one.", "The folder holds notes.txt.")


@pytest.fixture
def model(llm: ScriptedLLM) -> Iterator[Model]:
    script = Model()
    llm.set_responder(script)
    yield script
    script.gate.set()


async def _copied_answer(page: Page) -> str:
    turn = last_turn(page)
    await turn.get_by_test_id("copy-answer").click()
    await expect(turn.get_by_test_id("copy-answer")).to_have_text("Copied")
    text: str = await page.evaluate("navigator.clipboard.readText()")
    return text


async def test_a_planned_turn_reads_the_same_after_a_reload_in_copy_and_export(
    page: Page, served: Served, model: Model
) -> None:
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    model.queue("Plan", PLAN)
    first, second, third = STEP_RESULTS
    model.actions.extend([
        reply(tool_calls=[call("file_write", path="notes.txt", content="one")]),
        reply(first),
        reply(tool_calls=[call("file_read", path="notes.txt")]),
        reply(second),
        reply(tool_calls=[call("list_dir", path=".")]),
        reply(third),
    ])  # fmt: skip
    model.answers.append(ANSWER)
    await quiet(page)
    await send(page, TASK)
    turn = last_turn(page)
    await expect(turn).to_have_attribute("data-state", "completed")
    await expect(turn.get_by_test_id("answer-text")).to_have_text([ANSWER])
    await expect(turn.get_by_test_id("plan-result")).to_have_text(list(STEP_RESULTS))
    assert await _copied_answer(page) == ANSWER

    await page.reload()
    turn = last_turn(page)
    await expect(turn.get_by_test_id("plan-result")).to_have_text(list(STEP_RESULTS))
    await expect(turn.get_by_test_id("answer-text")).to_have_text([ANSWER])
    await expect(turn.get_by_test_id("tool-card")).to_have_count(3)
    assert await _copied_answer(page) == ANSWER

    conversation = page.url.rsplit("#/c/", 1)[1]
    exported = await served.client.get(f"/v1/conversations/{conversation}/export")
    assert exported.text.rstrip().endswith(ANSWER)
    for result in STEP_RESULTS:
        assert result not in exported.text, result


async def test_a_search_hit_in_another_version_opens_it_and_exports_carry_every_version(
    page: Page, served: Served, llm: ScriptedLLM
) -> None:
    porto = await chat(served, llm, "Plan a weekend trip", "Go to Porto: the Ribeira at dusk.")

    def said_in_porto(hits: list[dict[str, Any]]) -> bool:
        return any(h["conversation_id"] == porto and "Ribeira" in h["snippet"] for h in hits)

    # Indexed behind its turn; then the message is answered again, as a second version.
    assert said_in_porto(await search_until(served, "Ribeira", said_in_porto))
    branches = f"/v1/conversations/{porto}/branches"
    (turn,) = (await served.client.get(branches)).json()["turns"]
    llm.script(reply("Stay home and read."))
    body = {"checkpoint_id": turn["checkpoint_id"], "critic": False, "memory": False}
    assert (await stream(served, f"{branches}/stream", body))[-1]["status"] == "completed"
    await page.goto(f"/#/c/{porto}")
    await page.reload()
    await expect(page.get_by_test_id("branch-position")).to_have_text("2/2")
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text("Stay home and read.")

    await page.get_by_test_id("conversation-search-input").fill("Ribeira")
    hit = page.locator('[data-testid="search-result"][data-kind="message"]')
    await hit.filter(has_text="Ribeira").click()
    await expect(page.get_by_test_id("branch-position")).to_have_text("1/2")
    await expect(page.locator(".search-hit")).to_have_text("Go to Porto: the Ribeira at dusk.")

    # Export: the version on screen, or every version; Import beside it reads one back.
    await page.get_by_test_id("export-button").click()
    href = await page.get_by_test_id("export-all-jsonl").get_attribute("href")
    assert href == f"/v1/conversations/{porto}/export?format=jsonl&versions=all"
    shown = (await served.client.get(f"/v1/conversations/{porto}/export")).text
    assert "Ribeira" in shown
    assert "Stay home" not in shown
    every = (await served.client.get(f"/v1/conversations/{porto}/export?versions=all")).text
    assert "**Version 1 of 2, the one shown**" in every
    assert every.index("Ribeira") < every.index("**Version 2 of 2**") < every.index("Stay home")
    jsonl = (await served.client.get(href)).text
    assert [json.loads(line)["type"] for line in jsonl.splitlines()][-1] == "version"
    await page.get_by_test_id("export-button").click()  # closes the menu
    await expect(page.get_by_test_id("import-button")).to_be_visible()
    await page.get_by_test_id("import-input").set_input_files(
        files=[{"name": "trip.jsonl", "mimeType": "application/jsonl", "buffer": jsonl.encode()}]
    )
    await expect(page.get_by_test_id("toast-info")).to_contain_text("as a new conversation")
    await expect(page).not_to_have_url(f"{served.url}/#/c/{porto}")
    await expect(page.get_by_test_id("conversation-item")).to_have_count(2)
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text(
        "Go to Porto: the Ribeira at dusk."
    )


async def test_a_decided_card_the_picker_and_a_notice_say_what_a_person_needs(
    page: Page, llm: ScriptedLLM
) -> None:
    llm.models = ["local", "memory_policy", "sys_util", "bigger"]
    await page.reload()  # the header asks the server for its models as the page loads
    picker = page.get_by_test_id("model-picker")
    await expect(picker.locator("option")).to_have_text(["local (configured)", "bigger"])

    card = await ask_approval(page, llm, "rm notes.txt")
    await expect(card.locator("h3")).to_have_text("Approval needed")
    llm.script(reply("Left it alone."))
    await card.get_by_test_id("deny").click()
    await expect(card.locator("h3")).to_have_text("Denied")
    turn = last_turn(page)
    await expect(turn.get_by_test_id("answer-text")).to_have_text("Left it alone.")
    details = turn.get_by_test_id("tool-details")
    await details.locator("summary").click()
    words = {
        "tool": "shell_exec",
        "result": "denied",
        "DuckLM's rules": "ask you first",
        "the command": "deletes files",
        "decided by": "you",
        "your answer": "denied",
    }
    await expect(details.locator("dt")).to_have_text(list(words))
    await expect(details.locator("dd")).to_have_text(list(words.values()))
    await expect(turn).not_to_contain_text("verdict")

    # A notice while the composer is in sight: it lies over nothing, Send still takes a click.
    await picker.select_option("bigger")
    toast = page.get_by_test_id("toast-info")
    await expect(toast).to_contain_text("come from bigger")
    await screenshot(page, "notice_beside_the_controls")
    send_button = page.get_by_test_id("send-button")
    for control in (send_button, page.get_by_test_id("composer-input"), picker):
        assert not _overlap(await toast.bounding_box(), await control.bounding_box())
    on_top = await send_button.evaluate(
        "b => { const r = b.getBoundingClientRect();"
        " return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2) === b; }"
    )
    assert on_top

    await page.reload()  # the answered card, read back, says the same
    await expect(page.get_by_test_id("approval-card").locator("h3")).to_have_text("Denied")


def _overlap(a: Any, b: Any) -> bool:
    assert a is not None and b is not None
    return bool(
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )
