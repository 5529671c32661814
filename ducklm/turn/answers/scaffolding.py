"""DuckLM's own prompt text, kept out of the answers a person reads.

The bundled model copied what it was told into its answers: "The tool step limit (4) was
reached; answer with what you have.", "[tool search_files result]", a skill's steps.
The phrases are not a list written next to those examples: they are the sentences of
every role prompt (`prompts/roles/*.md`), the tools' descriptions, the turn's skills and
notes, and the templates and markers of the code that writes prompts (its constants,
handed in, `{field}`s read as wildcards). An answer's sentence (or line) that holds one
of them, or is a long enough piece of one, is left out, unless the same words are in
the conversation or the tool results (a file may well say "Be brief"). A longer sentence
made of a phrase's words with one or two changed counts too: SmolLM2 answered "If a tool
failed, was refused by the user, or the work was cut short, say so clearly." A marker
such as "[tool x result]" is cut out of its sentence. (A direct answer, which shows a tool result
as it is, is not checked: `ducklm.turn.answers.guard`.)

Everything here is pure; the prompt files are read at import.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources

from ducklm.turn.planning import text as planning_text
from ducklm.turn.prompting import budget, transcript

MIN_WORDS = 4
"""Shorter phrases ("Be brief.") match ordinary answers."""
NEAR_WORDS = 6
"""A sentence this long may repeat a phrase in other words ("say so clearly")."""
NEAR_SHARE = 0.8
"""...when this share of its words are the phrase's, and they cover most of the phrase."""
NEAR_COVER = 0.6
MARKERS = re.compile(
    r"\[(?:tool [\w.-]+ (?:result|failed)|calling tools:[^\]\n]*|\.\.\. [^\]\n]*)\]", re.I
)
"""The brackets `ducklm.turn.prompting` writes around tool traffic and cuts."""
SEGMENT = re.compile(r"(?<=[.!?:])[ \t]+|\n+")
"""Where a sentence or line ends (the separator stays with the text before it)."""
PLACEHOLDER = re.compile(r"\{[^{}]*\}")
CODE_TEMPLATES = (
    transcript.FOLDED,
    transcript.NOT_RUN,
    budget.SKILLS_HEADER,
    budget.MEMORIES_HEADER,
    budget.SUMMARY_HEADER,
    planning_text.STEP_BRIEF,
    planning_text.PLAN_REPORT,
    planning_text.RETRY,
)


def normalise(text: str) -> str:
    """`text` lowercased, its punctuation gone, its spaces single."""
    return " ".join(re.sub(r"[^\w{}]+", " ", text.lower()).split())


def sentences(text: str) -> list[str]:
    """The sentences and lines of `text` that hold at least `MIN_WORDS` words."""
    found = []
    for raw in text.splitlines():
        line = raw.strip().lstrip("-*#> ").strip()
        found += [p for p in re.split(r"(?<=[.!?])\s+", line) if len(p.split()) >= MIN_WORDS]
    return found


def _prompt_files() -> tuple[str, ...]:
    folder = resources.files("ducklm.prompts").joinpath("roles")
    return tuple(f.read_text("utf-8") for f in folder.iterdir() if f.name.endswith(".md"))


PROMPT_TEXTS = _prompt_files()
"""Every role prompt and the few-shot examples, as shipped."""


@dataclass(frozen=True)
class Scaffolding:
    """The phrases DuckLM wrote into a turn's prompts, as patterns."""

    patterns: tuple[re.Pattern[str], ...] = field(default_factory=tuple)
    plain: tuple[str, ...] = field(default_factory=tuple)
    """The phrases without a placeholder, normalised (a piece of one counts too)."""

    @classmethod
    def of(cls, texts: Iterable[str]) -> Scaffolding:
        """The phrases of `texts` (prompts, templates, rendered skills)."""
        patterns, plain = [], []
        for phrase in {normalise(s) for t in texts for s in sentences(t)}:
            if PLACEHOLDER.search(phrase):
                parts = [re.escape(p.strip()) for p in PLACEHOLDER.split(phrase)]
                body = r"\b.{0,80}?\b".join(p for p in parts if p)
                if len(PLACEHOLDER.sub("", phrase).split()) >= MIN_WORDS:
                    patterns.append(re.compile(body))
            else:
                plain.append(phrase)
        return cls(tuple(patterns), tuple(plain))

    def plus(self, texts: Iterable[str]) -> Scaffolding:
        """These phrases and those of `texts`."""
        more = Scaffolding.of(texts)
        return Scaffolding(self.patterns + more.patterns, self.plain + more.plain)

    def clean(self, answer: str, allowed: str = "") -> str:
        """`answer` without the sentences repeating DuckLM's prompts (unless `allowed` has them)."""
        said = normalise(allowed)
        return "".join(self.kept(piece, said) for piece in segments(answer)).strip()

    def is_scaffolding(self, sentence: str, said: str = "") -> bool:
        """Whether `sentence` repeats (part of) a phrase that `said` does not hold."""
        text = normalise(sentence)
        if not text:
            return False
        words = text.split()
        long = len(words) >= MIN_WORDS
        for phrase in self.plain:
            repeats = phrase in text or (long and text in phrase) or _near(words, phrase)
            if repeats and not (said and (phrase in said or text in said)):
                return True
        return any(p.search(text) and not (said and p.search(said)) for p in self.patterns)

    def kept(self, piece: str, said: str) -> str:
        """What stays of one segment; `said` is the allowed text, already `normalise`d."""
        without = MARKERS.sub("", piece)
        if without != piece and not without.strip():
            return ""
        return "" if self.is_scaffolding(without, said) else without


def _near(words: list[str], phrase: str) -> bool:
    """Whether `words` say `phrase` again with a word or two changed."""
    if len(words) < NEAR_WORDS:
        return False
    # Distinct words on both sides: "answer answer answer ..." shares one word with a
    # phrase, however often it says it.
    mine, theirs = set(words), set(phrase.split())
    shared = len(mine & theirs)
    return shared >= NEAR_SHARE * len(mine) and shared >= NEAR_COVER * len(theirs)


def segments(text: str) -> Iterator[str]:
    """`text` in sentences and lines, each with the space or newline after it."""
    start = 0
    for end in SEGMENT.finditer(text):
        yield text[start : end.end()]
        start = end.end()
    if start < len(text):
        yield text[start:]


def complete_prefix(text: str) -> int:
    """How much of a streaming `text` ends in whole segments (the rest may still grow)."""
    ends = [m.end() for m in SEGMENT.finditer(text) if m.end() < len(text)]
    return ends[-1] if ends else 0


BUNDLED = Scaffolding.of((*PROMPT_TEXTS, *CODE_TEMPLATES))
"""The phrases of the shipped prompts and of the turn's own templates."""
