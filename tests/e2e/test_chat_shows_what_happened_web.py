"""The web chat shows what happened: a turn reads the same live and after a reload.

A planned turn's steps end with results of their own ("Created notes.txt."): live they
show in the plan, and the answer is the thinker's alone. After a reload, in Copy and
in the Markdown export, the step results must not come back as answers.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.async_api import Page, expect

from tests.e2e.test_plans_and_diffs import PLAN, TASK, Model
from tests.e2e.test_web_chat import last_turn, quiet, send
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served

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
