"""The web chat in a real browser, against the real server and the scripted model.

Each test drives the page the way a person would (click, type, press Enter) and checks
what the page shows and, where it matters, what happened on disk or on the server.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Locator, Page, expect

from ducklm.config.settings import Settings
from tests.support.fake_sudo import PASSWORD
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served

pytestmark = pytest.mark.slow

PHONE = {"width": 390, "height": 844}


def shell(command: str) -> Any:
    return call("shell_exec", command=command)


async def quiet(page: Page) -> None:
    """Switch the critic and the memory policy off: each would ask the model once more."""
    await page.get_by_test_id("option-critic").uncheck()
    await page.get_by_test_id("option-memory").uncheck()


async def send(page: Page, text: str) -> None:
    box = page.get_by_test_id("composer-input")
    await box.fill(text)
    await box.press("Enter")


def last_turn(page: Page) -> Locator:
    return page.get_by_test_id("assistant-turn").last


async def ask_approval(page: Page, llm: ScriptedLLM, command: str) -> Locator:
    """Have the model want to run `command`, which the policy sends to the person."""
    llm.script(reply(tool_calls=[shell(command)]))
    await quiet(page)
    await send(page, f"please run {command}")
    card = page.get_by_test_id("approval-card")
    await expect(card).to_be_visible()
    await expect(card.get_by_test_id("tool-command")).to_have_text(f"$ {command}")
    await expect(page.get_by_test_id("composer-hint")).to_contain_text("Answer the question")
    return card


async def write(path: Path, text: str) -> Path:
    await asyncio.to_thread(path.write_text, text)
    return path


async def exists(path: Path) -> bool:
    return await asyncio.to_thread(path.exists)


async def test_a_message_streams_its_answer(page: Page, llm: ScriptedLLM) -> None:
    words = "The pond is calm today and the ducks are all asleep by the reeds."
    llm.script(reply(words, chunk_delay_s=0.08))
    await quiet(page)
    box = page.get_by_test_id("composer-input")
    await box.fill("How is")
    await box.press("Shift+Enter")  # a new line, not a send
    await box.type("the pond?")
    await expect(page.get_by_test_id("user-message")).to_have_count(0)
    await box.press("Enter")

    await expect(page.get_by_test_id("user-message")).to_have_text("How is\nthe pond?")
    answer = last_turn(page).get_by_test_id("answer-text")
    # Seen part-way: the answer appears token by token, not at the end.
    await page.wait_for_function(
        """full => {
            const el = document.querySelector('[data-testid="answer-text"]');
            return el && el.textContent.length > 0 && el.textContent.length < full.length;
        }""",
        arg=words,
    )
    await expect(page.get_by_test_id("stop-button")).to_be_visible()
    await expect(answer).to_have_text(words)
    await expect(last_turn(page)).to_have_attribute("data-state", "completed")
    await expect(last_turn(page)).to_have_attribute("aria-busy", "false")
    await expect(page.get_by_test_id("stop-button")).to_be_hidden()
    await expect(page.get_by_test_id("send-button")).to_be_enabled()
    # The new conversation is in the sidebar, titled by its first message.
    item = page.get_by_test_id("conversation-item")
    await expect(item).to_have_count(1)
    await expect(item).to_contain_text("How is the pond?")
    await expect(item.get_by_role("link")).to_have_attribute("aria-current", "page")


def directive(*actions: tuple[str, dict[str, Any]], reasoning: str) -> str:
    return json.dumps(
        {"reasoning": reasoning, "actions": [{"tool": t, "args": a} for t, a in actions]}
    )


class TestJsonMode:
    """The action role in json mode, whose directives carry the model's reasoning."""

    @pytest.fixture
    async def server_settings(
        self, settings: Settings, llm: ScriptedLLM, tmp_path: Path
    ) -> Settings:
        models = await write(
            tmp_path / "models.yaml",
            f"defaults: {{base_url: {llm.base_url}, model: scripted, api_key: test}}\n"
            "roles:\n  action: {tool_mode: json, structured_output: json_schema}\n",
        )
        # The directive's reasoning is what these tests show: the model chooses the tool.
        return settings.model_copy(update={"models_config": models, "tool_selector": False})

    async def test_reasoning_is_collapsed_and_tool_cards_show_results(
        self, page: Page, llm: ScriptedLLM, workspace: Path
    ) -> None:
        await write(workspace / "todo.md", "feed the ducks")
        llm.script(
            reply(
                directive(("file_read", {"path": "todo.md"}), reasoning="I should read the list")
            ),
            reply(directive(reasoning="the list is read")),
            reply("Your list says: feed the ducks."),
        )
        await quiet(page)
        await send(page, "what is on my list?")

        turn = last_turn(page)
        answer = "Your list says: feed the ducks."
        await expect(turn.get_by_test_id("answer-text")).to_have_text(answer)
        reasoning = turn.get_by_test_id("reasoning").first
        await expect(reasoning.get_by_test_id("reasoning-text")).to_be_hidden()  # collapsed
        await reasoning.locator("summary").click()
        await expect(reasoning.get_by_test_id("reasoning-text")).to_have_text(
            "I should read the list"
        )
        card = turn.get_by_test_id("tool-card")
        await expect(card).to_have_attribute("data-status", "success")
        await expect(card.get_by_test_id("tool-command")).to_contain_text("file_read")
        await expect(card.get_by_test_id("tool-output")).to_have_text("feed the ducks")

    async def test_a_question_that_needs_no_tool_says_so_in_the_route(
        self, page: Page, llm: ScriptedLLM
    ) -> None:
        llm.script(reply("Leonardo da Vinci."))
        await quiet(page)
        await send(page, "Who painted the Mona Lisa?")

        turn = last_turn(page)
        await expect(turn.get_by_test_id("answer-text")).to_have_text("Leonardo da Vinci.")
        route = turn.get_by_test_id("route")
        await expect(route.get_by_test_id("route-chip").last).to_have_text("no tool needed")
        await route.locator("summary").click()
        shortcut = route.locator("li[data-decision=shortcut]")
        await expect(shortcut).to_contain_text("no sign of needing a tool")
        assert len(llm.requests) == 1, "no directive was asked for"


async def test_allow_once_from_the_card_runs_the_tool(
    page: Page, llm: ScriptedLLM, workspace: Path
) -> None:
    target = await write(workspace / "a.txt", "old")
    card = await ask_approval(page, llm, "rm a.txt")
    assert await exists(target), "nothing may run before the decision"

    llm.script(reply("Removed a.txt."))
    await card.get_by_test_id("approve-once").click()

    await expect(card.get_by_test_id("approval-outcome")).to_have_text("Allowed once")
    await expect(card.get_by_role("button")).to_have_count(0)  # answered: no controls left
    turn = last_turn(page)
    tool = turn.get_by_test_id("tool-card")
    await expect(tool).to_have_attribute("data-status", "success")
    await expect(tool).to_have_attribute("data-exit-code", "0")
    await expect(tool.get_by_test_id("tool-command")).to_have_text("$ rm a.txt")
    await expect(tool.get_by_test_id("tool-meta")).to_contain_text("exit code 0")
    await expect(turn.get_by_test_id("answer-text")).to_have_text("Removed a.txt.")
    await expect(turn).to_have_attribute("data-state", "completed")
    assert not await exists(target)

    # The activity drawer holds the task's events and the command that ran.
    await page.get_by_test_id("activity-toggle").click()
    drawer = page.get_by_test_id("activity-drawer")
    await expect(drawer).to_be_visible()
    events = drawer.get_by_test_id("activity-event")
    await expect(events.and_(page.locator('[data-type="approval_requested"]'))).to_have_count(1)
    await expect(events.and_(page.locator('[data-type="tool_call_finished"]'))).to_have_count(1)
    await drawer.get_by_test_id("tab-commands").click()
    command = drawer.get_by_test_id("activity-command")
    await expect(command).to_contain_text("rm a.txt")
    await expect(command).to_contain_text("exit code 0")
    await expect(drawer.get_by_test_id("activity-events")).to_be_hidden()


async def test_deny_from_the_card_runs_nothing(
    page: Page, llm: ScriptedLLM, workspace: Path
) -> None:
    target = await write(workspace / "a.txt", "old")
    card = await ask_approval(page, llm, "rm a.txt")

    llm.script(reply("All right, I left a.txt alone."))
    await card.get_by_test_id("deny").click()

    await expect(card.get_by_test_id("approval-outcome")).to_have_text("Denied")
    turn = last_turn(page)
    await expect(turn.get_by_test_id("answer-text")).to_have_text("All right, I left a.txt alone.")
    await expect(turn.get_by_test_id("tool-card")).to_have_attribute("data-status", "denied")
    assert await exists(target)
    assert llm.requests[-1]["messages"][-1]["role"] == "tool"


async def test_edit_runs_the_command_as_changed(
    page: Page, llm: ScriptedLLM, workspace: Path
) -> None:
    first = await write(workspace / "a.txt", "a")
    second = await write(workspace / "b.txt", "b")
    card = await ask_approval(page, llm, "rm a.txt")

    await card.get_by_test_id("edit").click()
    editor = card.get_by_test_id("edit-input")
    await expect(editor).to_be_focused()
    await editor.fill("rm b.txt")
    llm.script(reply("Removed b.txt instead."))
    await card.get_by_test_id("edit-submit").click()

    turn = last_turn(page)
    await expect(turn.get_by_test_id("answer-text")).to_have_text("Removed b.txt instead.")
    await expect(turn.get_by_test_id("tool-card").get_by_test_id("tool-command")).to_have_text(
        "$ rm b.txt"
    )
    assert await exists(first)
    assert not await exists(second)


async def test_edit_of_a_tool_call_checks_its_json_arguments(
    page: Page, llm: ScriptedLLM, workspace: Path
) -> None:
    target = await write(workspace / "a.txt", "old")
    overwrite = call("file_write", path="a.txt", content="new", overwrite=True)
    llm.script(reply(tool_calls=[overwrite]))
    await quiet(page)
    await send(page, "overwrite a.txt")
    card = page.get_by_test_id("approval-card")
    await expect(card.get_by_test_id("tool-command")).to_contain_text('"content":"new"')

    await card.get_by_test_id("edit").click()
    editor = card.get_by_test_id("edit-input")
    await editor.fill("{not json")
    await card.get_by_test_id("edit-submit").click()
    await expect(card.get_by_test_id("approval-error")).to_have_text(
        "The arguments of file_write must be a JSON object."
    )
    await editor.fill(json.dumps({"path": "a.txt", "content": "edited", "overwrite": True}))
    llm.script(reply("Written with your text."))
    await card.get_by_test_id("edit-submit").click()

    await expect(card.get_by_test_id("approval-outcome")).to_have_text("Edited and allowed")
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text(
        "Written with your text."
    )
    assert await asyncio.to_thread(target.read_text) == "edited"


async def test_allow_forever_then_revoke_the_rule(
    page: Page, llm: ScriptedLLM, workspace: Path, served: Served
) -> None:
    await write(workspace / "a.txt", "old")
    card = await ask_approval(page, llm, "rm a.txt")
    llm.script(reply("Removed, and I will not ask again."))
    await card.get_by_test_id("approve-forever").click()
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text(
        "Removed, and I will not ask again."
    )
    # The next such call is the rule's: its card names the rule in the rule's own words.
    await write(workspace / "a.txt", "again")
    llm.script(reply(tool_calls=[shell("rm a.txt")]), reply("Removed by your rule."))
    await send(page, "please run rm a.txt")
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text(
        "Removed by your rule."
    )
    by_rule = last_turn(page).get_by_test_id("tool-outcome")
    await expect(by_rule).to_have_text("allowed by your rule: shell:rm a.txt")

    await page.get_by_test_id("nav-approvals").click()
    await expect(page.get_by_test_id("approvals-page")).to_be_visible()
    await expect(page.get_by_test_id("view-title")).to_have_text("Approvals")
    await expect(page.get_by_test_id("pending-approval")).to_have_count(0)
    rule = page.get_by_test_id("approval-rule")
    await expect(rule).to_have_count(1)
    await expect(rule.get_by_test_id("rule-pattern")).to_have_text("shell:rm a.txt")

    await rule.get_by_test_id("revoke-rule").click()
    await expect(page.get_by_test_id("toast-info")).to_contain_text("Rule revoked")
    await expect(rule).to_have_count(0)
    assert (await served.client.get("/v1/approvals/rules")).json() == []


async def test_a_question_survives_a_reload(page: Page, llm: ScriptedLLM, workspace: Path) -> None:
    target = await write(workspace / "a.txt", "old")
    await ask_approval(page, llm, "rm a.txt")

    await page.reload()  # the task waits on the server, not in the page
    card = page.get_by_test_id("approval-card")
    await expect(card).to_be_visible()
    await expect(card.get_by_test_id("tool-command")).to_have_text("$ rm a.txt")
    await expect(page.get_by_test_id("user-message")).to_have_text(["please run rm a.txt"])
    await expect(page.get_by_test_id("stop-button")).to_be_visible()
    llm.script(reply("Removed after the reload."))
    await card.get_by_test_id("approve-once").click()
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text(
        "Removed after the reload."
    )
    assert not await exists(target)


async def test_stop_abandons_a_waiting_question(
    page: Page, llm: ScriptedLLM, served: Served
) -> None:
    card = await ask_approval(page, llm, "rm a.txt")
    await page.get_by_test_id("stop-button").click()
    await expect(card.get_by_test_id("approval-outcome")).to_have_text("Cancelled")
    await expect(last_turn(page).get_by_test_id("turn-status")).to_have_text("Stopped.")
    await expect(page.get_by_test_id("send-button")).to_be_enabled()
    (task,) = (await served.client.get("/v1/tasks")).json()
    assert task["status"] == "cancelled"


async def test_the_approvals_page_answers_waiting_questions(
    page: Page, llm: ScriptedLLM, workspace: Path
) -> None:
    target = await write(workspace / "a.txt", "old")
    await ask_approval(page, llm, "rm a.txt")
    await page.get_by_test_id("nav-approvals").click()
    pending = page.get_by_test_id("pending-approval")
    await expect(pending).to_have_count(1)
    await expect(pending).to_contain_text("$ rm a.txt")
    await expect(pending).to_contain_text("please run rm a.txt")

    llm.script(reply("Left it, as you asked."))
    await pending.get_by_test_id("pending-deny").click()
    await expect(page.get_by_test_id("toast-info")).to_contain_text("Denied")
    await expect(pending).to_have_count(0)

    await page.get_by_test_id("conversation-item").get_by_role("link").click()
    turn = last_turn(page)
    await expect(turn.get_by_test_id("answer-text")).to_have_text("Left it, as you asked.")
    await expect(page.get_by_test_id("send-button")).to_be_enabled()
    assert await exists(target)


async def test_sudo_password_form(page: Page, llm: ScriptedLLM, fake_sudo: Path) -> None:
    card = await ask_approval(page, llm, "sudo ls /root")
    await card.get_by_test_id("approve-once").click()

    form = page.get_by_test_id("password-card")
    await expect(form).to_be_visible()
    await expect(form.get_by_test_id("tool-command")).to_have_text("$ sudo ls /root")
    field = form.get_by_test_id("password-input")
    await expect(field).to_have_attribute("type", "password")
    await expect(page.get_by_test_id("composer-hint")).to_contain_text("Answer the question")
    llm.script(reply("Listed /root."))
    await field.fill(PASSWORD)
    await field.press("Enter")

    turn = last_turn(page)
    await expect(turn.get_by_test_id("answer-text")).to_have_text("Listed /root.")
    await expect(form.get_by_test_id("password-outcome")).to_have_text("Password sent")
    await expect(turn.get_by_test_id("tool-card")).to_have_attribute("data-exit-code", "0")
    assert await asyncio.to_thread(fake_sudo.read_text) == "match\n"
    # The page keeps the password nowhere: not in the field, the DOM or storage.
    assert await field.input_value() == ""
    assert PASSWORD not in await page.content()
    assert PASSWORD not in await page.evaluate("JSON.stringify({...localStorage})")


async def test_switching_conversations_loads_their_history(page: Page, llm: ScriptedLLM) -> None:
    await quiet(page)
    llm.script(reply("Ducks like peas."), reply("Geese are louder."))
    await send(page, "what do ducks eat?")
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text("Ducks like peas.")
    await page.get_by_test_id("new-conversation").click()
    await expect(page.get_by_test_id("empty-state")).to_be_visible()
    await expect(page.get_by_test_id("user-message")).to_have_count(0)
    await send(page, "and geese?")
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text("Geese are louder.")
    items = page.get_by_test_id("conversation-item")
    await expect(items).to_have_count(2)

    await items.filter(has_text="what do ducks eat?").get_by_role("link").click()
    transcript = page.get_by_test_id("transcript")
    await expect(page.get_by_test_id("user-message")).to_have_text(["what do ducks eat?"])
    await expect(transcript.get_by_test_id("answer-text")).to_have_text(["Ducks like peas."])
    await expect(page.get_by_test_id("view-title")).to_have_text("what do ducks eat?")

    await items.filter(has_text="and geese?").get_by_role("link").click()
    await expect(page.get_by_test_id("user-message")).to_have_text(["and geese?"])
    await expect(transcript.get_by_test_id("answer-text")).to_have_text(["Geese are louder."])

    await page.reload()  # the URL names the conversation: it comes back
    await expect(page.get_by_test_id("user-message")).to_have_text(["and geese?"])
    await expect(transcript.get_by_test_id("answer-text")).to_have_text(["Geese are louder."])


async def test_rename_and_delete_a_conversation(
    page: Page, llm: ScriptedLLM, served: Served
) -> None:
    await quiet(page)
    llm.script(reply("Quack."))
    await send(page, "hello duck")
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text("Quack.")
    item = page.get_by_test_id("conversation-item")

    await item.get_by_test_id("conversation-rename").click()
    title = item.get_by_test_id("rename-input")
    await expect(title).to_be_focused()
    await title.fill("Pond plans")
    await title.press("Enter")
    await expect(item.get_by_role("link")).to_have_text("Pond plans")
    await expect(page.get_by_test_id("view-title")).to_have_text("Pond plans")
    conversations = (await served.client.get("/v1/conversations")).json()
    assert [c["title"] for c in conversations] == ["Pond plans"]

    delete = item.get_by_test_id("conversation-delete")
    await delete.click()
    await expect(delete).to_have_text("Delete?")  # the second click confirms
    await delete.click()
    await expect(item).to_have_count(0)
    await expect(page.get_by_test_id("empty-state")).to_be_visible()
    await expect(page.get_by_test_id("view-title")).to_have_text("New conversation")
    assert (await served.client.get("/v1/conversations")).json() == []


async def test_api_errors_are_shown_to_the_person(
    page: Page, llm: ScriptedLLM, served: Served
) -> None:
    await quiet(page)
    llm.script(reply("Quack."))
    await send(page, "hello duck")
    await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text("Quack.")
    (conversation,) = (await served.client.get("/v1/conversations")).json()
    await page.get_by_test_id("new-conversation").click()
    # Gone behind the page's back: opening it gets a 404, whose detail the page shows.
    assert (await served.client.delete(f"/v1/conversations/{conversation['id']}")).is_success
    await page.get_by_test_id("conversation-item").get_by_role("link").click()
    notice = page.get_by_test_id("toast-error")
    await expect(notice).to_contain_text(f"no conversation with id '{conversation['id']}'")
    await expect(notice).to_have_attribute("role", "alert")
    await expect(page.get_by_test_id("composer-input")).to_be_enabled()  # nothing blocked


async def test_theme_switch_is_remembered(page: Page) -> None:
    root = page.locator("html")
    toggle = page.get_by_test_id("theme-toggle")
    await expect(root).to_have_attribute("data-theme", "dark")
    await expect(toggle).to_have_attribute("aria-pressed", "false")
    dark = await page.evaluate("getComputedStyle(document.body).backgroundColor")

    await toggle.click()
    await expect(root).to_have_attribute("data-theme", "light")
    await expect(toggle).to_have_attribute("aria-pressed", "true")
    assert await page.evaluate("getComputedStyle(document.body).backgroundColor") != dark

    await page.reload()
    await expect(root).to_have_attribute("data-theme", "light")
    await expect(page.get_by_test_id("theme-toggle")).to_have_attribute("aria-pressed", "true")

    await page.get_by_test_id("theme-toggle").click()
    await page.reload()
    await expect(root).to_have_attribute("data-theme", "dark")


HOSTILE = """Here is <img src=x onerror="window.__pwned = 'img'"> and \
<script>window.__pwned = 'script'</script> as text.
A [bad link](javascript:window.__pwned='link') and a [good one](https://example.org/ducks).
**Bold** and `<b>code</b>`:

```html
<iframe src="javascript:window.__pwned='iframe'"></iframe>
```"""


async def test_model_output_is_shown_as_text_never_as_html(page: Page, llm: ScriptedLLM) -> None:
    llm.script(reply(HOSTILE))
    await quiet(page)
    await send(page, "show me some html")
    answer = last_turn(page).get_by_test_id("answer-text")
    await expect(answer.get_by_test_id("code-block")).to_be_visible()
    await expect(last_turn(page)).to_have_attribute("data-state", "completed")

    await expect(answer).to_contain_text("<img src=x onerror=\"window.__pwned = 'img'\">")
    await expect(answer).to_contain_text("<script>window.__pwned = 'script'</script>")
    for tag in ("img", "script", "iframe", "b"):
        await expect(answer.locator(tag)).to_have_count(0)
    await expect(answer.locator("strong")).to_have_text("Bold")
    await expect(answer.locator("code").first).to_have_text("<b>code</b>")
    await expect(answer.get_by_test_id("code-block").locator("code")).to_have_text(
        "<iframe src=\"javascript:window.__pwned='iframe'\"></iframe>"
    )
    links = answer.locator("a")
    await expect(links).to_have_count(1)  # the javascript: link stays text
    await expect(links).to_have_attribute("href", "https://example.org/ducks")
    await expect(links).to_have_attribute("rel", "noopener noreferrer")
    await expect(answer).to_contain_text("[bad link](javascript:window.__pwned='link')")
    assert await page.evaluate("window.__pwned") is None


async def test_reload_in_the_middle_of_a_run_shows_its_progress_and_result(
    page: Page, llm: ScriptedLLM
) -> None:
    words = " ".join(f"word{n}" for n in range(40))
    llm.script(reply(words, chunk_delay_s=0.1))
    await quiet(page)
    await send(page, "count slowly")
    answer = last_turn(page).get_by_test_id("answer-text")
    await expect(answer).to_contain_text("word3")

    await page.reload()  # the run goes on without the page
    turn = last_turn(page)
    await expect(turn).to_have_attribute("data-state", "running")
    await expect(page.get_by_test_id("stop-button")).to_be_visible()
    await expect(turn.get_by_test_id("answer-text")).to_have_text(words)
    await expect(turn).to_have_attribute("data-state", "completed")
    await expect(page.get_by_test_id("user-message")).to_have_text(["count slowly"])

    await page.reload()  # ended: now plain history
    await expect(page.get_by_test_id("user-message")).to_have_text(["count slowly"])
    await expect(page.get_by_test_id("answer-text")).to_have_text([words])


async def test_stop_button_cancels_the_run(page: Page, llm: ScriptedLLM, served: Served) -> None:
    llm.script(reply(" ".join(f"word{n}" for n in range(100)), chunk_delay_s=0.1))
    await quiet(page)
    await send(page, "talk for a long time")
    await expect(last_turn(page).get_by_test_id("answer-text")).to_contain_text("word2")
    await page.get_by_test_id("stop-button").click()

    turn = last_turn(page)
    await expect(turn).to_have_attribute("data-state", "cancelled")
    await expect(turn.get_by_test_id("turn-status")).to_have_text("Stopped.")
    await expect(page.get_by_test_id("stop-button")).to_be_hidden()
    await expect(page.get_by_test_id("send-button")).to_be_enabled()
    (task,) = (await served.client.get("/v1/tasks")).json()
    assert task["status"] == "cancelled"


class TestPhoneWidth:
    @pytest.fixture
    def viewport(self) -> dict[str, int]:
        return PHONE

    async def test_sidebar_collapses_behind_the_menu_button(
        self, page: Page, llm: ScriptedLLM
    ) -> None:
        sidebar = page.get_by_test_id("sidebar")
        menu = page.get_by_test_id("menu-button")
        await expect(sidebar).to_be_hidden()
        await expect(menu).to_have_attribute("aria-expanded", "false")
        await quiet(page)
        llm.script(reply("Small screens are fine."))
        await send(page, "hi from a phone")
        await expect(last_turn(page).get_by_test_id("answer-text")).to_have_text(
            "Small screens are fine."
        )

        await menu.click()
        await expect(sidebar).to_be_visible()
        await expect(menu).to_have_attribute("aria-expanded", "true")
        await expect(page.get_by_test_id("conversation-item")).to_contain_text("hi from a phone")
        await page.get_by_test_id("nav-skills").click()
        await expect(sidebar).to_be_hidden()  # choosing a place closes the menu
        await expect(page.get_by_test_id("skills-page")).to_be_visible()
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], "nothing may scroll sideways"


async def test_learning_pages(page: Page, served: Served) -> None:
    added = await served.client.post(
        "/v1/memory",
        json={"text": "The person's favourite bird is the mallard.", "scope": "global"},
    )
    assert added.status_code == 201, added.text
    await served.client.post("/v1/memory", json={"text": "The pond freezes in January."})

    await page.get_by_test_id("nav-skills").click()
    skills = page.get_by_test_id("skill")
    await expect(skills.first).to_be_visible()
    assert await skills.count() >= 1

    await page.get_by_test_id("nav-experience").click()
    await expect(page.get_by_test_id("experience-page")).to_be_visible()
    await expect(page.get_by_test_id("experience-item")).to_have_count(0)

    await page.get_by_test_id("nav-memory").click()
    memories = page.get_by_test_id("memory-item")
    await expect(memories).to_have_count(2)
    await page.get_by_test_id("memory-query").fill("favourite bird")
    await page.get_by_test_id("memory-query").press("Enter")
    await expect(memories.first).to_contain_text("mallard")
    await expect(page.get_by_test_id("memory-status")).to_contain_text("found")

    await memories.filter(has_text="mallard").get_by_test_id("memory-delete").click()
    await expect(page.get_by_test_id("toast-info")).to_contain_text("Memory deleted")
    await expect(memories.filter(has_text="mallard")).to_have_count(0)
    remaining = (await served.client.get("/v1/memory")).json()
    assert [m["text"] for m in remaining] == ["The pond freezes in January."]


async def test_event_stream_parser_reassembles_split_messages(page: Page) -> None:
    # The chat parses SSE itself (its streams are POSTs); the network may cut anywhere.
    seen = await page.evaluate(
        """async (text) => {
            const { SSEParser } = await import("/ui/sse.js");
            const seen = [];
            const parser = new SSEParser((message) => seen.push(message));
            for (const char of text) parser.feed(char);
            return seen;
        }""",
        ': ping\r\n\r\nevent: token\r\nid: 3\r\ndata: {"type": "token",\r\ndata: "text": "a"}'
        "\r\n\r\nevent: done\ndata: {}\n\nevent: cut\ndata: never ends",
    )
    assert seen == [
        {"event": "token", "data": '{"type": "token",\n"text": "a"}', "id": "3"},
        {"event": "done", "data": "{}", "id": None},
    ]


MARKDOWN_CASES = [
    ("a\nb", "<p>a<br>b</p>"),
    ("snake_case_name and a__b__c stay", "<p>snake_case_name and a__b__c stay</p>"),
    ("*it* **bold** ~~old~~", "<p><em>it</em> <strong>bold</strong> <del>old</del></p>"),
    (
        "see https://example.org/a_b.",
        '<p>see <a href="https://example.org/a_b" target="_blank" '
        'rel="noopener noreferrer">https://example.org/a_b</a>.</p>',
    ),
    ("![pixel](https://evil.example/p.gif)", '<p><a href="https://evil.example/p.gif"'),
    ("- one\n  - two\n- three", "<ul><li>one<ul><li>two</li></ul></li><li>three</li></ul>"),
    ("3. c\n4. d", '<ol start="3"><li>c</li><li>d</li></ol>'),
    ("| a | b |\n|---|---|\n| 1 | 2 |", "<thead><tr><th>a</th><th>b</th></tr></thead>"),
    ("> quoted", "<blockquote><p>quoted</p></blockquote>"),
    ("# Title", '<h3 class="md-heading">Title</h3>'),
    ("```py\nprint(1)", '<code data-language="py">print(1)</code>'),  # a fence mid-stream
]


async def test_markdown_renders_the_usual_constructs(page: Page) -> None:
    rendered = await page.evaluate(
        """async (texts) => {
            const { renderMarkdown } = await import("/ui/markdown.js");
            return texts.map((text) => {
                const box = document.createElement("div");
                box.append(renderMarkdown(text));
                return box.innerHTML;
            });
        }""",
        [markdown for markdown, _ in MARKDOWN_CASES],
    )
    for (markdown, html), got in zip(MARKDOWN_CASES, rendered, strict=True):
        assert html in got, (markdown, got)
