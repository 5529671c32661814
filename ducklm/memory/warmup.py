"""Loading the embedding model in the background, and saying how far it has got.

The in-process model takes seconds to load (torch, sentence-transformers, the weights:
38 s on a busy machine), and a turn that embeds its request waits for it. `ducklm
serve` starts the load when it starts (`Warmup.start`); until it is done a turn goes on
without what needs the model (recall, skills and MCP tools chosen by meaning) and says
so, rather than sit on "Working..." with nothing on screen.

A warm-up nobody started (the CLI in-process, the library) is `cold`: the first embed
loads the model on demand, as before, since that process has nothing else to do.
"""

from __future__ import annotations

import asyncio
import logging

from ducklm.memory.embeddings import Embedder, EmbeddingError

log = logging.getLogger(__name__)

WARMUP_TEXT = "warm up"
STILL_LOADING = "the embedding model is still loading"
"""Why a turn went on without recall (`recall_skipped`), for people."""


class Warmup:
    """The embedding model's state: `cold`, `loading`, `ready` or `failed: <why>`."""

    def __init__(self) -> None:
        self.state = "cold"
        """`cold` (nobody started it: it loads on first use), `loading`, `ready`, or
        `failed: <a sentence for people>`."""
        self._task: asyncio.Task[None] | None = None

    @property
    def loading(self) -> bool:
        """Whether a turn would wait for the model now."""
        return self.state == "loading"

    def start(self, embedder: Embedder) -> None:
        """Load the model behind `embedder` in the background; returns at once (once only)."""
        if self._task is not None:
            return
        self.state = "loading"
        self._task = asyncio.create_task(self._load(embedder), name="ducklm-embeddings-warmup")

    async def aclose(self) -> None:
        """Stop waiting for the load (the model thread finishes it on its own)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _load(self, embedder: Embedder) -> None:
        try:
            await embedder.embed([WARMUP_TEXT])
        except EmbeddingError as exc:  # its message is for people
            self.state = f"failed: {exc}"
        except Exception as exc:
            log.warning("the embedding model did not load", exc_info=True)
            self.state = f"failed: {type(exc).__name__}"
        else:
            self.state = "ready"
