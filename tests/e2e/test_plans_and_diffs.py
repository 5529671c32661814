"""The plan checklist, the route line and the coder's diffs in the web chat.

A planned turn and a coder fix run through the real server on the scripted model; the
plan view's less common paths (retry, revision, fallback, skipped steps) and the diff
view are driven from their modules directly.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Locator, Page, expect

from tests.e2e.conftest import screenshot
from tests.e2e.test_web_chat import last_turn, quiet, send, write
from tests.support.scripted_llm import Reply, ScriptedLLM, call, reply

pytestmark = pytest.mark.slow

TASK = "First create notes.txt, then replace its text, and then list the folder."
PLAN = {
    "steps": [
        {"id": "1", "goal": "Create notes.txt", "tool": "file_write", "depends_on": []},
        {"id": "2", "goal": "Read it back", "tool": "file_read", "depends_on": ["1"]},
        {"id": "3", "goal": "List the folder", "tool": "list_dir", "depends_on": ["2"]},
    ]
}
BROKEN = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"


class Model:
    """Answers each role from its own queue: JSON requests by schema name, the action role
    (its requests carry tools) and the thinker (the rest) in order.

    Before the action reply at index `hold_at` it waits for `gate`, so a test can look at
    the page while a step runs. It answers on the scripted server's own thread, never on
    the event loop, so waiting there blocks nothing of the test.
    """

    def __init__(self) -> None:
        self.json: dict[str, deque[str]] = {}
        self.actions: deque[Reply] = deque()
        self.answers: deque[str] = deque()
        self.action_calls = 0
        self.hold_at: int | None = None
        self.gate = threading.Event()

    def queue(self, schema: str, *payloads: Any) -> None:
        self.json.setdefault(schema, deque()).extend(json.dumps(p) for p in payloads)

    def __call__(self, body: dict[str, Any]) -> Reply:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        if schema is not None:
            return reply(self.json[schema].popleft())
        if "tools" not in body:
            return reply(self.answers.popleft())
        if self.action_calls == self.hold_at:
            self.gate.wait(timeout=60)
        self.action_calls += 1
        return self.actions.popleft()


@pytest.fixture
def model(llm: ScriptedLLM) -> Iterator[Model]:
    script = Model()
    llm.set_responder(script)
    yield script
    script.gate.set()  # a test that failed before opening it leaves no request waiting


def step(plan: Locator, number: int) -> Locator:
    return plan.get_by_test_id("plan-step").nth(number - 1)


async def expect_statuses(plan: Locator, *statuses: str) -> None:
    rows = plan.get_by_test_id("plan-step")
    await expect(rows).to_have_count(len(statuses))
    for number, status in enumerate(statuses, start=1):
        await expect(step(plan, number)).to_have_attribute("data-status", status)


async def test_a_planned_turn_shows_its_checklist_live(
    page: Page, model: Model, workspace: Path
) -> None:
    model.queue("Plan", PLAN)
    model.actions.extend([
        reply(tool_calls=[call("file_write", path="notes.txt", content="one")]),
        reply("Created notes.txt."),
        reply(tool_calls=[call("file_read", path="notes.txt")]),
        reply("It says one."),
        reply(tool_calls=[call("list_dir", path=".")]),
        reply("The folder holds notes.txt."),
    ])  # fmt: skip
    model.hold_at = 4  # step 3's first model call waits until the page was checked
    model.answers.append("Created notes.txt, read it back and listed the folder.")
    await quiet(page)
    await send(page, TASK)

    turn = last_turn(page)
    plan = turn.get_by_test_id("plan")
    await expect(plan.get_by_test_id("plan-goal")).to_have_text(
        ["Create notes.txt", "Read it back", "List the folder"]
    )
    # Mid-run: two steps done with their results, the third running.
    await expect_statuses(plan, "done", "done", "running")
    await expect(step(plan, 1).get_by_test_id("plan-status")).to_have_text("done")
    await expect(step(plan, 1).get_by_test_id("plan-result")).to_have_text("Created notes.txt.")
    await expect(step(plan, 3).get_by_test_id("plan-status")).to_have_text("running")
    await expect(step(plan, 3).get_by_test_id("plan-result")).to_have_count(0)
    await expect(plan.get_by_test_id("plan-progress")).to_have_text("Step 3 of 3: List the folder")
    await expect(plan.get_by_test_id("plan-progress")).to_have_attribute("aria-live", "polite")
    await screenshot(page, "plan_checklist_mid_run")
    model.gate.set()

    await expect(turn).to_have_attribute("data-state", "completed")
    await expect_statuses(plan, "done", "done", "done")
    await expect(step(plan, 3).get_by_test_id("plan-result")).to_have_text(
        "The folder holds notes.txt."
    )
    await expect(turn.get_by_test_id("answer-text")).to_have_text(
        "Created notes.txt, read it back and listed the folder."
    )
    assert await asyncio.to_thread((workspace / "notes.txt").read_text) == "one"
    await expect(turn.get_by_test_id("tool-card")).to_have_count(3)

    # The route line: chips in sight, the reasons collapsed until asked for.
    route = turn.get_by_test_id("route")
    await expect(route.get_by_test_id("route-chip")).to_have_text(["made a plan"])
    await expect(route.get_by_test_id("route-reasons")).to_be_hidden()
    await route.locator("summary").click()
    reasons = route.get_by_test_id("route-reasons").locator("li")
    await expect(reasons).to_have_count(4)
    await expect(reasons.nth(1)).to_contain_text("Make a plan (plan): yes")

    # History: the stored turn gets its plan back from the task's events.
    await page.reload()
    plan = last_turn(page).get_by_test_id("plan")
    await expect_statuses(plan, "done", "done", "done")
    await expect(step(plan, 2).get_by_test_id("plan-result")).to_have_text("It says one.")
    await expect(last_turn(page).get_by_test_id("route-chip")).to_have_text(["made a plan"])


async def diff_lines(diff: Locator, kind: str) -> list[str]:
    texts = await diff.locator(f".diff-{kind}").all_text_contents()
    return [text.rstrip("\n") for text in texts]


async def expect_fix_diff(diff: Locator) -> None:
    await expect(diff).to_be_visible()
    assert await diff_lines(diff, "del") == ["-    return a - b"]
    assert await diff_lines(diff, "add") == ["+    return a + b"]
    assert await diff_lines(diff, "file") == ["--- a/calc.py", "+++ b/calc.py"]
    (hunk,) = await diff_lines(diff, "hunk")
    assert hunk.startswith("@@ ")
    assert await diff_lines(diff, "context") == [" def add(a, b):"]


async def test_a_coder_fix_shows_its_diff_in_the_question_and_the_tool_card(
    page: Page, model: Model, workspace: Path
) -> None:
    target = await write(workspace / "calc.py", BROKEN)
    model.queue("code_change", {"content": FIXED, "explanation": "plus, not minus"})
    model.actions.append(
        reply(tool_calls=[call("fix_code", path="calc.py", error="add(1, 2) gives -1")])
    )
    await quiet(page)
    await send(page, "Fix the bug in calc.py: add(1, 2) gives -1")

    card = page.get_by_test_id("approval-card")
    await expect(card.get_by_test_id("action-description")).to_have_text(
        "overwrite existing file calc.py"
    )
    await expect_fix_diff(card.get_by_test_id("diff"))
    await expect(card.get_by_test_id("edit")).to_be_disabled()  # a proposal is not edited
    await screenshot(page, "coder_fix_approval_diff")
    assert await asyncio.to_thread(target.read_text) == BROKEN

    model.actions.append(reply("Fixed: add now adds."))
    await card.get_by_test_id("approve-once").click()
    turn = last_turn(page)
    await expect(turn).to_have_attribute("data-state", "completed")
    tool = turn.get_by_test_id("tool-card")
    await expect(tool).to_have_attribute("data-status", "success")
    await expect(tool.get_by_test_id("code-explanation")).to_have_text("plus, not minus")
    await expect_fix_diff(tool.get_by_test_id("diff"))
    # The diff is shown once, highlighted: the plain output keeps only the summary.
    await expect(tool.get_by_test_id("tool-output")).not_to_contain_text("@@")
    await expect(turn.get_by_test_id("route-chip")).to_have_text(["wrote code"])
    assert await asyncio.to_thread(target.read_text) == FIXED

    # Added and removed lines differ in both themes (besides their + and -).
    for theme in ("dark", "light"):
        colours = await tool.get_by_test_id("diff").evaluate(
            """pre => ["add", "del", "context"].map((kind) =>
                getComputedStyle(pre.querySelector(`.diff-${kind}`)).backgroundColor)"""
        )
        assert len(set(colours)) == 3, colours
        await screenshot(page, f"coder_fix_tool_card_{theme}")
        await page.get_by_test_id("theme-toggle").click()

    await page.reload()  # history: the tool message's diff, and the proposal's explanation
    tool = last_turn(page).get_by_test_id("tool-card")
    await expect_fix_diff(tool.get_by_test_id("diff"))
    await expect(tool.get_by_test_id("code-explanation")).to_have_text("plus, not minus")


async def test_a_write_onto_an_existing_file_asks_with_its_diff(
    page: Page, model: Model, workspace: Path
) -> None:
    target = await write(workspace / "calc.py", BROKEN)
    # No overwrite flag: the person is asked, with the change, instead of the model told.
    model.actions.append(reply(tool_calls=[call("file_write", path="calc.py", content=FIXED)]))
    await quiet(page)
    await send(page, "Write the fixed add into calc.py")

    card = page.get_by_test_id("approval-card")
    await expect(card.get_by_test_id("action-description")).to_have_text(
        "overwrite existing file calc.py"
    )
    await expect_fix_diff(card.get_by_test_id("diff"))
    await screenshot(page, "file_write_overwrite_diff")
    assert await asyncio.to_thread(target.read_text) == BROKEN

    model.actions.append(reply("Written."))
    await card.get_by_test_id("approve-once").click()
    turn = last_turn(page)
    await expect(turn).to_have_attribute("data-state", "completed")
    assert await asyncio.to_thread(target.read_text) == FIXED


async def test_plan_view_retries_revisions_and_skipped_steps(page: Page) -> None:
    seen = await page.evaluate(
        """async () => {
            const { PlanView } = await import("/ui/plan.js");
            const view = new PlanView();
            const rows = () => [...view.el.querySelectorAll("[data-testid=plan-step]")].map(
                (row) => [row.dataset.stepId, row.dataset.status,
                    row.querySelector("[data-testid=plan-status]").textContent]);
            const snaps = {};
            const steps = (...ids) => ({ steps: ids.map((id) => ({ id, goal: `goal ${id}` })) });
            view.onCreated({ plan: steps("1", "2"), fallback: false });
            view.onStepStarted({ step_id: "1", goal: "goal 1", attempt: 1, index: 1, total: 2 });
            view.onStepFinished({ step_id: "1", status: "failed", retry: true, result: "meh",
                reason: "no quote" });
            snaps.retrying = rows();
            view.onStepStarted({ step_id: "1", goal: "goal 1", attempt: 2, index: 1, total: 2 });
            snaps.again = rows();
            view.onStepFinished({ step_id: "1", status: "failed", retry: false, result: "meh" });
            view.onRevised({ plan: steps("1", "r1", "r2"), failed_step: "1", reason: "try again" });
            snaps.revised = rows();
            snaps.note = view.el.querySelector("[data-testid=plan-revised]").textContent;
            view.onStepStarted({ step_id: "r1", goal: "goal r1", attempt: 1, index: 2, total: 3 });
            view.end();
            snaps.ended = rows();
            const fallback = new PlanView();
            fallback.onCreated({ plan: steps("1"), fallback: true, problem: "junk <b>x</b>" });
            snaps.fallback = fallback.el.querySelector("[data-testid=plan-fallback]").innerHTML;
            return snaps;
        }"""
    )
    assert seen["retrying"] == [["1", "retrying", "retrying"], ["2", "pending", "pending"]]
    assert seen["again"][0] == ["1", "running", "running, attempt 2"]
    assert seen["revised"] == [
        ["1", "failed", "failed"],
        ["r1", "pending", "pending"],
        ["r2", "pending", "pending"],
    ]
    assert seen["note"] == "Plan revised after step 1 failed: try again"
    assert seen["ended"] == [
        ["1", "failed", "failed"],
        ["r1", "stopped", "stopped"],
        ["r2", "skipped", "skipped"],
    ]
    assert "&lt;b&gt;" in seen["fallback"], "the problem is text, not HTML"


async def test_diff_view_is_text_and_finds_the_diff_in_a_description(page: Page) -> None:
    seen = await page.evaluate(
        """async () => {
            const { diffView, splitDiff } = await import("/ui/diff.js");
            const text = "--- a/x.html\\n+++ b/x.html\\n@@ -1 +1 @@\\n-<b>old</b>\\n"
                + "+<img src=x onerror=\\"window.__pwned = 1\\">\\n context";
            const pre = diffView(text);
            document.body.append(pre);
            const split = splitDiff("overwrite existing file x.html:\\n" + text);
            return {
                classes: [...pre.children].map((span) => span.className),
                text: pre.textContent,
                tags: pre.querySelectorAll("img, b").length,
                before: split.before,
                starts: split.diff.split("\\n")[0],
                none: splitDiff("no diff here\\n- a list item").diff,
            };
        }"""
    )
    assert seen["classes"] == [
        "diff-line diff-file",
        "diff-line diff-file",
        "diff-line diff-hunk",
        "diff-line diff-del",
        "diff-line diff-add",
        "diff-line diff-context",
    ]
    assert '+<img src=x onerror="window.__pwned = 1">' in seen["text"]
    assert seen["tags"] == 0
    assert await page.evaluate("window.__pwned") is None
    assert seen["before"] == "overwrite existing file x.html:"
    assert seen["starts"] == "--- a/x.html"
    assert seen["none"] == ""
