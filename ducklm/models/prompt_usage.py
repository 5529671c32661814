"""Whether a model server saw the whole prompt DuckLM sent it.

A server that cuts a prompt to fit its window says so only in its numbers: the
`usage.prompt_tokens` of the reply (Ollama, LM Studio, older llama-server builds), and
llama-server's `truncated` flag and `timings`, read by the wire reader into a
`PromptRead` (`ducklm.models.wire`). DuckLM counts what it sends (`ducklm.models.tokens`),
so a reply whose server saw clearly fewer tokens than were sent was cut, if the count
can be trusted:

- `truncated`, and a `timings` count (`prompt_n + cache_n`, the whole prompt, cached or
  not), are llama-server's own word: a cut;
- a `usage` count alone is not. Servers have counted only what their prompt cache
  missed (Ollama before mid-2026), only the messages' text, or 0, and each looks like a
  cut. A low usage count is only `low`: a cut when the same server says so again with
  about the same count (`CONSISTENT`), as a window that cuts every long prompt to its
  size does, and a count of what a cache missed does not (`ContextSizes.low_count`).

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

from typing import Any, Literal

from ducklm.models.context_size import ServedContext
from ducklm.models.wire import PromptRead

EXACT_FLOOR = 0.8
ESTIMATE_FLOOR = 0.4
MIN_CUT_SEEN = 256

Verdict = Literal["cut", "low", "read"]
"""What a reply says of its prompt: cut (on evidence DuckLM trusts), read in fewer tokens
than sent by a count that may not be of the whole prompt, or read (or it did not say)."""


def prompt_seen(reply: Any) -> PromptRead:
    """What a reply says the server read of its prompt (unknown when it says nothing)."""
    return PromptRead.of(getattr(reply, "response_metadata", None))


def least_read(counted: int, estimated: int, *, exact_count: bool) -> int:
    """The fewest prompt tokens a server that read the whole request could report.

    Args:
        counted: DuckLM's count of the messages (with chat-template overhead).
        estimated: The tools' schemas, always estimated.
        exact_count: `counted` came from the server's own tokenizer.
    """
    floor = EXACT_FLOOR if exact_count else ESTIMATE_FLOOR
    return int(counted * floor + estimated * ESTIMATE_FLOOR)


def judge_read(least: int, seen: PromptRead, served: ServedContext, *, messages: int) -> Verdict:
    """Whether the server cut a request it should have read `least` tokens of at least.

    Args:
        least: `least_read` of the request.
        seen: What the server reported.
        served: The window DuckLM believed the server has.
        messages: `least_read` of the messages alone, without the tools' schemas: what a
            usage count of the messages' text only comes to (a cut cuts messages too).
    """
    if seen.truncated:
        return "cut"
    if seen.tokens is None:
        return "read"
    floor = least if seen.basis == "timings" else messages
    least_kept = max(MIN_CUT_SEEN, served.tokens // 2 if served.from_server else 0)
    if not least_kept <= seen.tokens < floor:
        return "read"
    return "cut" if seen.basis == "timings" else "low"
