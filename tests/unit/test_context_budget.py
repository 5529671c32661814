"""Packing a role's context into its token budget: priorities, cuts, and invariants."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from ducklm.config.settings import load_settings
from ducklm.models.tokens import estimate_tokens, prefetched
from ducklm.turn.prompting.budget import (
    MEMORIES_HEADER,
    MESSAGE_OVERHEAD_TOKENS,
    OUTPUT_CUT,
    OUTPUT_OMITTED,
    REQUEST_CUT,
    REQUEST_OVERHEAD_TOKENS,
    SKILLS_HEADER,
    SUMMARY_HEADER,
    Budget,
    ContextBudgetError,
    ContextParts,
    PackedContext,
    countable_texts,
    message_text,
    message_tokens,
    pack_context,
    split_at_request,
)

Counter = Callable[[str], int]


def words(text: str) -> int:
    return len(text.split())


def text_of(size: int, word: str = "word") -> str:
    return " ".join(f"{word}{n}" for n in range(size))


def roomy(**overrides: int) -> Budget:
    fields = {
        "max_input_tokens": 100_000,
        "max_memory_tokens": 1000,
        "max_skill_tokens": 1000,
        "max_recent_events_tokens": 1000,
    }
    return Budget(**{**fields, **overrides})


def call(call_id: str, content: str = "", name: str = "file_read") -> AIMessage:
    return AIMessage(
        content=content,
        tool_calls=[{"name": name, "args": {"path": "a.txt"}, "id": call_id}],
        id=f"ai-{call_id}",
    )


def result(call_id: str, content: str, name: str = "file_read") -> ToolMessage:
    return ToolMessage(content=content, tool_call_id=call_id, name=name, id=f"tool-{call_id}")


def total(messages: Sequence[BaseMessage], count: Counter) -> int:
    return REQUEST_OVERHEAD_TOKENS + sum(message_tokens(m, count) for m in messages)


# Priorities ----------------------------------------------------------------------------


def test_everything_fits_in_order() -> None:
    recent = [HumanMessage("earlier", id="h1"), AIMessage("answer", id="a1")]
    turn = [call("c1"), result("c1", "file text")]
    parts = ContextParts(
        system="You are Duck.",
        request="read a.txt",
        skills="### skill",
        memories=["likes tea", "uses vim"],
        recent=recent,
        turn=turn,
        summary="They met before.",
    )
    packed = pack_context(parts, roomy(), words)
    system, *rest = packed.messages
    assert isinstance(system, SystemMessage)
    assert system.text == (
        f"You are Duck.{SKILLS_HEADER}### skill{MEMORIES_HEADER}- likes tea\n- uses vim\n"
        f"{SUMMARY_HEADER}They met before."
    )
    assert rest == [*recent, HumanMessage("read a.txt"), *turn]
    assert packed.dropped == []
    assert packed.tokens == total(packed.messages, words)


def test_newest_history_wins_and_the_rest_is_dropped() -> None:
    recent = [HumanMessage(text_of(50, f"m{n}"), id=f"m{n}") for n in range(10)]
    parts = ContextParts(system="sys", request="now", recent=recent)
    room = 3 * (50 + MESSAGE_OVERHEAD_TOKENS)
    fixed = REQUEST_OVERHEAD_TOKENS + 2 * MESSAGE_OVERHEAD_TOKENS + 2
    packed = pack_context(parts, roomy(max_input_tokens=fixed + room + 10), words)
    assert packed.messages[1:-1] == recent[-3:]
    assert packed.dropped == recent[:-3], "the dropped part is the oldest, in order"


def test_skills_then_memories_then_summary_then_history() -> None:
    parts = ContextParts(
        system="sys",
        request="req",
        skills=text_of(30, "s"),
        memories=[text_of(30, "m")],
        summary=text_of(30, "y"),
        recent=[HumanMessage(text_of(30, "h"))],
    )
    base = REQUEST_OVERHEAD_TOKENS + 2 * MESSAGE_OVERHEAD_TOKENS + 2
    headers = words(SKILLS_HEADER) + words(MEMORIES_HEADER)
    budget = roomy(max_input_tokens=base + headers + 31 + 31)
    system = pack_context(parts, budget, words).messages[0].text
    assert "s29" in system and "m29" in system
    assert "y0" not in system, "no room left for the summary"
    assert len(pack_context(parts, budget, words).messages) == 2, "nor for history"


def test_caps_hold_each_section() -> None:
    parts = ContextParts(
        system="sys",
        request="req",
        skills=text_of(500, "s"),
        memories=[text_of(20, "big"), "small one", text_of(5, "tiny")],
        summary=text_of(500, "y"),
    )
    budget = roomy(max_skill_tokens=40, max_memory_tokens=10, max_summary_tokens=30)
    system = pack_context(parts, budget, words).messages[0].text
    skills, rest = system.split(MEMORIES_HEADER)
    memories, summary = rest.split(SUMMARY_HEADER)
    assert words(skills) <= words("sys" + SKILLS_HEADER) + 40
    assert "the rest cut" in skills
    assert memories == "- small one\n- " + text_of(5, "tiny") + "\n", "whole memories only"
    assert words(summary) <= 30


# The request ---------------------------------------------------------------------------


def test_long_request_is_cut_in_the_middle_with_a_marker() -> None:
    request = text_of(1000, "r")
    parts = ContextParts(system="sys", request=request, recent=[HumanMessage("old")])
    budget = roomy(max_input_tokens=200)
    packed = pack_context(parts, budget, words)
    sent = packed.messages[-1].text
    assert REQUEST_CUT in sent
    assert sent.startswith("r0 r1") and sent.endswith("r998 r999")
    assert packed.tokens <= 200
    assert packed.dropped == parts.recent


def test_no_room_for_the_request_is_a_clear_error() -> None:
    parts = ContextParts(system=text_of(300), request="hi")
    with pytest.raises(ContextBudgetError, match="the system prompt takes 306 of 256"):
        pack_context(parts, roomy(max_input_tokens=256), words)


# Tool traffic --------------------------------------------------------------------------


def test_large_tool_results_are_cut_head_and_tail() -> None:
    turn = [call("c1"), result("c1", text_of(5000, "line"))]
    parts = ContextParts(system="sys", request="req", turn=turn)
    packed = pack_context(parts, roomy(max_recent_events_tokens=100), words)
    cut = packed.messages[-1]
    assert isinstance(cut, ToolMessage)
    assert words(cut.text) <= 100
    assert OUTPUT_CUT.strip() in cut.text
    assert cut.text.startswith("line0 ") and cut.text.endswith(" line4999")
    assert (cut.tool_call_id, cut.id, cut.name) == ("c1", "tool-c1", "file_read")
    assert turn[1].text == text_of(5000, "line"), "the caller's message is not changed"


def test_a_tool_call_and_its_results_go_together() -> None:
    group = [
        AIMessage(
            content="",
            tool_calls=[
                {"name": "list_dir", "args": {}, "id": "a"},
                {"name": "list_dir", "args": {}, "id": "b"},
            ],
            id="ai",
        ),
        result("a", text_of(40)),
        result("b", text_of(40)),
    ]
    parts = ContextParts(system="sys", request="req", recent=[*group, HumanMessage("new", id="n")])
    group_cost = sum(message_tokens(m, words) for m in group)
    base = total(pack_context(parts, roomy(), words).messages, words) - group_cost
    for room in range(group_cost - 60, group_cost + 1, 7):
        packed = pack_context(parts, roomy(max_input_tokens=base + room - 1), words)
        assert packed.messages[1:2] == [HumanMessage("new", id="n")]
        assert packed.dropped == group, "all three dropped together"
    packed = pack_context(parts, roomy(max_input_tokens=base + group_cost), words)
    assert packed.messages[1:4] == group


def test_orphan_tool_result_and_stray_system_message_are_not_sent() -> None:
    orphan = result("gone", "its call was summarized away")
    stray = SystemMessage("old system prompt")
    parts = ContextParts(system="sys", request="req", recent=[orphan, stray, HumanMessage("hi")])
    packed = pack_context(parts, roomy(), words)
    assert packed.messages[1:] == [HumanMessage("hi"), HumanMessage("req")]
    assert packed.dropped == [orphan, stray]


def test_message_text_shows_tool_calls_and_results() -> None:
    assert message_text(call("c1", "Let me look.")) == (
        'Let me look.\n[calling tools: file_read({"path": "a.txt"})]'
    )
    assert message_text(result("c1", "hello")) == "[tool file_read result]\nhello"


# Property-style: random histories of many sizes ----------------------------------------


def random_history(rng: random.Random, turns: int, prefix: str) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    for n in range(turns):
        kind = rng.choice(["human", "ai", "tools"])
        size = rng.choice([0, 1, 5, 50, 400, 3000])
        if kind == "human":
            messages.append(HumanMessage(text_of(size, "h"), id=f"{prefix}{n}"))
        elif kind == "ai":
            messages.append(AIMessage(text_of(size, "a"), id=f"{prefix}{n}"))
        else:
            ids = [f"{prefix}{n}-{k}" for k in range(rng.randint(1, 3))]
            calls = [{"name": "search_files", "args": {"query": "x"}, "id": i} for i in ids]
            messages.append(AIMessage(content="", tool_calls=calls, id=f"{prefix}{n}"))
            messages += [result(i, text_of(rng.choice([0, 3, 300, 5000]), "t")) for i in ids]
    return messages


def random_parts(rng: random.Random) -> ContextParts:
    return ContextParts(
        system=text_of(rng.randint(1, 60), "sys"),
        request=text_of(rng.choice([0, 3, 80, 2000, 9000]), "req"),
        skills=text_of(rng.choice([0, 40, 900]), "skill"),
        memories=[text_of(rng.randint(1, 120), f"mem{k}") for k in range(rng.randint(0, 6))],
        recent=random_history(rng, rng.randint(0, 25), "r"),
        turn=random_history(rng, rng.randint(0, 6), "t"),
        summary=text_of(rng.choice([0, 30, 700]), "sum"),
    )


def random_budget(rng: random.Random) -> Budget:
    return Budget(
        max_input_tokens=rng.choice([300, 512, 1000, 2048, 6144, 20_000]),
        max_memory_tokens=rng.choice([0, 50, 512]),
        max_skill_tokens=rng.choice([0, 50, 512]),
        max_recent_events_tokens=rng.choice([0, 20, 1024]),
        max_summary_tokens=rng.choice([0, 100]),
        reserve_output_tokens=rng.choice([0, 64]),
        tools_tokens=rng.choice([0, 100]),
    )


def assert_packed_well(
    parts: ContextParts, budget: Budget, packed: PackedContext, count: Counter
) -> None:
    messages = packed.messages
    assert sum(count(message_text(m)) for m in messages) <= budget.max_input_tokens
    # The system message is counted as the sum of its parts, which joined count no more.
    assert total(messages, count) <= packed.tokens <= budget.limit
    assert isinstance(messages[0], SystemMessage) and messages[0].text.startswith(parts.system)
    requests = [m for m in messages if isinstance(m, HumanMessage) and m.id is None]
    assert len(requests) == 1
    assert requests[0].text == parts.request or REQUEST_CUT in requests[0].text
    history = [*parts.recent, *parts.turn]
    sent_ids = [m.id for m in messages[1:] if m.id is not None]
    order = [m.id for m in history]
    assert sent_ids == [i for i in order if i in sent_ids], "order kept"
    assert sorted(sent_ids + [m.id for m in packed.dropped]) == sorted(order), "nothing lost"
    assert_calls_answered(messages)
    for message in messages:
        if isinstance(message, ToolMessage):
            cap = budget.max_recent_events_tokens
            assert count(message.text) <= cap or message.text == OUTPUT_OMITTED


def assert_calls_answered(messages: Sequence[BaseMessage]) -> None:
    """Each tool call's results follow it directly; no result without its call."""
    pending: set[str] = set()
    for message in messages:
        if isinstance(message, ToolMessage):
            assert message.tool_call_id in pending
            pending.discard(message.tool_call_id)
        else:
            assert not pending, "a tool call lost its results"
            if isinstance(message, AIMessage):
                pending = {c["id"] for c in message.tool_calls if c["id"]}
    assert not pending


@pytest.mark.parametrize("counter", [words, estimate_tokens], ids=["words", "estimate"])
@pytest.mark.parametrize("seed", range(60))
def test_random_histories_always_fit(seed: int, counter: Counter) -> None:
    rng = random.Random(seed)
    parts, budget = random_parts(rng), random_budget(rng)
    try:
        packed = pack_context(parts, budget, counter)
    except ContextBudgetError:
        fixed = REQUEST_OVERHEAD_TOKENS + 2 * MESSAGE_OVERHEAD_TOKENS
        room = budget.limit - fixed - counter(parts.system)
        assert room < counter(REQUEST_CUT), "fails only when not even the cut marker fits"
        return
    assert_packed_well(parts, budget, packed, counter)


# Helpers for callers -------------------------------------------------------------------


def test_split_at_request() -> None:
    before = [HumanMessage("first"), AIMessage("one")]
    after = [call("c"), result("c", "out")]
    assert split_at_request([*before, HumanMessage("second"), *after]) == (before, "second", after)
    assert split_at_request([AIMessage("hi")]) == ([AIMessage("hi")], "", [])


async def test_prefetched_counts_are_used_when_everything_fits() -> None:
    parts = ContextParts(system="sys", request="req", recent=[HumanMessage("a b c")])

    class TenEach:
        async def count_many(self, texts: Sequence[str]) -> list[int]:
            return [10 for _ in texts]

    count = await prefetched(TenEach(), countable_texts(parts))
    packed = pack_context(parts, roomy(), count)
    assert packed.tokens == REQUEST_OVERHEAD_TOKENS + 3 * (10 + MESSAGE_OVERHEAD_TOKENS)


def test_budget_from_settings() -> None:
    settings = load_settings(env_file=None, max_input_tokens=4000, max_skill_tokens=300)
    budget = Budget.from_settings(settings, reserve_output_tokens=50)
    assert (budget.max_input_tokens, budget.max_skill_tokens) == (4000, 300)
    assert budget.max_memory_tokens == settings.max_memory_tokens
    assert budget.limit == 3950
