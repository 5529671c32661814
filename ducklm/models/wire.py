"""The model servers' wire, read in one place: answer, reasoning, tool calls, usage, finish.

Every OpenAI-compatible server DuckLM talks to speaks a slightly different dialect of
chat completions; `LocalChatOpenAI` hands each completion and each stream chunk to a
`WireReader` before langchain-openai builds its message from it, so every role, every
node and every door reads one shape:

- **reasoning** comes in `reasoning_content` (llama-server's deepseek format, vLLM's
  parsers), in `reasoning` (Ollama, OpenRouter, gpt-oss on vLLM) or inline in
  `<think>` tags (`ducklm.models.think_tags`). It leaves the answer's text and goes to
  `additional_kwargs["reasoning_content"]`, where LangChain keeps reasoning
  (`content_blocks` reads it as a `reasoning` block) and from where langchain-openai
  never sends it back to a server;
- **tool calls** get an `index` and an `id` when the server sent none (some send whole
  calls without an index, some calls without ids, some several calls under one index);
- **usage** and llama-server's `timings` and `truncated` are held back from the chunks
  and said once, at the end of the stream (`end`): some servers repeat usage in every
  chunk, and LangChain adds up the numbers of the chunks it merges. What they tell of
  the prompt is read into a `PromptRead`, the only evidence the served-context guard
  takes (`ducklm.models.prompt_usage`).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

from ducklm.models.think_tags import Split, ThinkSplitter, split_whole

REASONING_KEY = "reasoning_content"
"""Where a message keeps its reasoning (`additional_kwargs`), as LangChain's chat models do."""
PROMPT_KEY = "prompt_read"
"""The `response_metadata` key of what the server said it read of the prompt."""
SEEN_KEY = "wire_seen"
"""The `response_metadata` key of what a stream showed of its server: `usage_asked`,
`usage` (given) and `reasoning`, which a turn learns its servers' capabilities from."""
REASONING_FIELDS = ("reasoning_content", "reasoning")
_SERVER_FIELDS = frozenset({"usage", "timings", "truncated"})
"""A chunk's fields said once, at the end of the stream."""

Basis = Literal["timings", "usage", "none"]
"""What a prompt count rests on: llama-server's `timings` (`prompt_n + cache_n`, the whole
prompt), `usage.prompt_tokens`, or nothing."""


@dataclass(frozen=True)
class PromptRead:
    """What a server said it read of one request's prompt."""

    tokens: int | None
    """The prompt tokens it read; None when it did not say (or said 0)."""
    basis: Basis = "none"
    truncated: bool = False
    """llama-server's `truncated`: it cut the prompt to fit its window."""

    def as_metadata(self) -> dict[str, Any]:
        """As kept in a reply's `response_metadata[PROMPT_KEY]`."""
        return {"tokens": self.tokens, "basis": self.basis, "truncated": self.truncated}

    @classmethod
    def of(cls, metadata: Any) -> PromptRead:
        """The read kept in `metadata` (a reply's `response_metadata`); unknown if none."""
        kept = metadata.get(PROMPT_KEY) if isinstance(metadata, dict) else None
        if not isinstance(kept, dict):
            return cls(None)
        tokens, basis = kept.get("tokens"), kept.get("basis")
        return cls(
            tokens if _count(tokens) else None,
            basis if basis in ("timings", "usage") else "none",
            kept.get("truncated") is True,
        )


def prompt_read(usage: Any, timings: Any, *, truncated: bool = False) -> PromptRead:
    """The prompt a reply's `usage` and `timings` say the server read.

    `timings.prompt_n` counts only what the prompt cache missed: with `cache_n` it is the
    whole prompt. `usage.prompt_tokens` is the whole prompt on most servers, but some
    count only the cache misses; when `cached_tokens` says more was cached than counted,
    the two together are the whole. A count of 0 says nothing.
    """
    if isinstance(timings, dict) and _count(timings.get("prompt_n"), zero=True):
        cached = timings.get("cache_n")
        if _count(cached, zero=True) and timings["prompt_n"] + cached > 0:
            return PromptRead(timings["prompt_n"] + cached, "timings", truncated)
    counted = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    if not _count(counted):
        return PromptRead(None, "none", truncated)
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if _count(cached) and cached > counted:
        counted += cached
    return PromptRead(counted, "usage", truncated)


class WireReader:
    """One reply, a stream's chunks or a whole completion, read into DuckLM's parts.

    Args:
        opened: The model's chat template opens `<think>` in the prompt (learned from an
            earlier reply, `template_opens`); None while not known: a stream's text that
            opens no tag is held back until it tells (`ThinkSplitter`).
    """

    def __init__(self, *, opened: bool | None = False) -> None:
        self._opened = opened
        self._think = ThinkSplitter(opened=opened)
        self._orphan = False  # a whole completion's
        self._calls = _CallNumbers()
        self._usage: dict[str, Any] | None = None
        self._timings: Any = None
        self._truncated = False
        self._reasoned = False

    @property
    def orphan_close(self) -> bool:
        """The reply closed a `<think>` it never opened: its template opens it."""
        return self._orphan or self._think.orphan_close

    @property
    def template_opens(self) -> bool | None:
        """What the reply showed of its chat template: opens `<think>`, opens none, unknown.

        A whole completion tells only the first: a JSON reply under a grammar closes no
        tag even when the template opened one.
        """
        return True if self._orphan else self._think.template_opens

    @property
    def reasoned(self) -> bool:
        """The reply carried reasoning, in a field or in tags."""
        return self._reasoned

    def chunk(self, raw: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """A stream chunk as langchain-openai should read it, and the reasoning in it.

        The chunk is changed in place (langchain-openai dumps a fresh dict for each):
        the answer's text only, tool calls with index and id, and no usage (kept for
        `end`). Read for every token, so the common chunk costs a few lookups.
        """
        if "usage" in raw or "timings" in raw or "truncated" in raw:
            self._keep_server_fields(raw)
            for name in _SERVER_FIELDS:
                raw.pop(name, None)
        choices = raw.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raw["choices"] = []
            return raw, ""
        delta = choices[0].get("delta")
        if not isinstance(delta, dict):
            return raw, ""
        reasoning = _field_reasoning(delta)
        if reasoning:
            self._think.no_inline()  # the server parts it: the text is all answer
        content = delta.get("content")
        if content:
            split = self._think.feed(content if isinstance(content, str) else _text(content))
            delta["content"] = split.answer
            reasoning += split.reasoning
        self._reasoned = self._reasoned or bool(reasoning)
        if delta.get("tool_calls"):
            delta["tool_calls"] = self._calls.pieces(delta["tool_calls"])
        return raw, reasoning

    def end(self) -> tuple[Split, dict[str, Any] | None, PromptRead]:
        """The stream's end: text held back, the usage, and what it says of the prompt."""
        held = self._think.end()
        self._reasoned = self._reasoned or bool(held.reasoning)
        return held, self._usage, self.prompt()

    @property
    def usage_said(self) -> bool:
        """The reply carried usage (a stream: in any chunk)."""
        return self._usage is not None

    def prompt(self) -> PromptRead:
        """What the reply said of the prompt so far."""
        return prompt_read(self._usage, self._timings, truncated=self._truncated)

    def completion(self, raw: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """A whole completion as langchain-openai should read it, and its reasoning."""
        self._keep_server_fields(raw)
        choices = raw.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return raw, ""
        choice = dict(choices[0])
        message = dict(choice.get("message") or {})
        opened = self._opened is True
        split, self._orphan = split_whole(_text(message.get("content")), opened=opened)
        message["content"] = split.answer or (None if message.get("tool_calls") else "")
        reasoning = _field_reasoning(message) + split.reasoning
        self._reasoned = bool(reasoning)
        if message.get("tool_calls"):
            message["tool_calls"] = [_whole_call(call) for call in message["tool_calls"]]
        choice["message"] = message
        return {**raw, "choices": [choice, *choices[1:]]}, reasoning

    def _keep_server_fields(self, raw: dict[str, Any]) -> None:
        usage = raw.get("usage")
        if isinstance(usage, dict) and usage:
            self._usage = usage  # the latest: servers that repeat it count up to the whole
        if raw.get("timings") is not None:
            self._timings = raw["timings"]
        self._truncated = self._truncated or raw.get("truncated") is True


class _CallNumbers:
    """Gives each streamed tool call its own index and an id, whatever the server sent."""

    def __init__(self) -> None:
        self._open: dict[Any, tuple[int, str | None]] = {}  # server's key -> (index, id)
        self._next = 0

    def pieces(self, pieces: Any) -> list[dict[str, Any]]:
        if not isinstance(pieces, list):
            return []
        return [self._piece(n, p) for n, p in enumerate(pieces) if isinstance(p, dict)]

    def _piece(self, position: int, piece: dict[str, Any]) -> dict[str, Any]:
        function = dict(piece.get("function") or {})
        key = piece.get("index", position)
        call_id = piece.get("id") or None
        known = self._open.get(key)
        if known is None or (call_id is not None and call_id != known[1]):
            known = (self._next, call_id or new_call_id())
            self._next += 1
            self._open[key] = known
            index, call_id = known
        else:
            index, call_id = known[0], None
            function.pop("name", None)  # repeated by some servers: merging would double it
        if not isinstance(function.get("arguments"), (str, type(None))):
            function["arguments"] = json.dumps(function["arguments"])
        return {**piece, "index": index, "id": call_id, "function": function}


def _whole_call(call: Any) -> Any:
    """A completion's tool call with an id, and its arguments as JSON text."""
    if not isinstance(call, dict):
        return call
    function = dict(call.get("function") or {})
    if not isinstance(function.get("arguments"), (str, type(None))):
        function["arguments"] = json.dumps(function["arguments"])
    return {**call, "id": call.get("id") or new_call_id(), "function": function}


def new_call_id() -> str:
    """An id for a tool call the server sent without one."""
    return f"call_{uuid.uuid4().hex[:12]}"


def _field_reasoning(part: dict[str, Any]) -> str:
    """The reasoning a message or delta carries in a field of its own.

    Servers that send both fields send the same text twice: the first found is read.
    """
    if "reasoning_content" not in part and "reasoning" not in part:
        return ""
    for name in REASONING_FIELDS:
        value = part.pop(name, None)
        if isinstance(value, str) and value:
            for other in REASONING_FIELDS:
                part.pop(other, None)
            return value
    return ""


def _text(content: Any) -> str:
    """A message's content as text: a string, or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            (part.get("text") or "") if isinstance(part, dict) else str(part) for part in content
        )
    return ""


def _count(value: Any, *, zero: bool = False) -> TypeGuard[int]:
    """Whether `value` is a token count (an int, not a bool; above 0 unless `zero`)."""
    return isinstance(value, int) and not isinstance(value, bool) and (value > 0 or zero)
