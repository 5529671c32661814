"""Counting tokens: a conservative estimate, or the model server's own tokenizer.

Context packing is pure and synchronous, so it takes a plain `TokenCounter`
(`count(text) -> int`). The server's tokenizer is reached over HTTP: a caller counts the
texts it is about to pack in one batch (`BatchTokenCounter.count_many`) and hands the
packer `prefetched(...)`, a lookup that falls back to the estimate for the texts the
packer makes itself (cut or joined ones).

The estimate errs high so that a request is never sent over the limit. It was measured
against the WordPiece tokenizer of the bundled embedding model (all-MiniLM-L6-v2: a 30k
vocabulary, every punctuation mark a token of its own) plus one token per whitespace
run (which byte-level BPE spends and WordPiece does not): over this repository's Python,
Markdown, YAML, prompt snapshots, JSON and shell output it came to 1.17-1.39x the real
count, and never under 1.10x on any single file; on hex, digits and non-ASCII text
1.18x or more. Chat models' BPE vocabularies (Llama 3, Qwen: 128k-151k entries)
compress better than a 30k WordPiece, so they stay under it too. The simpler
`max(chars / 3, words * 1.5)` fell to 0.77x on Python, 0.67x on JSON and 0.34x on CJK.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Protocol

import httpx

log = logging.getLogger(__name__)

TokenCounter = Callable[[str], int]
"""Tokens a text takes; pure and synchronous, so context packing can call it freely."""

# 3 stayed above the reference count on every measured sample; 4 fell below it on shell
# output (0.98x) and 5 on Python (0.95x).
LETTERS_PER_TOKEN = 3
_LETTER_RUN = re.compile(r"[A-Za-z]+")
# A single space is folded into the next word by BPE tokenizers; other whitespace runs
# (newlines, indentation) usually cost a token of their own.
_WHITESPACE_RUN = re.compile(r"[ \t\n\r\f\v]+")

# How many /tokenize requests may be in flight at once, and how many counts are kept.
_CONCURRENCY = 4
_CACHE_SIZE = 4096
PROBE_TEXT = "DuckLM counts tokens."


# Every model call of a turn packs the same system prompt, skills and history again (the
# context node, then each action step): the same texts, counted once.
@lru_cache(maxsize=1024)
def estimate_tokens(text: str) -> int:
    """A token count that errs high, for servers that cannot count.

    A run of ASCII letters costs one token per 3 letters (started), every other ASCII
    character one token, a whitespace run other than one space one token, and non-ASCII
    text one token per UTF-8 byte (the worst case of byte-level BPE).
    """
    letter_runs: list[str] = _LETTER_RUN.findall(text)
    space_runs: list[str] = _WHITESPACE_RUN.findall(text)
    ascii_chars = len(text.encode("ascii", "ignore"))
    non_ascii_bytes = len(text.encode("utf-8", "surrogatepass")) - ascii_chars
    letter_chars = sum(map(len, letter_runs))
    space_chars = sum(map(len, space_runs))
    return (
        sum(-(-len(run) // LETTERS_PER_TOKEN) for run in letter_runs)
        + sum(run != " " for run in space_runs)
        + (ascii_chars - letter_chars - space_chars)
        + non_ascii_bytes
    )


class BatchTokenCounter(Protocol):
    """Counts many texts in one call: what a context builder awaits before packing."""

    async def count_many(self, texts: Sequence[str]) -> list[int]:
        """The token count of each text, in order."""
        ...


class EstimateCounter:
    """`estimate_tokens` behind the batch interface, for servers without a tokenizer."""

    async def count_many(self, texts: Sequence[str]) -> list[int]:
        """The estimate of each text, in order."""
        return [estimate_tokens(text) for text in texts]


ESTIMATE = EstimateCounter()


class ServerTokenizer:
    """The model server's tokenizer: llama-server's `POST /tokenize` at its root.

    Counts are cached by the text's digest, because the same history is counted again
    at every step of a turn. When the server fails mid-run the estimate is used for
    that text: counting never fails a turn.
    """

    def __init__(self, client: httpx.AsyncClient, root_url: str, *, owns_client: bool) -> None:
        self._client = client
        self._url = f"{root_url}/tokenize"
        self._owns_client = owns_client
        self._limit = asyncio.Semaphore(_CONCURRENCY)
        self._cache: OrderedDict[bytes, int] = OrderedDict()

    async def count_many(self, texts: Sequence[str]) -> list[int]:
        """The server's token count of each text, in order (the estimate where it failed)."""
        keys = [_digest(text) for text in texts]
        known = {key: self._cache[key] for key in keys if key in self._cache}
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in known}
        counted = await asyncio.gather(*(self._count_one(text) for text in missing.values()))
        for key, count in zip(missing, counted, strict=True):
            known[key] = count
            self._remember(key, count)
        return [known[key] for key in keys]

    async def aclose(self) -> None:
        """Close the HTTP client, if this tokenizer opened it."""
        if self._owns_client:
            await self._client.aclose()

    async def _count_one(self, text: str) -> int:
        async with self._limit:
            try:
                return await self.tokenize(text)
            except (httpx.HTTPError, ValueError) as exc:
                log.warning("the server's tokenizer failed (%s); estimating instead", exc)
                return estimate_tokens(text)

    async def tokenize(self, text: str) -> int:
        """Ask the server once. Raises httpx.HTTPError or ValueError on a bad answer."""
        response = await self._client.post(self._url, json={"content": text})
        response.raise_for_status()
        tokens = response.json().get("tokens")
        if not isinstance(tokens, list):
            raise ValueError("no 'tokens' list in the answer")
        return len(tokens)

    def _remember(self, key: bytes, count: int) -> None:
        self._cache[key] = count
        self._cache.move_to_end(key)
        while len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)


async def server_tokenizer(
    base_url: str, *, client: httpx.AsyncClient | None = None, timeout_s: float = 2.0
) -> ServerTokenizer | None:
    """The server's tokenizer if it offers one, probed once; None otherwise.

    Args:
        base_url: The OpenAI base URL of the role (`http://host:8080/v1`); `/tokenize`
            is at the server's root, so a trailing `/v1` is dropped.
        client: An HTTP client to use (and not close); by default one is opened with
            `timeout_s` and closed by `ServerTokenizer.aclose`.
        timeout_s: Timeout of the probe and of later requests on the client opened here.
    """
    owns = client is None
    if client is None:
        # Building a client loads the CA bundle from disk: off the event loop.
        client = await asyncio.to_thread(httpx.AsyncClient, timeout=timeout_s)
    tokenizer = ServerTokenizer(client, root_url(base_url), owns_client=owns)
    try:
        await tokenizer.tokenize(PROBE_TEXT)
    except (httpx.HTTPError, ValueError) as exc:
        log.info("no tokenizer at %s (%s): token counts are estimated", base_url, exc)
        await tokenizer.aclose()
        return None
    return tokenizer


def root_url(base_url: str) -> str:
    """The server's root from an OpenAI base URL: `http://h:8080/v1/` -> `http://h:8080`."""
    url = base_url.rstrip("/")
    return url.removesuffix("/v1")


async def prefetched(counter: BatchTokenCounter, texts: Iterable[str]) -> TokenCounter:
    """A synchronous counter that knows `texts`, counted in one batch.

    Texts it was not given (the packer's cut or joined texts) are estimated, which errs
    high, so a packed context stays within budget either way.
    """
    unique = list(dict.fromkeys(texts))
    table = dict(zip(unique, await counter.count_many(unique), strict=True))

    def count(text: str) -> int:
        known = table.get(text)
        return estimate_tokens(text) if known is None else known

    return count


def fit_head(text: str, max_tokens: int, count: TokenCounter, marker: str) -> str:
    """`text` if it fits in `max_tokens`, else its beginning followed by `marker`.

    The cut falls at a line end when one is in the second half of what fits. Returns ""
    when not even the marker fits.
    """
    if count(text) <= max_tokens:
        return text
    keep = _longest(len(text), lambda n: count(text[:n] + marker) <= max_tokens)
    if keep is None:
        return ""
    line_end = text.rfind("\n", 0, keep)
    if line_end >= keep // 2 and count(text[: line_end + 1] + marker) <= max_tokens:
        keep = line_end + 1
    return text[:keep] + marker


def fit_head_tail(text: str, max_tokens: int, count: TokenCounter, marker: str) -> str:
    """`text` if it fits in `max_tokens`, else its beginning and end around `marker`.

    Both ends are kept because a command's output ends with its verdict (the error, the
    summary line) and begins with what it was doing. Returns "" when not even the
    marker fits.
    """
    if count(text) <= max_tokens:
        return text

    def cut(n: int) -> str:
        return text[: n - n // 2] + marker + text[len(text) - n // 2 :]

    keep = _longest(len(text), lambda n: count(cut(n)) <= max_tokens)
    return "" if keep is None else cut(keep)


def _longest(size: int, fits: Callable[[int], bool]) -> int | None:
    """The largest n in [0, size) for which `fits(n)`, assuming it only turns false once."""
    if not fits(0):
        return None
    low, high = 0, size - 1
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
