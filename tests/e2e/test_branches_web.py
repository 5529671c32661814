"""Regenerate and edit-and-resend as branches in the web chat (Chromium, scripted model).

One walk: an answer is regenerated (the message shows `2/2`), the first version is shown
again (`1/2`, its answer back), the message is edited and sent (`3/3`), a reload keeps
the branch shown and its versions, and the Agent Protocol door's `/threads/{id}/history`
lists every version's input checkpoint, the later two forked from the first. Last, a
regenerated turn's write shows its card and asks again (the policy, not the old branch).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect

from tests.e2e.conftest import ARTIFACTS, TIMEOUT_MS, screenshot
from tests.e2e.test_web_chat import last_turn, quiet, send
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served

pytestmark = pytest.mark.slow

FIRST_TURN_MS = 3 * TIMEOUT_MS


async def _answered(page: Page, text: str, *, wait_ms: int = TIMEOUT_MS) -> None:
    turn = last_turn(page)
    await expect(turn).to_have_attribute("data-state", "completed", timeout=wait_ms)
    await expect(turn).to_contain_text(text)


async def _shoot_branch_control(page: Page) -> None:
    """The message, its versions and controls, and the answer: tests/e2e/artifacts/."""
    top = await page.get_by_test_id("user-message").bounding_box()
    end = await last_turn(page).bounding_box()
    assert top is not None and end is not None
    left = min(top["x"], end["x"]) - 16
    clip = {
        "x": left,
        "y": top["y"] - 16,
        "width": top["x"] + top["width"] + 16 - left,
        "height": end["y"] + end["height"] + 16 - (top["y"] - 16),
    }
    image = await page.screenshot(clip=clip)
    await asyncio.to_thread(ARTIFACTS.mkdir, exist_ok=True)
    await asyncio.to_thread((ARTIFACTS / "branch_control.png").write_bytes, image)


async def _inputs(served: Served, thread_id: str) -> dict[str, str | None]:
    """The thread's input checkpoints through the Agent Protocol door: id -> parent id."""
    body = {"limit": 1000, "metadata": {"source": "input"}}
    response = await served.client.post(f"/threads/{thread_id}/history", json=body)
    assert response.status_code == 200, response.text
    states: list[dict[str, Any]] = response.json()
    return {
        s["checkpoint"]["checkpoint_id"]: (s.get("parent_checkpoint") or {}).get("checkpoint_id")
        for s in states
    }


async def test_regenerate_switch_edit_and_reload_keep_the_branches(
    page: Page, served: Served, llm: ScriptedLLM, workspace: Path
) -> None:
    llm.script(reply("First answer."))
    await quiet(page)
    await send(page, "tell me something")
    await _answered(page, "First answer.", wait_ms=FIRST_TURN_MS)
    bar = page.get_by_test_id("branch-bar")
    await expect(bar.get_by_test_id("branch-regenerate")).to_be_visible()
    await expect(bar.get_by_test_id("branch-position")).to_have_count(0)  # one version yet

    llm.script(reply("Second answer."))
    await bar.get_by_test_id("branch-regenerate").click()
    await _answered(page, "Second answer.")
    await expect(page.get_by_test_id("branch-position")).to_have_text("2/2")
    await expect(page.get_by_test_id("assistant-turn")).to_have_count(1)

    await page.get_by_test_id("branch-previous").click()
    await expect(page.get_by_test_id("branch-position")).to_have_text("1/2")
    await _answered(page, "First answer.")

    llm.script(reply("Edited answer."))
    await page.get_by_test_id("branch-edit").click()
    await page.get_by_test_id("branch-edit-text").fill("tell me something else")
    await page.get_by_test_id("branch-edit-send").click()
    await _answered(page, "Edited answer.")
    await expect(page.get_by_test_id("branch-position")).to_have_text("3/3")
    await expect(page.get_by_test_id("user-message")).to_have_text("tell me something else")
    await screenshot(page, "branches_after_edit")
    await _shoot_branch_control(page)

    await page.reload()
    await expect(page.get_by_test_id("branch-position")).to_have_text("3/3")
    await expect(page.get_by_test_id("user-message")).to_have_text("tell me something else")
    await _answered(page, "Edited answer.")
    await page.get_by_test_id("branch-previous").click()
    await expect(page.get_by_test_id("branch-position")).to_have_text("2/3")
    await _answered(page, "Second answer.")

    (conversation,) = (await served.client.get("/v1/conversations")).json()
    inputs = await _inputs(served, conversation["id"])
    assert len(inputs) == 3, inputs
    (root,) = [checkpoint for checkpoint, parent in inputs.items() if parent is None]
    assert sorted(parent or "" for parent in inputs.values()) == ["", root, root]

    # A write in a regenerated turn shows its card and asks again; denied, nothing changed.
    note = workspace / "note.txt"
    await asyncio.to_thread(note.write_text, "old")
    write = call("file_write", path="note.txt", content="new", overwrite=True)
    llm.script(reply(tool_calls=[write]), reply("I left the note alone."))
    await page.get_by_test_id("branch-regenerate").click()
    card = page.get_by_test_id("approval-card")
    await expect(card).to_be_visible()
    assert await asyncio.to_thread(note.read_text) == "old"
    await card.get_by_test_id("deny").click()
    await _answered(page, "I left the note alone.")
    await expect(page.get_by_test_id("branch-position")).to_have_text("4/4")
    assert await asyncio.to_thread(note.read_text) == "old"
