"""A role's sampling fields beyond temperature: what keeps a small model from looping.

Every field is optional and only the ones a models file sets go out, in the request body
as they are named here (`extra_body`). Servers read different ones:

- llama.cpp's `llama-server` reads all of them and ignores fields it does not know.
- llama-cpp-python's server (0.3) reads `repeat_penalty`, `frequency_penalty` and
  `presence_penalty`; its request model drops every other field without an error. Its
  penalties look back `--last_n_tokens_size` tokens (64 unless the server is started with
  more), and `repeat_penalty` is 1.1 there unless a request says otherwise.
- OpenAI's own API refuses `repeat_penalty`, `repeat_last_n` and the `dry_*` fields: a
  role pointed at it sets only `frequency_penalty` and `presence_penalty`, or nothing.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Sampling(BaseModel):
    """Repetition penalties of one role; `None` leaves the server's own default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    repeat_penalty: float | None = Field(default=None, ge=0.0)
    """Divides the odds of every token seen in the last `repeat_last_n` (both servers)."""
    repeat_last_n: int | None = Field(default=None, ge=-1)
    """How far back `repeat_penalty` looks, in tokens; -1 the whole context (llama-server)."""
    frequency_penalty: float | None = Field(default=None, ge=-2.0, le=2.0)
    """Lowers a token by how often it came already (OpenAI's field; both servers)."""
    presence_penalty: float | None = Field(default=None, ge=-2.0, le=2.0)
    """Lowers a token that came at all (OpenAI's field; both servers)."""
    dry_multiplier: float | None = Field(default=None, ge=0.0)
    """DRY: penalise a token that extends a sequence already written; 0 off (llama-server)."""
    dry_base: float | None = Field(default=None, ge=1.0)
    """DRY: how fast the penalty grows with the length of the repeat (llama-server)."""
    dry_allowed_length: int | None = Field(default=None, ge=1)
    """DRY: repeats up to this many tokens are free (llama-server)."""
    dry_penalty_last_n: int | None = Field(default=None, ge=-1)
    """DRY: how far back it looks, in tokens; -1 the whole context (llama-server)."""

    def body(self) -> dict[str, Any]:
        """The fields set, as request-body JSON."""
        return self.model_dump(exclude_none=True)
