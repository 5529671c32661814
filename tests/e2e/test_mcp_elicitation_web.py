"""An MCP server's question in the web chat: a form card, answered by the person.

tests/support/mcp_server.py's `book_trip` asks for a form (elicitation) during its call;
the card shows the server's message and the form's fields (with their defaults), and
Accept sends what the person filled in. `summarize` on an untrusted server asks whether
DuckLM's model may answer the server; the served reply shows on the tool card. The npm
everything server's own elicitation, sampling and URL-mode elicitation tools, one after
the other: its form (multi-selects too), its sampling, and its link (shown, never opened).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from playwright.async_api import Locator, Page, expect

from ducklm.config.settings import Settings
from tests.e2e.test_mcp_everything_web import card
from tests.e2e.test_web_chat import last_turn, quiet, send
from tests.support.mcp_servers import npm_server, python_server, write_config
from tests.support.scripted_llm import ScriptedLLM, call, reply

pytestmark = pytest.mark.slow
LINK = "https://pay.example.com/checkout?order=7"


def open_card(turn: Locator, kind: str) -> Locator:
    """The question card of `kind` still waiting for the person (answered ones stay)."""
    return turn.locator(f'[data-testid="{kind}-card"][data-state="open"]')


@pytest.fixture
def sent(tmp_path: Path) -> Path:
    return tmp_path / "sent.txt"


@pytest.fixture
def server_settings(settings: Settings, tmp_path: Path, sent: Path) -> Settings:
    config = write_config(
        tmp_path / "mcp.json", trips=python_server(env={"MCP_TEST_SENT": str(sent)})
    )
    return settings.model_copy(update={"mcp_config": config, "mcp_tool_tokens": 100_000})


async def test_the_form_card_sends_what_the_person_filled_in(
    page: Page, llm: ScriptedLLM, sent: Path
) -> None:
    llm.script(reply(tool_calls=[call("trips__book_trip")]))
    await quiet(page)
    await send(page, "book me a trip")
    turn = last_turn(page)
    # The first turn starts the server: allow for a loaded machine.
    await turn.get_by_test_id("approve-once").click(timeout=120_000)

    card = turn.get_by_test_id("elicitation-card")
    await expect(card.get_by_test_id("elicit-message")).to_have_text(
        "Where should the trip go?", timeout=60_000
    )
    await expect(card.get_by_test_id("elicit-origin")).to_have_text("trips \u203a book_trip")
    await expect(card.get_by_test_id("elicit-input-nights")).to_have_value("2")
    await card.get_by_test_id("elicit-input-city").fill("Porto")
    await card.get_by_test_id("elicit-input-seat").select_option("aisle")
    llm.script(reply("Booked Porto."))
    await card.get_by_test_id("elicit-accept").click()

    await expect(card.get_by_test_id("elicitation-outcome")).to_have_text("Accepted")
    await expect(turn.get_by_test_id("answer-text")).to_have_text("Booked Porto.", timeout=60_000)
    assert (await asyncio.to_thread(sent.read_text)).splitlines() == ["booked Porto 2 aisle"]


async def test_an_untrusted_servers_sampling_is_asked_and_shown_on_the_card(
    page: Page, llm: ScriptedLLM
) -> None:
    llm.script(reply(tool_calls=[call("trips__summarize", text="a story about ducks")]))
    await quiet(page)
    await send(page, "summarize the story")
    turn = last_turn(page)
    await turn.get_by_test_id("approve-once").click(timeout=120_000)

    card = turn.get_by_test_id("elicitation-card")
    await expect(card).to_contain_text("a story about ducks", timeout=60_000)
    llm.script(reply("Ducks swim."), reply("It is about ducks."))
    await card.get_by_test_id("elicit-accept").click()

    await expect(turn.get_by_test_id("answer-text")).to_have_text(
        "It is about ducks.", timeout=60_000
    )
    await expect(turn.get_by_test_id("tool-sampled-reply")).to_have_text("Ducks swim.")


class TestTheEverythingServer:
    """The npm everything server's questions, as a Claude Code user tries them."""

    @pytest.fixture
    def server_settings(self, settings: Settings, tmp_path: Path) -> Settings:
        config = write_config(tmp_path / "mcp.json", everything=npm_server("server-everything"))
        return settings.model_copy(update={"mcp_config": config, "mcp_tool_tokens": 100_000})

    async def complete_in_the_composer(self, page: Page) -> None:
        """A prompt's arguments from the server (`completion/complete`), and a template."""
        box = page.get_by_test_id("composer-input")
        items = page.get_by_test_id("mcp-complete-item")
        values = items.locator("code")  # each item: what it inserts, then what it is
        await box.press_sequentially("/everything:completable-prompt ")
        # The first `/` starts the server under Node: allow for a loaded machine.
        await expect(values).to_have_text(
            ["Engineering", "Sales", "Marketing", "Support"], timeout=120_000
        )
        await expect(items.first).to_contain_text("department")
        await box.press_sequentially("S")
        await expect(values).to_have_text(["Sales", "Support"])
        await box.press("ArrowDown")
        await box.press("Enter")
        await expect(box).to_have_value("/everything:completable-prompt Support ")
        # The second argument's values depend on the first: the server was told it.
        await expect(values).to_have_text(["John", "Kim", "Lee"])
        await box.press("Escape")
        await box.fill("")
        await box.press_sequentially("@everything:demo://resource/dynamic/te")
        template = values.filter(has_text="{resourceId}")
        await expect(template).to_have_text("@everything:demo://resource/dynamic/text/{resourceId}")
        await box.press("Enter")  # up to the part to fill in, without a space
        await expect(box).to_have_value("@everything:demo://resource/dynamic/text/")
        await box.fill("")

    async def test_its_form_sampling_and_link_are_asked_and_answered(
        self, page: Page, llm: ScriptedLLM
    ) -> None:
        await quiet(page)
        await self.complete_in_the_composer(page)
        llm.script(reply(tool_calls=[call("everything__trigger-elicitation-request")]))
        await send(page, "try the everything server's questions")
        turn = last_turn(page)
        # Untrusted: the call asks first. The first turn starts the server under Node.
        await open_card(turn, "approval").get_by_test_id("approve-once").click(timeout=120_000)

        form = open_card(turn, "elicitation")
        await expect(form.get_by_test_id("elicit-message")).to_have_text(
            "Please provide inputs for the following fields:", timeout=60_000
        )
        await expect(form.get_by_test_id("elicit-origin")).to_have_text(
            "everything \u203a trigger-elicitation-request"
        )
        await expect(form.get_by_test_id("elicit-input-integer")).to_have_value("42")
        await expect(form.get_by_test_id("elicit-input-legacyTitledEnum")).to_contain_text("Cats")
        await form.get_by_test_id("elicit-input-name").fill("Ana Duck")
        await form.get_by_test_id("elicit-input-check").check()
        await form.get_by_test_id("elicit-input-untitledMultipleSelectEnum").select_option(
            ["Piano", "Drums"]
        )
        sampling_call = call("everything__trigger-sampling-request", prompt="name a duck")
        llm.script(reply(tool_calls=[sampling_call]))
        await form.get_by_test_id("elicit-accept").click()

        elicited = card(turn, "trigger-elicitation-request").get_by_test_id("tool-output")
        await expect(elicited).to_contain_text("- Name: Ana Duck", timeout=60_000)
        await expect(elicited).to_contain_text("- Agreed to terms: true")
        await expect(elicited).to_contain_text("- Favorite Integer: 42")
        await expect(elicited).to_contain_text('"Piano"')

        await open_card(turn, "approval").get_by_test_id("approve-once").click()
        asked = open_card(turn, "elicitation")
        await expect(asked).to_contain_text("name a duck", timeout=60_000)
        link_call = call("everything__trigger-url-elicitation", url=LINK, message="Pay by card")
        llm.script(reply("Mallory."), reply(tool_calls=[link_call]))
        await asked.get_by_test_id("elicit-accept").click()

        sampled = card(turn, "trigger-sampling-request")
        await expect(sampled.get_by_test_id("tool-sampled-reply")).to_have_text(
            "Mallory.", timeout=60_000
        )
        await expect(sampled.get_by_test_id("tool-output")).to_contain_text("LLM sampling result")
        await expect(sampled.get_by_test_id("tool-output")).to_contain_text("Mallory.")

        # URL mode: the link shown whole, for the person to open (DuckLM never does).
        await open_card(turn, "approval").get_by_test_id("approve-once").click()
        opener = open_card(turn, "elicitation")
        await expect(opener.get_by_test_id("elicit-message")).to_have_text(
            "Pay by card", timeout=60_000
        )
        link = opener.get_by_test_id("elicit-link")
        await expect(link).to_have_text(LINK)
        await expect(link).to_have_attribute("href", LINK)
        await expect(link).to_have_attribute("target", "_blank")
        await expect(link).to_have_attribute("rel", "noopener noreferrer")
        await expect(opener.get_by_test_id("elicit-url-words")).to_contain_text(
            "everything asks you to open a page on pay.example.com"
        )
        assert len(page.context.pages) == 1  # nothing opened it
        llm.script(reply("The server heard Mallory and the payment."))
        await opener.get_by_test_id("elicit-accept").click()

        await expect(turn.get_by_test_id("answer-text")).to_have_text(
            "The server heard Mallory and the payment.", timeout=60_000
        )
        opened = card(turn, "trigger-url-elicitation").get_by_test_id("tool-output")
        await expect(opened).to_contain_text("User completed the URL elicitation flow")
        await expect(opened).to_contain_text(f"URL: {LINK}")
