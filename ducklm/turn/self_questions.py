"""Questions about DuckLM itself, by rule: what it can do, which model, where, what it keeps.

"Hi! What can you do?" got "I can assist with any project ... from designing a new
product" from the bundled model: nothing about files, commands or memory. What DuckLM is
and has (its tools, the configured model, the workspace, the memory's records) is known
without a model, so such a question is answered from those facts
(`ducklm.turn.answers.about_me`).

The rule reads the question's words, not a list of questions: a question is about
DuckLM when it addresses DuckLM ("you", "your") or names one of its own parts (its
model, its workspace, its memory), and every other word it holds is a word for what an
assistant is, has or does (do, help, tools, model, work, remember, name ...) or a
function word. One word for anything else ("files", "sister", "poem", "notes.md")
makes it a question about that thing, which the turn handles as any other. Each word
for DuckLM's parts names a topic; the answer covers the topics asked.

Everything here is pure: no I/O, no model, no clock.
"""

from __future__ import annotations

import re
from typing import Literal

Topic = Literal["identity", "model", "workspace", "abilities", "memory"]
TOPICS: tuple[Topic, ...] = ("identity", "model", "workspace", "abilities", "memory")
"""The order an answer gives them in."""
MAX_WORDS = 16

FUNCTION_WORDS = (
    "a an the what what's whats which who who's where where's how can could would will do does "
    "did are is am be been being you you're your yours yourself me my i i'm for about of with "
    "on at to from by exactly really actually here now right currently all else kind sort "
    "things thing stuff please tell hi hello hey duck so and or any some this that it there "
    "many much us we our just also then anyway again today exist exists have has got "
    "question questions request requests"
)
"""Words that say nothing of what is asked about."""
ADDRESS = frozenset({"you", "your", "yours", "yourself", "you're", "ducklm"})
TOPIC_WORDS: tuple[tuple[Topic, str], ...] = (
    ("identity", "name called made built created who introduce describe"),
    (
        "model",
        "model models llm llms language brain powered power powers running run runs engine ai "
        "version backend answering answers answer behind underlying using use uses",
    ),
    (
        "workspace",
        "where workspace folder directory working work works located live lives path home",
    ),
    (
        "abilities",
        "help tools tool abilities ability capabilities capable able skills skill features "
        "feature functions offer support handle good purpose job can't cannot limits "
        "limitations allowed",
    ),
    (
        "memory",
        "remember remembered memory memories recall know knows stored saved facts kept keep",
    ),
)
"""The words for what an assistant is, has or does, by the topic each asks about."""
SELF_WORDS: dict[str, Topic] = {
    word: topic for topic, words in TOPIC_WORDS for word in words.split()
}
OWN_PARTS = frozenset({"model", "llm", "workspace", "memory", "memories", "ducklm"})
"""Words that name DuckLM's own parts without a "you" ("which model is answering?")."""
QUESTION_START = re.compile(
    r"^(?:what|which|who|where|how|can|could|do|does|are|is|tell|describe|introduce)\b", re.I
)
FUNCTIONS = frozenset(FUNCTION_WORDS.split())
WORD = re.compile(r"[a-z][a-z'\u2019]*|\d+")


def self_topics(task: str) -> tuple[Topic, ...]:
    """What `task` asks about DuckLM, in `TOPICS` order; empty when it asks about something else."""
    question = _last_question(task)
    if question is None:
        return ()
    words = [w.replace("\u2019", "'") for w in WORD.findall(question.lower())]
    if not words or len(words) > MAX_WORDS or re.search(r"[./\\`\"]\w", question):
        return ()
    # "in" around the question ("in which folder are you?", "which folder are you in?");
    # within it, as in "what is in the workspace?", it asks about the folder's things.
    words = [w for at, w in enumerate(words) if not (w == "in" and at in (0, len(words) - 1))]
    if not (ADDRESS & set(words) or OWN_PARTS & set(words)):
        return ()
    found: set[Topic] = set()
    for at, word in enumerate(words):
        if word in ("do", "does") and "you" in words[:at]:
            found.add("abilities")  # "what can you do": the verb, not "where do you work"
        elif word in SELF_WORDS:
            found.add(SELF_WORDS[word])
        elif word not in FUNCTIONS:
            return ()
    if not found:
        found.add("identity")  # "who are you?", "what are you?"
    return tuple(t for t in TOPICS if t in found)


def _last_question(task: str) -> str | None:
    """The request's question: its last sentence, a greeting before it left out."""
    text = " ".join(task.split())
    if not text or "\n" in task.strip():
        return None
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
    last = sentences[-1].strip() if sentences else ""
    if not (last.endswith("?") or QUESTION_START.match(last)):
        return None
    return last
