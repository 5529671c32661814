"""The in-process sentence encoder: a sentence-transformers model, traced with TorchScript.

Everything here runs on the embedder's own thread (`ducklm.memory.embeddings`), never
on the event loop. torch is imported only when the first model loads: it takes seconds.

Why traced: the server's event loop holds the GIL while it works, and an eager forward
pass takes the GIL back at each of its hundred module calls. Measured on this 2-core
machine, a query that encodes in 8 ms alone took 44-238 ms beside a busy Python thread;
traced, the forward pass is one call (5.8 ms alone, 20-38 ms beside the same thread),
and its vectors are the eager ones (cosine 1.0, at every length and in padded batches).
A model that cannot be traced, or whose traced vectors differ, runs eagerly.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ducklm.memory.mean_pooled import load_plain

log = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]
BATCH = 64
# Texts of different lengths, to check a traced model against the eager one at load.
PROBES = ("ducks", "a longer sentence about the ducks and the heron that live on the pond")


class LocalEncoder:
    """A loaded model: `encode` turns texts into rows (not yet unit length)."""

    def __init__(
        self,
        tokenize: Callable[[list[str]], Any],
        forward: Callable[[Any], Any],
        *,
        traced: bool,
        bf16: bool,
    ) -> None:
        self._tokenize = tokenize
        # A fast tokenizer sets its padding and truncation on every call and refuses a
        # second caller meanwhile ("Already borrowed"); queries and background work
        # encode on two threads (`model_thread`), so they take turns here only.
        self._tokenizing = threading.Lock()
        self._forward = forward
        self.traced = traced
        self.bf16 = bf16

    def encode(self, texts: list[str]) -> Vectors:
        """One row per text, in order; batches of similar lengths (less padding)."""
        import torch  # noqa: PLC0415  loaded with the model

        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        rows: list[Any] = [None] * len(texts)
        with torch.inference_mode():
            for start in range(0, len(order), BATCH):
                chunk = order[start : start + BATCH]
                with self._tokenizing:
                    features = self._tokenize([texts[i] for i in chunk])
                out = self._forward(features)
                for i, row in zip(chunk, out.float().numpy(), strict=True):
                    rows[i] = row
        return np.asarray(rows, dtype=np.float32)


def load_encoder(folder: Path) -> LocalEncoder:
    """Load the sentence-transformers model in `folder`, traced when that is exact.

    A folder of the plain shape (a BERT, mean pooling, normalising) loads with torch and
    tokenizers only (`mean_pooled.py`): sentence-transformers and transformers would stay
    in memory for nothing.
    """
    _sleeping_openmp_threads()
    import torch  # noqa: PLC0415

    plain = load_plain(folder)
    if plain is None:
        from sentence_transformers import SentenceTransformer  # noqa: PLC0415
        from transformers.utils import logging as hf_logging  # noqa: PLC0415

        # A "Loading weights" progress bar would land in the chat. (Untyped there.)
        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    else:
        tokenize, model = plain
    # Where the CPU has native bf16 (AVX512-BF16, AMX), bf16 weights encode batches 1.7x
    # and single queries 1.3x faster than float32; vectors stay within cosine 0.998 of
    # float32 ones and the benchmark's recall does not move. (Autocast instead stays at
    # 0.9999 but re-casts every weight on each call: slower than float32 for one query.)
    bf16 = bool(getattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)())
    if bf16:
        model = model.to(torch.bfloat16)
    model.eval()  # dropout off: `encode` is bypassed, and it would have done this
    if plain is None:
        # (`preprocess` since sentence-transformers 5; `tokenize` before.)
        tokenize = getattr(model, "preprocess", None) or model.tokenize

    def eager(features: dict[str, Any]) -> Any:
        return model(features)["sentence_embedding"]

    traced = _trace(model, tokenize, eager)
    return LocalEncoder(tokenize, traced or eager, traced=traced is not None, bf16=bf16)


def _sleeping_openmp_threads() -> None:
    """Have torch's OpenMP threads sleep between parallel regions, unless told otherwise.

    libgomp's threads spin by default, which on an idle machine saves a wake-up, but
    beside anything else busy (llama.cpp answering, a build, the tests) a spinning thread
    holds a core its teammate needs at the next barrier, and every region of the forward
    pass waits a time slice: `scripts/bench/omp_wait.py` measured a query encode at 460 ms
    spinning against 61 ms passive on a loaded 2-core machine (1,929 against 42 ms beside
    two busy processes), and 64-text batches 1.7-1.8x faster. libgomp reads the variable
    when torch loads, so this must run before the first `import torch`; a value the
    person set stays.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _trace(
    model: Any, tokenize: Callable[[list[str]], Any], eager: Callable[[Any], Any]
) -> Callable[[Any], Any] | None:
    import torch  # noqa: PLC0415

    sample = tokenize([PROBES[1]])
    # The model's tensor inputs (input_ids, attention_mask, ...); other entries of the
    # features (names of text columns) are bookkeeping a trace cannot take.
    names = sorted(k for k, v in sample.items() if isinstance(v, torch.Tensor))

    class Positional(torch.nn.Module):
        # TorchScript traces positional tensors; the model takes a dict of them.
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *tensors: Any) -> Any:
            return self.model(dict(zip(names, tensors, strict=True)))["sentence_embedding"]

    try:
        with warnings.catch_warnings(), _quiet_libraries(), torch.inference_mode():
            warnings.simplefilter("ignore")  # TracerWarnings about Python-side values
            example = tuple(sample[n] for n in names)
            module = torch.jit.freeze(
                torch.jit.trace(Positional().eval(), example)  # type: ignore[no-untyped-call]
            )

        def traced(features: dict[str, Any]) -> Any:
            return module(*(features[n] for n in names))

        with torch.inference_mode():
            probes = tokenize(list(PROBES))
            same = torch.nn.functional.cosine_similarity(
                traced(probes).float(), eager(probes).float()
            )
        if bool((same < 0.9999).any()):
            log.info("traced embedding model differs from the eager one; running eagerly")
            return None
    except Exception:
        log.info("embedding model could not be traced; running eagerly", exc_info=True)
        return None
    return traced


@contextmanager
def _quiet_libraries() -> Iterator[None]:
    # Tracing reads every attribute of the modules, deprecated properties included, and
    # their warnings (transformers prints its own to stderr) would land in the chat.
    loggers = [logging.getLogger(name) for name in ("sentence_transformers", "transformers")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
