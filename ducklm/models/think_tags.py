"""Reasoning a model writes inline, in `<think>` or `<thinking>` tags, told apart from its answer.

A reasoning model served without a reasoning parser (vLLM without `--reasoning-parser`,
llama-server with `--reasoning-format none`, many LM Studio and Ollama set-ups) writes
its thoughts into the answer's text: `<think>...</think>` and then the answer. Some chat
templates (DeepSeek-R1's distills, QwQ) open the tag in the prompt itself, so the reply
has only the closing tag. Read here, once, as text arrives:

- a tag opens reasoning only at the very start of the text (after whitespace): a tag
  later in an answer is something the answer talks about;
- a tag may arrive split over chunks (`<thi` + `nk>`): text that could still become a
  tag is held back until it can be told;
- reasoning left unclosed when the text ends stays reasoning (the reply was cut while
  it thought: there is no answer);
- `opened`: the prompt opened the tag (a closing tag was seen with no opening one in
  an earlier reply): the text is reasoning until the closing tag, and a reply that
  never closes it was answer after all, given back whole at the end.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

OPENING = {"<think>": "</think>", "<thinking>": "</thinking>"}
"""Each opening tag and the tag that closes it."""
CLOSING = tuple(OPENING.values())

State = Literal["start", "reasoning", "answer"]


class Split(NamedTuple):
    """A piece of text parted into what is answer and what is reasoning."""

    answer: str = ""
    reasoning: str = ""


class ThinkSplitter:
    """Parts one reply's text, fed piece by piece, into answer and reasoning.

    Args:
        opened: The prompt opened a `<think>` tag: the reply starts inside it.
    """

    def __init__(self, *, opened: bool = False) -> None:
        self._state: State = "reasoning" if opened else "start"
        self._closing = "</think>"
        self._assumed = opened  # reasoning because the prompt opened it, not the reply
        self._held = ""  # text that may still be the start of a tag
        self._thought = ""  # an assumed reasoning's text, given back if it never closes
        self._watch = False  # an answer with no opening tag: watch it for a closing one
        self._trim = False  # the reasoning just closed: the blank lines after it go too
        self._tail = ""  # the answer's last characters, where a closing tag may be split
        self.orphan_close = False
        """A closing tag came with no opening one: the prompt opens it (`opened` next time)."""

    def feed(self, text: str) -> Split:
        """The part of `text` (with what was held) that can be told now."""
        if not text:
            return _NOTHING
        if self._state == "answer" and not (self._watch or self._trim):
            return Split(text)  # the answer, once it is sure: read for every token
        text = self._held + text
        self._held = ""
        if self._state == "start":
            return self._start(text)
        if self._state == "reasoning":
            return self._reasoning(text)
        return self._answer(text)

    def end(self) -> Split:
        """What was held when the text ends."""
        held, self._held = self._held, ""
        if self._state == "reasoning" and self._assumed:
            # The prompt's tag was never closed in this reply: it was all answer.
            return Split(answer=(self._thought + held).lstrip())
        if self._state == "reasoning":
            return Split(reasoning=held)
        return Split(answer=held)

    def _start(self, text: str) -> Split:
        body = text.lstrip()
        for tag, closing in OPENING.items():
            if body.startswith(tag):
                self._state, self._closing = "reasoning", closing
                return self._reasoning(body[len(tag) :])
            if tag.startswith(body):  # `<thi`: wait for the rest
                self._held = text
                return _NOTHING
        return self._answer(text)

    def _answer(self, text: str) -> Split:
        if self._trim:
            text = text.lstrip()
            self._trim = not text
        if self._state == "start":
            self._state, self._watch = "answer", True
        if self._watch:
            seen = self._tail + text
            if "<" in seen:  # read for every token: the common one costs one search
                self._watch_tags(seen)
            else:
                self._tail = ""
        return Split(answer=text)

    def _watch_tags(self, seen: str) -> None:
        """Look for a closing tag in an answer that opened none (split tags included)."""
        self._tail = seen[-len(CLOSING[-1]) :]
        if any(tag in seen for tag in OPENING):
            self._watch = False  # an answer that talks about the tags
        elif any(tag in seen for tag in CLOSING):
            self.orphan_close, self._watch = True, False

    def _reasoning(self, text: str) -> Split:
        if self._assumed and not self._thought and text.lstrip().startswith("<think>"):
            text = text.lstrip()[len("<think>") :]  # the reply opened it again anyway
        at = text.find(self._closing)
        if at < 0:
            kept = _without_partial_tag(text, self._closing)
            self._held = text[len(kept) :]
            if self._assumed:
                self._thought += kept
            return Split(reasoning=kept)
        self._state, self._trim = "answer", True
        return Split(self._answer(text[at + len(self._closing) :]).answer, text[:at])


_NOTHING = Split()


def split_whole(text: str, *, opened: bool = False) -> tuple[Split, bool]:
    """A whole reply's text parted; and whether it closed a tag it never opened.

    A whole text can be read back to front: a closing tag with no opening one means the
    prompt opened it, and what comes before it was reasoning.
    """
    splitter = ThinkSplitter(opened=opened)
    first, last = splitter.feed(text), splitter.end()
    split = Split(first.answer + last.answer, first.reasoning + last.reasoning)
    if opened or split.reasoning:
        return split, False
    head = split.answer.lstrip()
    for closing in CLOSING:
        at = head.find(closing)
        if at >= 0 and not any(tag in head[:at] for tag in OPENING):
            return Split(head[at + len(closing) :].lstrip(), head[:at]), True
    return split, False


def _without_partial_tag(text: str, tag: str) -> str:
    """`text` less any end of it that is the start of `tag` (the rest may come next)."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return text[:-size]
    return text
