"""agent-chat-ui's Cancel and a reload mid-answer, in Chromium, against DuckLM.

The UI (create-agent-chat-app's vite template on @langchain/langgraph-sdk 0.0.57, built
by tests/agent_chat_ui/build.sh) streams each message with
`POST /threads/{id}/runs/stream` and `on_disconnect: "cancel"` (useStream's default),
and its Cancel button only aborts that fetch (`stop()`): there is no cancel request by
run id. DuckLM honours the request's `on_disconnect`, so dropping the stream, by Cancel
or by a reload, cancels the run as LangGraph's server does. This SDK has no rejoin on
mount, so after a reload the page shows the thread's saved state (`/history`).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from playwright.async_api import Locator, Page, Request, expect

from tests.e2e import test_agent_chat_ui_real as real_ui
from tests.e2e.test_agent_chat_ui_real import connect, send
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served

pytestmark = pytest.mark.slow

# The UI served from its own origin, DuckLM allowing it, a page that fails on any refusal.
ui_origin = real_ui.ui_origin
server_settings = real_ui.server_settings
page = real_ui.page

# About six chunks a word: over a minute of streaming at the delay below, so the test
# acts well inside the answer.
ANSWER = "Slowly: " + " ".join(f"quack{n}" for n in range(300)) + " THE END"
CHUNK_DELAY_S = 0.05


async def start_slow_answer(page: Page, llm: ScriptedLLM) -> Locator:
    """Send a message whose answer streams slowly; returns the answer once it shows."""
    llm.script(reply(ANSWER, chunk_delay_s=CHUNK_DELAY_S))
    await send(page, "tell me slowly")
    answer = page.get_by_text(re.compile(r"^Slowly: quack"))
    await expect(answer).to_contain_text("quack3")
    return answer


async def thread_id_of(page: Page) -> str:
    """The thread the UI is on (it keeps the id in the page's query string)."""
    await expect(page).to_have_url(re.compile(r"threadId="))
    found = re.search(r"threadId=([\w-]+)", page.url)
    assert found is not None
    return found.group(1)


async def last_run(served: Served, thread_id: str) -> dict[str, Any]:
    response = await served.client.get(f"/threads/{thread_id}/runs")
    response.raise_for_status()
    runs: list[dict[str, Any]] = response.json()
    assert runs, f"no run on thread {thread_id}"
    return runs[0]


async def wait_status(served: Served, thread_id: str, status: str) -> dict[str, Any]:
    run: dict[str, Any] = {}
    for _ in range(100):
        run = await last_run(served, thread_id)
        if run["status"] == status:
            return run
        await asyncio.sleep(0.1)
    raise AssertionError(f"run stayed {run.get('status')!r}, expected {status!r}: {run}")


def watch_requests(page: Page) -> list[Request]:
    """Every request the page sends from now on, to DuckLM or to the UI's own origin."""
    sent: list[Request] = []

    def keep(request: Request) -> None:  # Playwright takes no builtin (`sent.append`)
        sent.append(request)

    page.on("request", keep)
    return sent


async def assert_stopped(answer: Locator | None, llm: ScriptedLLM) -> None:
    """Nothing more arrives: the shown answer stays as it is and the model is not asked."""
    shown = await answer.inner_text() if answer is not None else None
    asked = len(llm.requests)
    await asyncio.sleep(1.5)  # 30 more chunks would have come by now
    assert (await answer.inner_text() if answer is not None else None) == shown
    assert len(llm.requests) == asked
    assert "THE END" not in (shown or "")


async def test_cancel_stops_the_run(
    page: Page, ui_origin: str, served: Served, llm: ScriptedLLM
) -> None:
    await connect(page, ui_origin, served)
    sent = watch_requests(page)
    answer = await start_slow_answer(page, llm)
    thread_id = await thread_id_of(page)
    assert (await last_run(served, thread_id))["status"] == "running"

    await page.get_by_role("button", name="Cancel").click()
    # The UI's Cancel aborts its stream and sends nothing else; DuckLM cancels the run
    # because the stream asked for that on disconnect.
    run = await wait_status(served, thread_id, "interrupted")
    started = [r for r in sent if r.url.endswith(f"/threads/{thread_id}/runs/stream")]
    assert [r.post_data_json["on_disconnect"] for r in started] == ["cancel"]
    assert not [r.url for r in sent if "/cancel" in r.url]
    assert run["kwargs"]["on_disconnect"] == "cancel"
    await assert_stopped(answer, llm)
    await expect(page.get_by_role("button", name="Send")).to_be_visible()


async def test_reload_mid_answer_cancels_and_shows_the_saved_thread(
    page: Page, ui_origin: str, served: Served, llm: ScriptedLLM
) -> None:
    await connect(page, ui_origin, served)
    await start_slow_answer(page, llm)
    thread_id = await thread_id_of(page)
    sent = watch_requests(page)

    await page.reload()
    # The message, read back from the thread, and its entry in the thread list.
    await expect(page.get_by_text("tell me slowly", exact=True)).to_have_count(2)
    # A reload drops the stream the same way Cancel does, so the run is cancelled.
    await wait_status(served, thread_id, "interrupted")
    to_duck = {f"{r.method} {r.url.removeprefix(served.url)}" for r in sent}
    assert f"POST /threads/{thread_id}/history" in to_duck
    # SDK 0.0.57 has no rejoin on mount: the page reads the thread once, and no run.
    assert not [line for line in to_duck if "/runs" in line], to_duck
    await assert_stopped(None, llm)
    await expect(page.get_by_text(re.compile(r"^Slowly: quack"))).to_have_count(0)
