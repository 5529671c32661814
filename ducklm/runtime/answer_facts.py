"""The facts under an answer: which model spoke it, how soon, how fast, whether it was cut.

The runner hands every event of a run to an `AnswerClock` as it passes
(`ducklm.runtime.runner`); the clock keeps the times of the answer's first and last
`token`, the answering call's `model_usage` and any `answer_cut` / `context_cut`, and
the runner emits what it found as one audited `answer_facts` event before `done`, so a
reopened conversation shows the same line (`ducklm.runtime.transcript`).

Times are the person's: the first token counts from the run's start (routing, recall and
tool steps included), the rate from the first token to the last. Tokens are the server's
count (`usage.completion_tokens`) when it sent one, else the streamed pieces, which
llama-server sends one token at a time. The model is the one the answering call named
in `model_usage` (`""` for a tool's result shown as the answer); without one, the
runner names the model of the role whose node set the answer.
"""

from __future__ import annotations

import time
from typing import Any

from ducklm.kit.events import Event


class AnswerClock:
    """Watches one run's events for the facts of its answer."""

    def __init__(self) -> None:
        self._started = time.monotonic()
        self._first: float | None = None
        self._last = 0.0
        self._pieces = 0
        self._usage: Event | None = None
        self._cut: str | None = None
        self._prompt_cut = False

    def see(self, type_: str, data: dict[str, Any]) -> None:
        """Take one event of the run as it passes."""
        if type_ == "token":
            now = time.monotonic()
            if self._first is None:
                self._first, self._usage = now, None  # a usage before the answer was a step's
            self._last = now
            self._pieces += 1
        elif type_ == "model_usage":
            self._usage = data
        elif type_ == "answer_cut":
            self._cut = str(data.get("reason") or "length")
        elif type_ == "context_cut":
            self._prompt_cut = True

    def fields(self, answered_by: tuple[str, str] | None = None) -> dict[str, Any] | None:
        """The `answer_facts` fields, or `None` when no answer streamed in this run.

        Args:
            answered_by: The role and model of the node that set the answer, for a call
                that sent no `model_usage`.
        """
        if self._first is None:
            return None
        usage = self._usage
        if usage is None:
            role, model = answered_by or ("", "")
            usage = {"role": role, "model": model}
        counted = usage.get("output_tokens")
        by_server = isinstance(counted, int) and counted > 0
        tokens = counted if isinstance(counted, int) and by_server else self._pieces
        span = self._last - self._first
        return {
            "model": str(usage.get("model") or ""),
            "role": str(usage.get("role") or ""),
            "first_token_s": round(self._first - self._started, 3),
            "tokens": tokens,
            "tokens_counted_by": "server" if by_server else "pieces",
            "tokens_per_s": round(tokens / span, 1) if span > 0 and tokens > 1 else None,
            "cut": self._cut,
            "prompt_cut": self._prompt_cut,
        }
