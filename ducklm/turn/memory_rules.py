"""The deterministic rules behind the memory policy.

The memory_policy role proposes what to remember; these rules decide, so that a small
model cannot flood memory or store a secret: an importance threshold, no secrets ever,
a near-duplicate updates the record it repeats, and a new fact about the same subject as
an old one supersedes it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

MemoryAction = Literal["store", "update", "supersede", "skip"]

# Things that look like credentials. A false positive costs one unremembered fact; a
# false negative puts a secret in a database that is searched into every prompt.
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a password", re.compile(r"\b(pass(word|wd|phrase)?|pwd|pin)\b\s*(is|:|=)", re.I)),
    ("a token or key", re.compile(r"\b(api[_ -]?key|token|secret|bearer)\b\s*(is|:|=)?", re.I)),
    ("a private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("an access key", re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a provider token", re.compile(r"\b(sk|pk|ghp|gho|glpat|xox[abp])[-_][A-Za-z0-9_-]{16,}")),
    ("a JWT", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("a card number", re.compile(r"\b(?:\d[ -]?){13,19}\b")),
    # No "/" in the run: a long path is made of short segments, a token is not.
    ("a long random string", re.compile(r"(?=[A-Za-z0-9+_-]*\d)[A-Za-z0-9+_-]{32,}")),
)
# Verbs after which a fact's value starts: "my sister lives in Porto" has the subject
# "my sister" and the value "Porto".
SUBJECT_END = re.compile(
    r"\b(is|are|was|were|lives?|works?|uses?|prefers?|likes?|loves?|hates?|runs?|"
    r"has|have|wants?|needs?|goes|called|named)\b",
    re.I,
)


@dataclass(frozen=True)
class RuleConfig:
    """Thresholds of the memory rules."""

    min_importance: float = 0.5
    duplicate_cosine: float = 0.9
    """At or above: the same fact said again; the old record is updated."""
    same_subject_cosine: float = 0.55
    """At or above, with the same subject: a new value for it; the old record is superseded."""


@dataclass(frozen=True)
class Neighbour:
    """An existing memory close to the proposed one."""

    id: str
    text: str
    cosine: float


@dataclass(frozen=True)
class RuleDecision:
    """What to do with one proposed memory, and why (shown in the event)."""

    action: MemoryAction
    reason: str
    target_id: str | None = None


def find_secret(text: str) -> str | None:
    """What kind of secret `text` seems to hold, or `None`."""
    for kind, pattern in SECRET_PATTERNS:
        if pattern.search(text):
            return kind
    return None


def subject_of(text: str) -> str | None:
    """The normalized words before the fact's verb ("my sister" in "My sister lives in Porto")."""
    match = SUBJECT_END.search(text)
    if match is None or match.start() == 0:
        return None
    words = re.findall(r"[a-z0-9']+", text[: match.start()].lower())
    return " ".join(words) or None


def decide(
    text: str,
    importance: float,
    neighbours: Sequence[Neighbour],
    config: RuleConfig = RuleConfig(),
) -> RuleDecision:
    """Store, update, supersede or skip a proposed memory."""
    if not text.strip():
        return RuleDecision("skip", "the proposal has no text")
    secret = find_secret(text)
    if secret is not None:
        return RuleDecision("skip", f"refused: it looks like it contains {secret}")
    if importance < config.min_importance:
        return RuleDecision(
            "skip", f"importance {importance:.2f} is below {config.min_importance:.2f}"
        )
    best = max(neighbours, key=lambda n: n.cosine, default=None)
    if best is not None and best.cosine >= config.duplicate_cosine:
        return RuleDecision("update", f"repeats memory {best.id}", best.id)
    subject = subject_of(text)
    for other in sorted(neighbours, key=lambda n: -n.cosine):
        if (
            other.cosine >= config.same_subject_cosine
            and subject
            and subject_of(other.text) == subject
        ):
            return RuleDecision(
                "supersede", f"replaces what memory {other.id} said about {subject!r}", other.id
            )
    return RuleDecision("store", "a new fact")
