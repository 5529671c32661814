"""The web chat's screenshots in docs/images, taken the way the browser tests drive it.

DuckLM's real server on a free loopback port, under a temporary data dir and workspace,
answered by the scripted model of tests/support; Debian's Chromium, headless, through
Playwright. Each picture shows one control of issue 31: the answer's facts and Copy
answer, the plain-words chips (dark and light), the model box and picker, conversation
search, the Export menu, an upload with its Undo and the drop area, Log out, and the
composer on a phone.

Usage (from the repository root; the venv has Playwright):
    nice -n 19 .venv/bin/python scripts/screenshots.py [OUT_DIR]
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support is the scripted model and the server

from playwright.async_api import FilePayload, Page, ViewportSize, async_playwright, expect  # noqa: E402

from ducklm.config.settings import load_settings  # noqa: E402
from ducklm.learning.skills import default_skills_dir  # noqa: E402
from tests.api.test_search_and_uploads import chat, search_until  # noqa: E402
from tests.e2e.conftest import CHROMIUM, DESKTOP  # noqa: E402
from tests.e2e.test_web_chat import last_turn, quiet, send, shell  # noqa: E402
from tests.support.scripted_llm import ScriptedLLM, reply  # noqa: E402
from tests.support.server import Served, serve  # noqa: E402

OUT = ROOT / "docs" / "images"
PHONE = ViewportSize(width=375, height=740)
WINDOW = ViewportSize(width=DESKTOP["width"], height=DESKTOP["height"])
FIRST_TURN_MS = 240_000  # the first turn loads the embedding model
WAIT_MS = 30_000
# What a file dragged over the page carries (the chat shows its drop area only for files).
DRAGGED_FILE = """() => {
  const dragged = new DataTransfer();
  dragged.items.add(new File(["my plan"], "plan.md", { type: "text/markdown" }));
  return dragged;
}"""


@asynccontextmanager
async def served_app(llm: ScriptedLLM) -> AsyncIterator[Served]:
    """DuckLM served on the scripted model, all its files under a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="ducklm-shots-") as tmp:
        workspace = Path(tmp) / "workspace"
        workspace.mkdir()
        skills = shutil.copytree(default_skills_dir(), Path(tmp) / "skills")
        settings = load_settings(
            env_file=None,
            llm_base_url=llm.base_url,
            data_dir=Path(tmp) / "data",
            workspace=workspace,
            skills_dir=skills,
        )
        async with serve(settings) as served:
            yield served


async def save(page: Page, out: Path, name: str, *, selector: str | None = None) -> None:
    """Write `name`.png: the window, or one element of it; notices closed first."""
    for close in await page.locator(".toast-close").all():
        await close.click()
    await page.wait_for_timeout(200)  # let the last paint settle
    target = page.locator(selector).last if selector else page
    image = await target.screenshot()
    await asyncio.to_thread((out / f"{name}.png").write_bytes, image)
    print(f"{name}.png: {len(image) // 1024} KB")


async def chips_and_facts(page: Page, llm: ScriptedLLM, out: Path) -> None:
    """A tool turn with its why and its card's terms open, in both themes; a failed command."""
    llm.script(reply(tool_calls=[shell("echo hello")]), reply("It printed **hello**, as asked."))
    await quiet(page)
    await send(page, "please run echo hello")
    turn = last_turn(page)
    await expect(turn).to_have_attribute("data-state", "completed", timeout=FIRST_TURN_MS)
    await turn.get_by_test_id("tool-details").locator("summary").click()
    await turn.get_by_test_id("route").locator("summary").click()
    shown = "[data-testid=assistant-turn]"
    await save(page, out, "answer-facts-and-plain-words-dark", selector=shown)
    await page.get_by_test_id("theme-toggle").click()
    await save(page, out, "answer-facts-and-plain-words-light", selector=shown)
    await page.get_by_test_id("theme-toggle").click()
    llm.script(
        reply(tool_calls=[shell("cat missing.txt")]),
        reply("There is no missing.txt in the workspace."),
    )
    await send(page, "show me missing.txt")
    await expect(last_turn(page)).to_have_attribute("data-state", "completed", timeout=WAIT_MS)
    await save(page, out, "plain-words-error-card", selector="[data-testid=tool-card]")


async def model_box(page: Page, out: Path) -> None:
    """The header: the model server's state and the picker, switched to the other model."""
    await page.get_by_test_id("model-picker").select_option("bigger")
    await expect(page.get_by_test_id("toasts")).to_contain_text("come from bigger")
    await save(page, out, "model-health-and-picker", selector=".topbar")


async def search(page: Page, served: Served, llm: ScriptedLLM, out: Path) -> None:
    """The sidebar's search: a word said in another conversation, found."""
    await chat(served, llm, "Plan a weekend trip for me", "Go to Porto: the Ribeira at dusk.")
    await search_until(served, "Porto", bool)
    await page.reload()  # the conversation list is read on load
    await page.get_by_test_id("conversation-search-input").fill("Porto")
    found = page.locator('[data-testid="search-result"][data-kind="message"]')
    await expect(found.first).to_be_visible(timeout=WAIT_MS)
    await save(page, out, "conversation-search")
    await page.get_by_test_id("conversation-search-input").fill("")


async def export_and_logout(page: Page, out: Path) -> None:
    """The Export menu, open; the sidebar's foot with Log out."""
    await page.get_by_test_id("export-button").click()
    await expect(page.get_by_test_id("export-jsonl")).to_be_visible()
    await save(page, out, "export-menu")
    await page.get_by_test_id("export-button").click()
    await save(page, out, "logout-button", selector=".sidebar")


async def upload(page: Page, out: Path) -> None:
    """An attached file with its Undo, then the drop area as a file is dragged in."""
    notes = FilePayload(name="notes.txt", mimeType="text/plain", buffer=b"my own notes\n")
    async with page.expect_file_chooser() as chosen:
        await page.get_by_test_id("upload-button").click()
    await (await chosen.value).set_files(notes)
    await expect(page.get_by_test_id("upload-item")).to_contain_text("Uploaded notes.txt")
    await save(page, out, "upload-with-undo")
    dragged = await page.evaluate_handle(DRAGGED_FILE)
    await page.get_by_test_id("chat-view").dispatch_event("dragenter", {"dataTransfer": dragged})
    await save(page, out, "upload-drop-area")
    await page.get_by_test_id("chat-view").dispatch_event("dragleave", {"dataTransfer": dragged})


async def phone(page: Page, out: Path) -> None:
    """The chat on a 375 px phone: the error card's badge and the composer's placeholder whole."""
    await page.set_viewport_size(PHONE)
    await page.get_by_test_id("tool-card").last.scroll_into_view_if_needed()
    await save(page, out, "phone-composer")
    await page.set_viewport_size(WINDOW)


async def take(out: Path) -> None:
    """Every screenshot, in one browser session on one served app."""
    with ScriptedLLM() as llm:
        llm.models = ["scripted", "bigger"]
        async with served_app(llm) as served, async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
            )
            context = await browser.new_context(viewport=WINDOW, base_url=served.url)
            page = await context.new_page()
            await page.goto(await served.login_url())
            await chips_and_facts(page, llm, out)
            await model_box(page, out)
            await search(page, served, llm, out)
            await export_and_logout(page, out)
            await upload(page, out)
            await phone(page, out)
            await browser.close()


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    target.mkdir(parents=True, exist_ok=True)
    asyncio.run(take(target))
