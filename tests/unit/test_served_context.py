"""The served window's arithmetic, and telling a cut prompt from a short count."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from ducklm.models.context_size import (
    MIN_INPUT_TOKENS,
    ServedContext,
    input_budget,
    props_window,
)
from ducklm.models.prompt_usage import (
    ESTIMATE_FLOOR,
    EXACT_FLOOR,
    MIN_CUT_SEEN,
    PromptSeen,
    least_read,
    prompt_seen,
    was_cut,
)
from ducklm.turn.prompting.budget import Budget

PROPS = ServedContext(4096, "props")
FALLBACK = ServedContext(8192, "DUCK_CTX_SIZE")


def test_the_configured_budget_stands_when_the_window_has_room() -> None:
    assert input_budget(6144, 32_768, 512) == 6144


def test_a_small_window_takes_the_answer_and_a_margin_off() -> None:
    # 2048 - 512 for the answer - 64 (1/32 of the window) for what the packer cannot count
    assert input_budget(6144, 2048, 512) == 2048 - 512 - 64
    # The margin is at least 32 tokens.
    assert input_budget(6144, 640, 128) == 640 - 128 - 32


def test_no_budget_goes_below_the_smallest_setting() -> None:
    """An answer as long as the window leaves no room: the floor, not a negative budget."""
    assert input_budget(6144, 1024, 2048) == MIN_INPUT_TOKENS


@pytest.mark.parametrize(
    ("props", "window"),
    [
        ({"default_generation_settings": {"n_ctx": 2048}}, 2048),
        ({"n_ctx": 8192}, 8192),
        # A server with parallel slots: one request gets a slot's window.
        ({"n_ctx": 8192, "default_generation_settings": {"n_ctx": 2048}}, 2048),
        ({"default_generation_settings": {}}, None),
        ({"n_ctx": 0}, None),
        ({"n_ctx": True}, None),
        ({"n_ctx": "2048"}, None),
        (["not", "props"], None),
    ],
)
def test_props_give_the_slot_window(props: object, window: int | None) -> None:
    assert props_window(props) == window


def test_a_whole_read_is_at_least_the_floor_of_each_part() -> None:
    """Texts counted by the server's tokenizer are nearly exact; the estimate and the
    tools' schemas (always estimated) may be 1.8x what a tokenizer makes of them."""
    assert least_read(1000, 0, exact_count=True) == 1000 * EXACT_FLOOR
    assert least_read(1000, 0, exact_count=False) == 1000 * ESTIMATE_FLOOR
    assert least_read(1000, 1500, exact_count=True) == 1000 * EXACT_FLOOR + 1500 * ESTIMATE_FLOOR


def test_a_cut_is_fewer_than_a_whole_read_could_be() -> None:
    least = least_read(6000, 0, exact_count=False)  # 2400
    assert was_cut(least, PromptSeen(2048), FALLBACK)
    # The estimate errs high: 2,400 of 6,000 is a tokenizer that packs tighter, not a cut.
    assert not was_cut(least, PromptSeen(least), FALLBACK)


def test_a_short_prompt_is_never_a_cut() -> None:
    """A cut leaves half of a window at least, and no window is below 512 tokens: a count
    under 256 is another way of counting (only what a prompt cache missed)."""
    assert not was_cut(2000, PromptSeen(MIN_CUT_SEEN - 1), FALLBACK)
    assert was_cut(2000, PromptSeen(MIN_CUT_SEEN), FALLBACK)


def test_a_window_the_server_told_sets_how_much_a_cut_keeps() -> None:
    # Under half of the 4096 the server serves: the prompt was short, not cut.
    assert not was_cut(3000, PromptSeen(2000), PROPS)
    assert was_cut(3000, PromptSeen(2100), PROPS)


def test_the_truncated_flag_is_a_cut_whatever_the_numbers() -> None:
    assert was_cut(100, PromptSeen(None, truncated=True), FALLBACK)
    assert not was_cut(100, PromptSeen(None), FALLBACK)


def test_what_a_reply_says_it_read() -> None:
    usage = {"input_tokens": 1500, "output_tokens": 3, "total_tokens": 1503}
    assert prompt_seen(AIMessage("x", usage_metadata=usage)) == PromptSeen(1500)
    flagged = AIMessage("x", response_metadata={"truncated": True})
    assert prompt_seen(flagged) == PromptSeen(None, truncated=True)
    # llama-server's timings without usage: what it read plus what its cache held.
    timed = AIMessage("x", response_metadata={"timings": {"prompt_n": 40, "cache_n": 1200}})
    assert prompt_seen(timed) == PromptSeen(1240)
    # Without `cache_n`, `prompt_n` may be only what the cache missed: no number.
    assert (
        prompt_seen(AIMessage("x", response_metadata={"timings": {"prompt_n": 40}})).tokens is None
    )


def test_a_shrunk_budget_halves_every_section_but_keeps_the_input_limit() -> None:
    budget = Budget(
        max_input_tokens=3000,
        max_memory_tokens=512,
        max_skill_tokens=400,
        max_recent_events_tokens=1024,
        tools_tokens=300,
    )
    shrunk = budget.shrunk()
    assert (shrunk.max_memory_tokens, shrunk.max_skill_tokens) == (256, 200)
    assert (shrunk.max_recent_events_tokens, shrunk.max_summary_tokens) == (512, 128)
    assert shrunk.limit == budget.limit
