"""The memory benchmark's data set: facts, questions, lookups and filler memories.

`data/memory_facts.json` was written for the benchmark (see memory_recall.py). Filler
memories are generated from its templates; 60% of them are visible to the benchmark's
workspace and conversation, the rest belong to others and must never be returned.
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass
from pathlib import Path

from ducklm.memory import NewMemory

DATA = Path(__file__).parent / "data" / "memory_facts.json"
WORKSPACE = "/home/sam/freightly"
CONVERSATION = "bench-conversation"


@dataclass(frozen=True)
class Question:
    text: str
    fact: str


@dataclass(frozen=True)
class Filler:
    """Templates and what fills them (the `filler` part of the data file)."""

    templates: list[str]
    words: dict[str, list[str]]
    numbers: dict[str, list[int]]

    def make(self, count: int, seed: int) -> list[NewMemory]:
        """`count` distinct memories; 40% belong to other workspaces or conversations."""
        rng = random.Random(seed)
        texts: dict[str, None] = {}
        while len(texts) < count:
            texts[self._one(rng.choice(self.templates), rng)] = None
        return [_scoped(text, i) for i, text in enumerate(texts)]

    def _one(self, template: str, rng: random.Random) -> str:
        fields = {}
        for _, field, _, _ in string.Formatter().parse(template):
            if field in self.numbers:
                fields[field] = str(rng.randint(*self.numbers[field]))
            elif field:
                fields[field] = rng.choice(self.words[field.rstrip("2")])
        return template.format(**fields)


def _scoped(text: str, i: int) -> NewMemory:
    # Of every ten: 4 global, 1 this workspace, 2 another, 1 this conversation, 2 another.
    slot = i % 10
    if slot < 4:
        return NewMemory(text, scope="global")
    if slot < 7:
        workspace = WORKSPACE if slot == 4 else f"/home/other/{slot}"
        return NewMemory(text, scope="workspace", workspace=workspace)
    conversation = CONVERSATION if slot == 7 else f"other-{i % 97}"
    return NewMemory(text, scope="conversation", conversation_id=conversation)


def visible(item: NewMemory) -> bool:
    """Whether the benchmark's view (WORKSPACE, CONVERSATION) sees a filler memory."""
    return (
        item.scope == "global"
        or item.conversation_id == CONVERSATION
        or (item.scope == "workspace" and item.workspace == WORKSPACE)
    )


@dataclass(frozen=True)
class Data:
    facts: list[NewMemory]
    ids: list[str]
    questions: list[Question]
    lookups: list[Question]
    filler: Filler


def load_data() -> Data:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    facts = [
        NewMemory(f["text"], workspace=WORKSPACE, conversation_id=CONVERSATION)
        for f in data["facts"]
    ]
    spec = data["filler"]
    return Data(
        facts,
        [f["id"] for f in data["facts"]],
        [Question(q["question"], q["fact"]) for q in data["questions"]],
        [Question(q["query"], q["fact"]) for q in data["lookups"]],
        Filler(spec["templates"], spec["words"], spec["numbers"]),
    )
