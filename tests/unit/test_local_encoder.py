"""The in-process encoder: traced, and giving the vectors sentence-transformers gives."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from ducklm.memory.embeddings import _model_folder, unit_rows
from ducklm.memory.local_encoder import LocalEncoder, load_encoder

ROOT = Path(__file__).resolve().parents[2]
TEXTS = [
    "hi",
    "My cat Miso is afraid of the vacuum cleaner",
    "a much longer sentence about the ducks, the heron and the old mill by the river bend",
]


@pytest.fixture(scope="module")
def encoder() -> LocalEncoder:
    # Module scope, off any event loop: the model loads once, in seconds.
    return load_encoder(_model_folder("all-MiniLM-L6-v2"))


async def test_the_packaged_model_is_traced(encoder: LocalEncoder) -> None:
    assert encoder.traced


async def test_vectors_match_sentence_transformers(encoder: LocalEncoder) -> None:
    def both() -> tuple[np.ndarray, np.ndarray]:
        # Imported here, off the loop: the encoder no longer loads it (`mean_pooled.py`).
        from sentence_transformers import SentenceTransformer

        reference = SentenceTransformer(
            str(_model_folder("all-MiniLM-L6-v2")), device="cpu", local_files_only=True
        )
        if encoder.bf16:
            import torch

            reference = reference.to(torch.bfloat16)
        expected = reference.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=False)
        rows = np.stack([row.float().numpy() for row in expected])
        return unit_rows(encoder.encode(TEXTS)), unit_rows(rows)

    got, expected = await asyncio.to_thread(both)
    assert got.shape == (3, 384)
    # One at a time and all together (padded to the longest) give the same rows.
    one_by_one = await asyncio.to_thread(lambda: [encoder.encode([t])[0] for t in TEXTS])
    assert np.allclose(unit_rows(np.stack(one_by_one)), got, atol=1e-2)
    assert (got * expected).sum(axis=1).min() > 0.999


PROBE = """
import os, sys
from ducklm.memory.embeddings import _model_folder
from ducklm.memory.local_encoder import load_encoder
load_encoder(_model_folder("all-MiniLM-L6-v2"))
import torch  # loaded by now: libgomp read its policy when it was
print(os.environ.get("OMP_WAIT_POLICY"), torch.get_num_threads() >= 1)
# The packaged model's plain shape loads without sentence-transformers (`mean_pooled.py`).
print("sentence_transformers" not in sys.modules)
"""


@pytest.mark.parametrize(("given", "expected"), [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
async def test_openmp_threads_sleep_unless_the_person_says(
    given: str | None, expected: str
) -> None:
    # A fresh process: libgomp reads the policy once, when torch first loads.
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["HF_HUB_OFFLINE"] = "1"
    if given:
        env["OMP_WAIT_POLICY"] = given
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", PROBE, env=env, cwd=str(ROOT), stdout=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    assert proc.returncode == 0
    assert out.decode().split() == [expected, "True", "True"]
