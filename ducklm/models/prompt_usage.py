"""Whether a model server saw the whole prompt DuckLM sent it.

A server that cuts a prompt to fit its window says so only in its numbers: the
`usage.prompt_tokens` of the reply (Ollama, LM Studio, older llama-server builds), and
llama-server's `truncated` flag. DuckLM counts what it sends (`ducklm.models.tokens`), so
a reply whose server saw clearly fewer tokens than were sent was cut.

"Clearly fewer" allows for DuckLM's count erring high (it is an upper bound by design).
Measured on the bundled SmolLM2 (`scripts/bench/prompt_count.py`: the thinker's prompt
and a request of prose, Python, JSON tool schemas, YAML, shell output, non-ASCII text,
against the prompt tokens llama-cpp-python's server counts for them):
- texts counted with the server's tokenizer (`ServerTokenizer`, llama-server) came to
  1.00-1.01x what the server read: only the chat-template overhead is estimated. A server
  that read under `EXACT_FLOOR` of them was cut;
- the estimate (servers without `/tokenize`, such as llama-cpp-python's) came to 1.07x
  (shell output) to 1.81x (JSON) of it, and the tools' schemas are always estimated: under
  `ESTIMATE_FLOOR` of those, which leaves room for a tokenizer a quarter tighter than
  SmolLM2's on JSON (a 128k-151k vocabulary), was cut;
- and in both, a cut leaves at least half of the window it made room in (llama.cpp keeps
  half, Ollama all of it): a count under `MIN_CUT_SEEN` (half of the smallest window DuckLM
  runs, 512) or, when the server told its window, under half of it, is a short prompt, not
  a cut. This also keeps counts that are not of the whole prompt (only the tokens a prompt
  cache missed, as some Ollama versions report) from looking like cuts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage

from ducklm.models.context_size import ServedContext

EXACT_FLOOR = 0.8
ESTIMATE_FLOOR = 0.4
MIN_CUT_SEEN = 256
SERVER_FIELDS = ("truncated", "timings")
"""llama-server's fields of a completion that `LocalChatOpenAI` keeps in `response_metadata`."""


@dataclass(frozen=True)
class PromptSeen:
    """What the server says it read of the prompt."""

    tokens: int | None
    """Prompt tokens it read (`usage.prompt_tokens`); None when it said nothing."""
    truncated: bool = False
    """llama-server's `truncated`: it cut the prompt to fit."""


def prompt_seen(reply: BaseMessage) -> PromptSeen:
    """The prompt size a reply reports (usage, else llama-server's timings)."""
    metadata: dict[str, Any] = getattr(reply, "response_metadata", None) or {}
    truncated = metadata.get("truncated") is True
    usage = getattr(reply, "usage_metadata", None)
    if usage and usage.get("input_tokens"):
        return PromptSeen(int(usage["input_tokens"]), truncated)
    return PromptSeen(_timings_tokens(metadata.get("timings")), truncated)


def _timings_tokens(timings: Any) -> int | None:
    """`prompt_n` counts only the tokens not already cached: with `cache_n`, the whole prompt."""
    if not isinstance(timings, dict):
        return None
    read, cached = timings.get("prompt_n"), timings.get("cache_n")
    if isinstance(read, int) and isinstance(cached, int):
        return read + cached
    return None


def least_read(counted: int, estimated: int, *, exact_count: bool) -> int:
    """The fewest prompt tokens a server that read the whole request could report.

    Args:
        counted: DuckLM's count of the messages (with chat-template overhead).
        estimated: The tools' schemas, always estimated.
        exact_count: `counted` came from the server's own tokenizer.
    """
    floor = EXACT_FLOOR if exact_count else ESTIMATE_FLOOR
    return int(counted * floor + estimated * ESTIMATE_FLOOR)


def was_cut(least: int, seen: PromptSeen, served: ServedContext) -> bool:
    """Whether the server cut a request it should have read `least` tokens of at least.

    Args:
        least: `least_read` of the request.
        seen: What the server reported.
        served: The window DuckLM believed the server has.
    """
    if seen.truncated:
        return True
    if seen.tokens is None:
        return False
    least_kept = max(MIN_CUT_SEEN, served.tokens // 2 if served.from_server else 0)
    return least_kept <= seen.tokens < least
