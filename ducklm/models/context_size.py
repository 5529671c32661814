"""The context window each model server serves, learned once per server.

A request longer than the server's window is not refused by every server: Ollama and
older llama-server builds cut it to fit (usually from the front, where the system prompt
and the tool definitions are) and answer as if nothing happened. So the input budget is
taken from what the server says it serves, not only from what the operator configured:

1. llama-server's `GET /props` (`default_generation_settings.n_ctx`, the window of one
   slot; newer builds also a top-level `n_ctx`), asked once per server, briefly;
2. else the role's `context_tokens` in the models file;
3. else `DUCK_CTX_SIZE` (what DuckLM launches its own server with: llama-cpp-python's
   server says nothing about its window).

After a model call that the server cut (`ducklm.models.prompt_usage`), the window is
lowered to what the server kept (`ContextSizes.learn`), so later requests fit it, but
never below what the turn needs (its system prompt, request, tools and answer): a window
learned from a count that was not what it seemed would otherwise leave no room at all.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from ducklm.models.roles import RoleConfig
from ducklm.models.server_props import ServerProps
from ducklm.models.tokens import root_url

log = logging.getLogger(__name__)

MIN_INPUT_TOKENS = 256
"""No budget goes below this (the smallest `DUCK_MAX_INPUT_TOKENS`), whatever the window."""
# Room left in the window besides the input and the answer: chat-template text the packer
# does not see (a template's own tool-calling preamble, BOS) and tokenizer drift.
MARGIN_FRACTION = 1 / 32
MIN_MARGIN_TOKENS = 32
CONSISTENT = 1 / 8
"""Two low usage counts of one server this close to each other, for requests further
apart than this, are one window's cut."""

Source = Literal["props", "models.yaml", "DUCK_CTX_SIZE", "cut"]
"""Where a window's size came from: the server's `/props`, the role's `context_tokens`,
the setting, or a cut the server made (`ContextSizes.learn`)."""


@dataclass(frozen=True)
class ServedContext:
    """A server's context window, and where DuckLM learned it."""

    tokens: int
    source: Source

    @property
    def from_server(self) -> bool:
        """The server itself said so (its `/props`, or the size of what it kept)."""
        return self.source in ("props", "cut")


SOURCE_WORDS: dict[Source, str] = {
    "props": "as its /props says",
    "models.yaml": "as context_tokens in the models file says",
    "DUCK_CTX_SIZE": "as DUCK_CTX_SIZE says (the server does not tell its size)",
    "cut": "as DuckLM learned from a prompt the server cut",
}
RAISE_WINDOW = (
    "Give the server a bigger context window (llama-server: --ctx-size; Ollama: "
    "OLLAMA_CONTEXT_LENGTH or the model's num_ctx; LM Studio: the model's context length; "
    "vLLM: --max-model-len), and if DuckLM does not learn it from the server, set "
    "context_tokens for the role in the models file or DUCK_CTX_SIZE to match."
)


class WindowTooSmall(Exception):
    """The server's window has no room for what a request cannot do without.

    Args:
        role: The role whose request did not fit.
        served: The window DuckLM packed for.
        needed: The smallest window the request would fit (`window_for`).
    """

    def __init__(self, role: str, served: ServedContext, needed: int) -> None:
        super().__init__(f"{role}: a window of {served.tokens} tokens, {needed} needed")
        self.role, self.served, self.needed = role, served, needed

    @property
    def message(self) -> str:
        """What people read: the server's window, what the request needs, how to raise it."""
        return (
            f"The model server's context window is too small for this request: "
            f"{self.served.tokens} tokens, {SOURCE_WORDS[self.served.source]}, and DuckLM's "
            f"instructions with your request need about {self.needed}. {RAISE_WINDOW}"
        )


def input_budget(configured: int, window: int, max_output_tokens: int) -> int:
    """The input tokens one request may take: `configured`, within the served `window`.

    The window holds the prompt and the answer (llama.cpp counts both in one KV cache),
    and a margin for what the packer cannot count.
    """
    margin = max(MIN_MARGIN_TOKENS, int(window * MARGIN_FRACTION))
    return max(MIN_INPUT_TOKENS, min(configured, window - max_output_tokens - margin))


def window_for(input_tokens: int, max_output_tokens: int) -> int:
    """The smallest window whose `input_budget` holds `input_tokens` (the inverse)."""
    tokens = input_tokens + max_output_tokens
    return max(tokens + MIN_MARGIN_TOKENS, -(-tokens * 32 // 31))


def props_window(props: Any) -> int | None:
    """The window llama-server's `/props` answer gives; None when it gives none.

    The slot's `n_ctx` is what one request gets (the server's window divided among its
    parallel slots); the smaller of the two when both are there.
    """
    if not isinstance(props, dict):
        return None
    slot = props.get("default_generation_settings")
    sizes = [props.get("n_ctx"), slot.get("n_ctx") if isinstance(slot, dict) else None]
    found = [n for n in sizes if isinstance(n, int) and not isinstance(n, bool) and n > 0]
    return min(found) if found else None


async def probe_window(base_url: str, props: ServerProps | None = None) -> int | None:
    """Ask the server at `base_url` (an OpenAI base URL) for its window; None if it cannot say.

    Args:
        base_url: The server's OpenAI base URL.
        props: Its `/props` answer, asked once for every reader (`ServerProps`).

    Raises:
        httpx.TransportError: Nothing answered (not there yet, or restarting): ask again later.
    """
    window = props_window(await (props or ServerProps()).of(base_url))
    if window is None:
        log.info("no context size from %s/props", root_url(base_url))
    return window


class ContextSizes:
    """Each server's window, probed at the first request to it and kept.

    Keyed by the server's root URL: roles on one server share one probe.
    """

    def __init__(self, props: ServerProps | None = None) -> None:
        self._props = props or ServerProps()  # shared with `ServerCapabilities`: one request
        self._known: dict[str, ServedContext] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._low: dict[str, list[tuple[int, int]]] = {}  # low counts, and what was sent

    async def window(self, config: RoleConfig, default_tokens: int) -> ServedContext:
        """The window `config`'s server serves (see the module's order of sources).

        Args:
            config: The role; its `base_url` is probed, its `context_tokens` is a fallback.
            default_tokens: `DUCK_CTX_SIZE`, the last fallback.
        """
        served = await self._served(config.base_url)
        if served is not None:
            return served
        # A fallback is per role: roles on one server may set different sizes.
        if config.context_tokens is not None:
            return ServedContext(config.context_tokens, "models.yaml")
        return ServedContext(default_tokens, "DUCK_CTX_SIZE")

    async def budget(self, config: RoleConfig, configured: int, default_tokens: int) -> int:
        """`input_budget` for `config`'s role on its server."""
        served = await self.window(config, default_tokens)
        return input_budget(configured, served.tokens, config.max_output_tokens)

    def learn(self, config: RoleConfig, kept_tokens: int, *, needed: int = 0) -> None:
        """The server cut a request to `kept_tokens`: its window is no bigger than that.

        Only ever lowers a known window, so a cut seen late never widens it again, and
        never below `needed`, the window the turn cannot do without (`window_for` its
        system prompt, request and tools): a server whose window really is smaller
        gets the request anyway, and says so, rather than DuckLM packing for nothing.
        """
        key = root_url(config.base_url)
        known = self._known.get(key)
        tokens = max(kept_tokens, needed)
        if known is None or not known.tokens or tokens < known.tokens:
            self._known[key] = ServedContext(tokens, "cut")

    def low_count(self, config: RoleConfig, seen_tokens: int, sent_tokens: int) -> bool:
        """Note a usage count lower than the prompt; whether the server said it before.

        A window cuts every long prompt to about its size, however long it was; a count
        of what a prompt cache missed moves with what was new. So a low count is a cut
        once an earlier one came to about the same (`CONSISTENT`) for a request of
        another size.
        """
        seen = self._low.setdefault(root_url(config.base_url), [])
        again = any(
            abs(seen_tokens - tokens) <= tokens * CONSISTENT
            and abs(sent_tokens - sent) > sent * CONSISTENT
            for tokens, sent in seen
        )
        seen[:] = [*seen[-7:], (seen_tokens, sent_tokens)]
        return again

    async def _served(self, base_url: str) -> ServedContext | None:
        """What the server said of its window (probed once); None when it says nothing."""
        key = root_url(base_url)
        if key not in self._known:
            async with self._locks.setdefault(key, asyncio.Lock()):
                if key not in self._known:
                    try:
                        tokens = await probe_window(base_url, self._props)
                    except httpx.TransportError:
                        return None  # the model call will say what is wrong; ask next time
                    self._known[key] = ServedContext(tokens or 0, "props")
        served = self._known[key]
        return served if served.tokens else None
