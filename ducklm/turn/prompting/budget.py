"""Packing what a role sees into its input budget. Pure: no IO, no model calls.

Priority, highest first: the system prompt and the current request (always sent), the
selected skills, recalled memories, the running summary of older history (each within
its own cap), then the history, newest first, until the budget is used. Skills,
memories and the summary join the system prompt as sections, because small models'
chat templates often refuse a second system message. Older history that does not fit
is returned as `dropped`, for the caller to fold into the running summary.

An AIMessage with tool calls and the ToolMessages that answer it are kept or dropped
together: OpenAI-style servers reject a call without its result and a result without
its call. Pass history already shaped for the model (`for_native_tools` answers
dangling calls), since the packer sends what it is given.

Counters are assumed not to grow when two texts are joined at whitespace (true of the
estimate, of word counts and, in practice, of BPE tokenizers): the system message is
counted as the sum of its parts.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from ducklm.config.settings import Settings
from ducklm.models.tokens import TokenCounter, fit_head, fit_head_tail

# Chat-template tokens around each message (ChatML: `<|im_start|>user\n` ... `<|im_end|>\n`
# is 5; Llama 3's header and `<|eot_id|>` is 5), rounded up.
MESSAGE_OVERHEAD_TOKENS = 6
# Once per request: BOS and the generation prompt (`<|im_start|>assistant\n`).
REQUEST_OVERHEAD_TOKENS = 8
# Per native tool call: its id and the template's wrapping (`<tool_call>{"name": ...}`),
# which `message_text` does not spell out.
TOOL_CALL_OVERHEAD_TOKENS = 12

SKILLS_HEADER = "\n\n## Skills that may help\n"
MEMORIES_HEADER = "\n\n## What you remember (may be out of date)\n"
SUMMARY_HEADER = "\n\n## Earlier in this conversation (summary)\n"
SECTION_CUT = "\n[... the rest cut to fit ...]"
REQUEST_CUT = "\n[... middle of the request cut to fit ...]\n"
OUTPUT_CUT = "\n[... middle of the output cut to fit ...]\n"
OUTPUT_OMITTED = "[output omitted to fit]"
REQUEST_FLOOR_TOKENS = 256
"""The least of a request worth sending (a longer one is cut in the middle to fit)."""


class ContextBudgetError(ValueError):
    """The system prompt leaves no room for the request: the budget is set too small.

    Attributes:
        essential: What the request cannot do without: the system prompt, the request
            (up to `REQUEST_FLOOR_TOKENS`) and the bound tools' schemas.
    """

    def __init__(self, message: str, *, essential: int) -> None:
        super().__init__(message)
        self.essential = essential


@dataclass(frozen=True, kw_only=True)
class ContextParts:
    """Everything a role could see, before packing."""

    system: str
    """The role's system prompt; always kept."""
    request: str
    """The current request; always kept, cut in the middle (marked) only if it alone is too big."""
    skills: str = ""
    """Rendered skills (`render_skills`), capped at `Budget.max_skill_tokens`."""
    memories: Sequence[str] = ()
    """Recalled memories, best first, capped at `Budget.max_memory_tokens`."""
    recent: Sequence[BaseMessage] = ()
    """History before the request, oldest first."""
    turn: Sequence[BaseMessage] = ()
    """This turn's messages after the request (tool calls and results), oldest first."""
    summary: str = ""
    """The running summary of history dropped earlier."""


@dataclass(frozen=True, kw_only=True)
class Budget:
    """Token limits of one request."""

    max_input_tokens: int
    max_memory_tokens: int
    max_skill_tokens: int
    max_recent_events_tokens: int
    """Cap of each tool result in the history."""
    max_summary_tokens: int = 256
    reserve_output_tokens: int = 0
    """Taken off `max_input_tokens`, for servers that count the answer in the same window."""
    tools_tokens: int = 0
    """Taken off `max_input_tokens`: what the bound tools' schemas cost in the prompt."""

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: int) -> Budget:
        """The budget the operator configured, with `overrides` for one role.

        `max_input_tokens` is overridden with what the role's server serves
        (`ducklm.models.context_size.input_budget`) by `messages.pack_for_role`.
        """
        fields = {
            "max_input_tokens": settings.max_input_tokens,
            "max_memory_tokens": settings.max_memory_tokens,
            "max_skill_tokens": settings.max_skill_tokens,
            "max_recent_events_tokens": settings.max_recent_events_tokens,
        }
        return cls(**{**fields, **overrides})

    def shrunk(self) -> Budget:
        """The budget with every section's cap halved: for a request the server cut.

        Less of the skills, memories and summary, and shorter tool results, so more of
        what is left is the conversation itself.
        """
        return dataclasses.replace(
            self,
            max_memory_tokens=self.max_memory_tokens // 2,
            max_skill_tokens=self.max_skill_tokens // 2,
            max_recent_events_tokens=self.max_recent_events_tokens // 2,
            max_summary_tokens=self.max_summary_tokens // 2,
        )

    @property
    def limit(self) -> int:
        """Tokens the messages may take, chat-template overhead included."""
        return self.max_input_tokens - self.reserve_output_tokens - self.tools_tokens


@dataclass(frozen=True)
class PackedContext:
    """What to send, and what did not fit."""

    messages: list[BaseMessage]
    """System message, kept history, the request, this turn's kept messages."""
    dropped: list[BaseMessage]
    """History left out (oldest first, as given): the caller summarizes it."""
    tokens: int
    """The packed messages' count with chat-template overhead, at most `Budget.limit` (the
    system message counted as the sum of its parts, which is no less than it joined)."""
    essential: int = 0
    """What no packing leaves out: the system prompt, and the request up to
    `REQUEST_FLOOR_TOKENS` (more of it is cut in the middle when it does not fit)."""


def pack_context(parts: ContextParts, budget: Budget, count: TokenCounter) -> PackedContext:
    """Pack `parts` into `budget`, counting with `count`.

    Raises:
        ContextBudgetError: The system prompt alone leaves no room for the request.
    """
    system_tokens = count(parts.system) + MESSAGE_OVERHEAD_TOKENS
    room = budget.limit - REQUEST_OVERHEAD_TOKENS - system_tokens - MESSAGE_OVERHEAD_TOKENS
    essential = budget.limit - room + min(count(parts.request), REQUEST_FLOOR_TOKENS)
    request = _fit_request(parts.request, room, count)
    if request is None:
        raise ContextBudgetError(
            f"the system prompt takes {system_tokens} of {budget.limit} input tokens: "
            "no room is left for the request",
            essential=essential + budget.tools_tokens,
        )
    room -= count(request)
    sections = _sections(parts, budget, room, count)
    room -= sum(map(count, sections))
    history = _fit_history(parts, budget.max_recent_events_tokens, room, count)
    messages: list[BaseMessage] = [
        SystemMessage("".join([parts.system, *sections])),
        *history.recent,
        HumanMessage(request),
        *history.turn,
    ]
    used = budget.limit - room + history.tokens
    return PackedContext(
        messages=messages, dropped=history.dropped, tokens=used, essential=essential
    )


def message_text(message: BaseMessage) -> str:
    """A message's text as the model reads it, tool calls and results included."""
    if isinstance(message, ToolMessage):
        return f"[tool {message.name or 'call'} result]\n{message.text}"
    if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
        calls = [
            f"{c['name']}({json.dumps(c['args'], ensure_ascii=False)})" for c in message.tool_calls
        ]
        calls += [f"{c.get('name')}({c.get('args')})" for c in message.invalid_tool_calls]
        return f"{message.text}\n[calling tools: {'; '.join(calls)}]"
    return message.text


def message_tokens(message: BaseMessage, count: TokenCounter) -> int:
    """What `message` costs in a request: its text, template tokens, tool-call wrapping."""
    calls = len(message.tool_calls) if isinstance(message, AIMessage) else 0
    return (
        count(message_text(message)) + MESSAGE_OVERHEAD_TOKENS + calls * TOOL_CALL_OVERHEAD_TOKENS
    )


def split_at_request(
    messages: Sequence[BaseMessage],
) -> tuple[list[BaseMessage], str, list[BaseMessage]]:
    """State's messages as (history before the request, the request, this turn after it).

    The request is the last human message; with none, everything is history.
    """
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return list(messages[:index]), messages[index].text, list(messages[index + 1 :])
    return list(messages), "", []


def countable_texts(parts: ContextParts) -> list[str]:
    """The texts `pack_context` will count when everything fits: prefetch these.

    See `ducklm.models.tokens.prefetched`: one batch to the server's tokenizer, then packing
    counts from the table (and estimates what it cuts).
    """
    texts = [parts.system, parts.request, SKILLS_HEADER + parts.skills]
    texts += [_memories_text(parts.memories), SUMMARY_HEADER + parts.summary]
    return texts + [message_text(m) for m in (*parts.recent, *parts.turn)]


def _fit_request(request: str, room: int, count: TokenCounter) -> str | None:
    """The request, cut in the middle if it alone is too big; None if there is no room."""
    if room >= 0 and count(request) <= room:
        return request
    cut = fit_head_tail(request, room, count, REQUEST_CUT) if room > 0 else ""
    return cut or None


def _sections(parts: ContextParts, budget: Budget, room: int, count: TokenCounter) -> list[str]:
    """The system prompt's extra sections in priority order, each within its cap and `room`."""
    skills_cap = _cap(SKILLS_HEADER, budget.max_skill_tokens, room, count)
    skills = _fit_text(SKILLS_HEADER, parts.skills, skills_cap, count)
    room -= count(skills)
    memories_cap = _cap(MEMORIES_HEADER, budget.max_memory_tokens, room, count)
    memories = _fit_memories(parts.memories, memories_cap, count)
    room -= count(memories)
    summary_cap = _cap(SUMMARY_HEADER, budget.max_summary_tokens, room, count)
    summary = _fit_text(SUMMARY_HEADER, parts.summary, summary_cap, count)
    return [text for text in (skills, memories, summary) if text]


def _cap(header: str, cap: int, room: int, count: TokenCounter) -> int:
    """A cap covers a section's body; its header comes on top, while there is room."""
    return min(cap + count(header), room) if cap > 0 else 0


def _fit_text(header: str, body: str, cap: int, count: TokenCounter) -> str:
    if not body.strip() or cap <= 0:
        return ""
    cut = fit_head(header + body, cap, count, SECTION_CUT)
    kept = cut.removesuffix(SECTION_CUT)
    # A header with nothing under it is only noise.
    return cut if kept.startswith(header) and kept[len(header) :].strip() else ""


def _memories_text(memories: Sequence[str]) -> str:
    return MEMORIES_HEADER + "".join(_memory_line(m) for m in memories) if memories else ""


def _memory_line(memory: str) -> str:
    return "- " + memory.strip().replace("\n", "\n  ") + "\n"


def _fit_memories(memories: Sequence[str], cap: int, count: TokenCounter) -> str:
    """Whole memories, best first; one that does not fit is skipped, not cut."""
    if cap <= 0 or not memories:
        return ""
    whole = _memories_text(memories)
    if count(whole) <= cap:
        return whole
    chosen = ""
    for memory in memories:
        line = _memory_line(memory)
        if count(MEMORIES_HEADER + chosen + line) <= cap:
            chosen += line
    return MEMORIES_HEADER + chosen if chosen else ""


@dataclass(frozen=True)
class _Group:
    """Messages kept or dropped together: a message, or a tool call and its results."""

    given: tuple[BaseMessage, ...]
    sent: tuple[BaseMessage, ...]
    """`given` with long tool results cut."""
    tokens: int
    sendable: bool
    """False for a tool result whose call is not in the history (servers reject it) and a
    system message (templates want one, first)."""


@dataclass(frozen=True)
class _FittedHistory:
    recent: list[BaseMessage]
    turn: list[BaseMessage]
    dropped: list[BaseMessage]
    tokens: int


def _fit_history(
    parts: ContextParts, result_cap: int, room: int, count: TokenCounter
) -> _FittedHistory:
    """The newest groups that fit in `room`; the older ones go to `dropped`."""
    before = _groups(parts.recent, result_cap, count)
    groups = [*before, *_groups(parts.turn, result_cap, count)]
    kept: set[int] = set()
    used = 0
    for index in range(len(groups) - 1, -1, -1):
        group = groups[index]
        if not group.sendable:
            continue
        if used + group.tokens > room:
            break  # the kept history stays one unbroken stretch up to the newest
        kept.add(index)
        used += group.tokens

    def sent(indices: range) -> list[BaseMessage]:
        return [m for i in indices if i in kept for m in groups[i].sent]

    dropped = [m for i, group in enumerate(groups) if i not in kept for m in group.given]
    return _FittedHistory(
        sent(range(len(before))), sent(range(len(before), len(groups))), dropped, used
    )


def _groups(messages: Sequence[BaseMessage], result_cap: int, count: TokenCounter) -> list[_Group]:
    runs: list[list[BaseMessage]] = []
    for message in messages:
        if isinstance(message, ToolMessage) and runs and _answers(runs[-1][0], message):
            runs[-1].append(message)
        else:
            runs.append([message])
    return [_group(run, result_cap, count) for run in runs]


def _answers(call: BaseMessage, result: ToolMessage) -> bool:
    return isinstance(call, AIMessage) and any(
        c["id"] == result.tool_call_id for c in call.tool_calls
    )


def _group(run: list[BaseMessage], result_cap: int, count: TokenCounter) -> _Group:
    sent = tuple(_cut_result(m, result_cap, count) for m in run)
    tokens = sum(message_tokens(m, count) for m in sent)
    sendable = not isinstance(run[0], (ToolMessage, SystemMessage))
    return _Group(tuple(run), sent, tokens, sendable)


def _cut_result(message: BaseMessage, cap: int, count: TokenCounter) -> BaseMessage:
    """A tool result cut to `cap` tokens (head and tail kept, the cut marked)."""
    if not isinstance(message, ToolMessage) or count(message.text) <= cap:
        return message
    cut = fit_head_tail(message.text, cap, count, OUTPUT_CUT) or OUTPUT_OMITTED
    return message.model_copy(update={"content": cut})
