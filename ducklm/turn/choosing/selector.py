"""The tool by meaning: a small classifier over the exemplars' sentence vectors.

The rule shortcuts read a request exactly, but only in the phrasings they were written
for; the bundled model, asked to choose among six tools, picked a useful call for 4 of
14 new phrasings. All-MiniLM-L6-v2 (already loaded for recall) places "Tell me what's
written in the notes" near "What does my notes file say?". A softmax regression over the
exemplars' vectors (one class per tool, and "none") generalised best on the held-out
half of the paraphrase set: 38 of 41 right where nearest-centroid got 35 and the single
nearest exemplar 30 (docs/decisions.md, "Tool choice by meaning"). Its answer is used
only when its probability, among the tools the turn offers, reaches `MIN_PROBABILITY`;
otherwise the model decides as before.

Training is a few hundred steps of gradient descent on some fifty rows: some 70 ms,
once per embedder, on a worker thread (`ToolSelector`). `fit` and `choose` are pure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ducklm.turn.choosing.exemplars import EXEMPLARS, NONE, Exemplar

C = 10.0
"""Inverse weight decay, as scikit-learn's `C`: measured best of 1, 10 and 100 held out."""
STEPS = 1500
RATE = 1.0
MOMENTUM = 0.9
MIN_PROBABILITY = 0.25
EXAMPLES = 3
"""The chosen tool's nearest exemplars kept as examples for filling its arguments."""
SELECTED_REASON = "By meaning, the request is one for {tool} ({probability:.0%})."
NO_TOOL_REASON = "By meaning, the request needs no tool ({probability:.0%})."

Matrix = npt.NDArray[np.float32]
Embed = Callable[[Sequence[str]], Awaitable[Matrix]]


@dataclass(frozen=True)
class Selection:
    """The tool the classifier chose, and how sure it was."""

    tool: str
    """A tool's name, or `NONE`."""
    probability: float
    examples: tuple[str, ...] = ()
    """The requests of the tool's nearest exemplars, nearest first (for its arguments)."""

    def reason(self) -> str:
        """One sentence for `route_decided`."""
        template = NO_TOOL_REASON if self.tool == NONE else SELECTED_REASON
        return template.format(tool=self.tool, probability=self.probability)


@dataclass(frozen=True)
class Classifier:
    """A softmax regression: `weights` (features + 1 bias) x classes."""

    classes: tuple[str, ...]
    weights: npt.NDArray[np.float64]

    def probabilities(self, row: Matrix) -> npt.NDArray[np.float64]:
        """The probability of each class for one vector."""
        logits = np.append(row.astype(np.float64), 1.0) @ self.weights
        exp = np.exp(logits - logits.max())
        return np.asarray(exp / exp.sum())


def fit(rows: Matrix, labels: Sequence[str]) -> Classifier:
    """Train the classifier on `rows` (one vector per exemplar) and their tools."""
    classes = tuple(sorted(set(labels)))
    x = np.hstack([rows.astype(np.float64), np.ones((len(rows), 1))])
    y = np.zeros((len(rows), len(classes)))
    y[np.arange(len(rows)), [classes.index(label) for label in labels]] = 1.0
    decay = np.ones((x.shape[1], 1)) / (C * len(rows))
    decay[-1] = 0.0  # the bias is not decayed
    w = np.zeros((x.shape[1], len(classes)))
    velocity = np.zeros_like(w)
    for _ in range(STEPS):  # Nesterov's momentum on the mean cross-entropy
        ahead = w + MOMENTUM * velocity
        logits = x @ ahead
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        velocity = MOMENTUM * velocity - RATE * (x.T @ (p - y) / len(rows) + decay * ahead)
        w += velocity
    return Classifier(classes, w)


def choose(
    classifier: Classifier,
    row: Matrix,
    rows: Matrix,
    exemplars: Sequence[Exemplar],
    offered: frozenset[str],
) -> Selection | None:
    """The class of `row` among `offered` tools and none, if sure enough; `None` if not."""
    p = classifier.probabilities(row)
    allowed = [i for i, c in enumerate(classifier.classes) if c == NONE or c in offered]
    if not allowed:
        return None
    total = float(sum(p[i] for i in allowed))
    best = max(allowed, key=lambda i: p[i])
    probability = float(p[best]) / total if total else 0.0
    if probability < MIN_PROBABILITY:
        return None
    tool = classifier.classes[best]
    similarity = rows @ row
    nearest = sorted(
        (i for i, e in enumerate(exemplars) if e.tool == tool), key=lambda i: -similarity[i]
    )
    return Selection(tool, probability, tuple(exemplars[i].request for i in nearest[:EXAMPLES]))


class ToolSelector:
    """The exemplars, their vectors and the classifier, made once per embedder."""

    def __init__(self, exemplars: Sequence[Exemplar] = EXEMPLARS) -> None:
        self.exemplars = tuple(exemplars)
        self._by_request = {e.request: e for e in self.exemplars}
        self._trained: tuple[Embed, Matrix, Classifier] | None = None

    def exemplar(self, request: str) -> Exemplar | None:
        """The exemplar of `request` (a `Selection.examples` entry)."""
        return self._by_request.get(request)

    async def select(self, task: str, offered: frozenset[str], embed: Embed) -> Selection | None:
        """The tool for `task` among `offered` (or none), or `None` when unsure."""
        if not task.strip() or len({e.tool for e in self.exemplars}) < 2:
            return None
        rows, classifier = await self._train(embed)
        row = np.asarray(await embed([task]), dtype=np.float32).reshape(-1)
        return choose(classifier, row, rows, self.exemplars, offered)

    async def _train(self, embed: Embed) -> tuple[Matrix, Classifier]:
        if self._trained is None or self._trained[0] != embed:
            rows = np.asarray(await embed([e.request for e in self.exemplars]), dtype=np.float32)
            labels = [e.tool for e in self.exemplars]
            # About 70 ms of arithmetic: off the loop.
            self._trained = (embed, rows, await asyncio.to_thread(fit, rows, labels))
        return self._trained[1], self._trained[2]
