"""A question about something the person told DuckLM, answered with what they told it.

"What bike do I have?" in a new conversation, with "My bike is a blue Gazelle." recalled
from memory: the bundled model answered "I'm sorry, I am not able to provide a bike." The
recalled memory holds the answer in the person's own words, so when every word the
question asks about is in one kept fact (the words that carry meaning, compared by their
stems: "live" finds "lives"), that fact is the answer, said as what it is: something
the person said, not something DuckLM checked. A question whose words no memory holds
goes to the model as before.

Everything here is pure: no I/O, no model, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

TOLD = "You told me: {said}"
QUESTION_START = re.compile(
    r"^(?:what|which|who|whom|whose|where|when|how|do|does|did|is|are|am)\b", re.I
)
PERSON = re.compile(r"\b(?:my|mine|i|me|i'm|our|ours|we|us)\b", re.I)
STOP = (
    "what which who whom whose where when why how is are was were am do does did have has had "
    "the a an my mine i i'm me you your of to in on at for and or it this that there be can "
    "could would should will shall tell remind again please still now called name like"
)
"""Words that say nothing of what is asked about ("called" and "name" ask for a name)."""
STOP_WORDS = frozenset(STOP.split())
STEM = 4


def told_answer(task: str, recalled: Sequence[Mapping[str, Any]]) -> str | None:
    """The memory that answers `task` in the person's words, as an answer; `None` for none."""
    text = " ".join(task.split())
    if not text or not (text.endswith("?") or QUESTION_START.match(text)):
        return None
    asked = _content(text)
    # One word alone ("where is Oslo?") may ask about the world; with "my", "I" or "we" it
    # asks about the person, and two or more words must all be in one memory.
    if not asked or (len(asked) < 2 and not PERSON.search(text)):
        return None
    # Only what was kept as a fact: a passing line of an earlier conversation ("I want to
    # install python on my machine") holds a later question's words without answering it.
    facts = [m for m in recalled if m.get("kind") != "episode"]
    for item in facts:
        memory = str(item.get("text") or "").strip()
        if memory.endswith("?"):  # the same question asked before tells nothing
            continue
        if memory and all(_found(word, _content(memory)) for word in asked):
            return TOLD.format(said=memory)
    return None


def _content(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9][a-z0-9':]*", text.lower())
    return {w.removesuffix("'s") for w in words if w not in STOP_WORDS and len(w) > 2}


def _found(word: str, among: set[str]) -> bool:
    stem = word[:STEM] if len(word) > STEM else word
    return any(
        other == word or (len(other) >= len(stem) and other.startswith(stem)) for other in among
    )
