"""The served window's arithmetic, and telling a cut prompt from a short count."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from ducklm.models.context_size import (
    MIN_INPUT_TOKENS,
    ContextSizes,
    ServedContext,
    input_budget,
    props_window,
    window_for,
)
from ducklm.models.prompt_usage import (
    ESTIMATE_FLOOR,
    EXACT_FLOOR,
    MIN_CUT_SEEN,
    judge_read,
    least_read,
    prompt_seen,
)
from ducklm.models.roles import RoleConfig
from ducklm.models.wire import PROMPT_KEY, PromptRead
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


def judge(least: int, seen: PromptRead, served: ServedContext = FALLBACK) -> str:
    """`judge_read` of a request whose messages alone take most of `least`."""
    return judge_read(least, seen, served, messages=least)


def test_a_cut_is_fewer_than_a_whole_read_could_be() -> None:
    least = least_read(6000, 0, exact_count=False)  # 2400
    assert judge(least, PromptRead(2048, "timings")) == "cut"
    # The estimate errs high: 2,400 of 6,000 is a tokenizer that packs tighter, not a cut.
    assert judge(least, PromptRead(least, "timings")) == "read"


def test_a_low_usage_count_alone_is_not_a_cut() -> None:
    """Usage may count only the cache misses, or only the messages' text."""
    assert judge(2400, PromptRead(2048, "usage")) == "low"
    # A count of the messages without the tools' schemas is no cut at all.
    least = least_read(600, 1500, exact_count=False)
    messages = least_read(600, 0, exact_count=False)
    assert judge_read(least, PromptRead(500, "usage"), FALLBACK, messages=messages) == "read"
    assert judge_read(least, PromptRead(500, "timings"), FALLBACK, messages=messages) == "cut"


def test_a_low_count_is_a_cut_once_the_server_says_it_again() -> None:
    sizes = ContextSizes()
    config = RoleConfig(
        name="action", model="m", base_url="http://x/v1", api_key="k", prompt="action.md"
    )
    assert not sizes.low_count(config, 3000, 9000)  # once: maybe a cache's count
    assert not sizes.low_count(config, 3010, 9050), "the same request again says nothing"
    assert not sizes.low_count(config, 1200, 12_000), "a count that moves is no window"
    assert sizes.low_count(config, 3050, 12_000), "the same count for a longer request"


def test_a_learned_window_never_drops_below_what_the_turn_needs() -> None:
    sizes = ContextSizes()
    config = RoleConfig(
        name="action", model="m", base_url="http://x/v1", api_key="k", prompt="action.md"
    )
    needed = window_for(1800, 512)
    sizes.learn(config, 300, needed=needed)
    assert input_budget(6144, needed, 512) >= 1800
    sizes.learn(config, 5000, needed=needed)  # a later, larger cut never widens it
    assert sizes._known["http://x"].tokens == needed


def test_a_short_prompt_is_never_a_cut() -> None:
    """A cut leaves half of a window at least, and no window is below 512 tokens: a count
    under 256 is another way of counting (only what a prompt cache missed)."""
    assert judge(2000, PromptRead(MIN_CUT_SEEN - 1, "timings")) == "read"
    assert judge(2000, PromptRead(MIN_CUT_SEEN, "timings")) == "cut"


def test_a_window_the_server_told_sets_how_much_a_cut_keeps() -> None:
    # Under half of the 4096 the server serves: the prompt was short, not cut.
    assert judge(3000, PromptRead(2000, "timings"), PROPS) == "read"
    assert judge(3000, PromptRead(2100, "timings"), PROPS) == "cut"


def test_the_truncated_flag_is_a_cut_whatever_the_numbers() -> None:
    assert judge(100, PromptRead(None, truncated=True)) == "cut"
    assert judge(100, PromptRead(None)) == "read"


def test_what_a_reply_says_it_read() -> None:
    read = PromptRead(1240, "timings", truncated=True)
    assert prompt_seen(AIMessage("x", response_metadata={PROMPT_KEY: read.as_metadata()})) == read
    # A reply the wire reader did not read says nothing.
    usage = {"input_tokens": 1500, "output_tokens": 3, "total_tokens": 1503}
    assert prompt_seen(AIMessage("x", usage_metadata=usage)) == PromptRead(None)


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
