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
  never closes it was answer after all, given back whole at the end;
- `opened=None`: not known yet (a model's first reply). Text that opens no tag is held
  back, shown as neither, until it can be told: a closing tag makes what came before it
  reasoning (the prompt opens the tag: `template_opens`), and the end of the text, or
  `HOLD_MAX_CHARS` with no closing tag, makes it answer, given back in order.
  Reasoning shown as answer cannot be taken back from a stream, and a template's habit
  is the model's alone, so this is learned from the reply, on every server alike.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

OPENING = {"<think>": "</think>", "<thinking>": "</thinking>"}
"""Each opening tag and the tag that closes it."""
CLOSING = tuple(OPENING.values())
HOLD_MAX_CHARS = 8000
"""The most of a first reply held back while it is not known whether the prompt opened a
tag: about 2,000 tokens, more than most answers and than the thoughts of a short
question (DeepSeek-R1's distills write a few hundred to a few thousand tokens); past it,
the text is taken for an answer (a closing tag after it is still learned from)."""

State = Literal["start", "unsure", "reasoning", "answer"]


class Split(NamedTuple):
    """A piece of text parted into what is answer and what is reasoning."""

    answer: str = ""
    reasoning: str = ""


class ThinkSplitter:
    """Parts one reply's text, fed piece by piece, into answer and reasoning.

    Args:
        opened: The prompt opened a `<think>` tag: the reply starts inside it. None: not
            known yet; text that opens no tag is held until it can be told.
    """

    def __init__(self, *, opened: bool | None = False) -> None:
        self._state: State = "reasoning" if opened else "start"
        self._unsure = opened is None
        self._closing = "</think>"
        self._assumed = opened is True  # reasoning because the prompt opened it, not the reply
        self._held = ""  # text that may still be the start of a tag
        self._thought = ""  # an assumed reasoning's text, given back if it never closes
        self._watch = False  # an answer with no opening tag: watch it for a closing one
        self._trim = False  # the reasoning just closed: the blank lines after it go too
        self._tail = ""  # the answer's last characters, where a closing tag may be split
        self.orphan_close = False
        """A closing tag came with no opening one: the prompt opens it (`opened` next time)."""
        self._opens_none = False  # the text opened a tag itself, or ended with none
        self._pending: list[str] = []  # a first reply's text held while it cannot be told
        self._pending_chars = 0

    @property
    def template_opens(self) -> bool | None:
        """What this text showed of the prompt: it opens a tag (True), opens none, or unknown."""
        if self.orphan_close:
            return True
        return False if self._opens_none else None

    def feed(self, text: str) -> Split:
        """The part of `text` (with what was held) that can be told now."""
        if not text:
            return _NOTHING
        if self._state == "answer" and not (self._watch or self._trim):
            return Split(text)  # the answer, once it is sure: read for every token
        if self._state == "unsure":
            return self._undecided(text)
        text = self._held + text
        self._held = ""
        if self._state == "start":
            return self._start(text)
        if self._state == "reasoning":
            return self._reasoning(text)
        return self._answer(text)

    def end(self) -> Split:
        """What was held when the text ends."""
        held, self._held = self._held + "".join(self._pending), ""
        self._pending = []
        if self._state == "reasoning" and self._assumed:
            # The prompt's tag was never closed in this reply: it was all answer.
            return Split(answer=(self._thought + held).lstrip())
        if self._state == "reasoning":
            return Split(reasoning=held)
        if self._state == "unsure" and held.strip():
            self._opens_none = True  # a whole reply and no closing tag: it opens none
        return Split(answer=held)

    def no_inline(self) -> None:
        """The server parts reasoning itself (a field of its own): the text is answer."""
        if self._state in ("start", "unsure"):
            self._held, self._pending, self._tail = self._held + "".join(self._pending), [], ""
            self._state, self._watch, self._unsure = "answer", True, False
            self._opens_none = True

    def _start(self, text: str) -> Split:
        body = text.lstrip()
        for tag, closing in OPENING.items():
            if body.startswith(tag):
                self._state, self._closing = "reasoning", closing
                self._opens_none = True
                return self._reasoning(body[len(tag) :])
            if tag.startswith(body):  # `<thi`: wait for the rest
                self._held = text
                return _NOTHING
        if self._unsure and body:
            self._state = "unsure"
            return self._undecided(text)
        return self._answer(text)

    def _undecided(self, text: str) -> Split:
        """Text that opened no tag, while it is not known whether the prompt opened one.

        Held in pieces, and only the new piece (with the end of the last, where a tag may
        be split) is searched: read for every token of a first reply.
        """
        self._pending.append(text)
        self._pending_chars += len(text)
        seen, self._tail = self._tail + text, (self._tail + text)[-len(CLOSING[-1]) :]
        if "</" not in seen and self._pending_chars <= HOLD_MAX_CHARS:
            return _NOTHING
        text, self._pending = "".join(self._pending), []
        at, closing = _first_closing(text)
        if at >= 0 and not any(tag in text[:at] for tag in OPENING):
            self._state, self._trim, self.orphan_close, self._tail = "answer", True, True, ""
            return Split(self._answer(text[at + len(closing) :]).answer, text[:at])
        if at >= 0 or len(text) > HOLD_MAX_CHARS:  # talks about the tags, or long: answer
            self._state, self._watch, self._tail = "answer", at < 0, ""
            return self._answer(text)
        self._pending = [text]  # `</` and no tag yet: it may be a tag split over pieces
        return _NOTHING

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


def _first_closing(text: str) -> tuple[int, str]:
    """Where the first closing tag in `text` starts, and which; -1 when none is there."""
    if "</" not in text:  # read for every held token: the common one costs one search
        return -1, ""
    found = [(text.find(tag), tag) for tag in CLOSING if tag in text]
    return min(found) if found else (-1, "")


def _without_partial_tag(text: str, tag: str) -> str:
    """`text` less any end of it that is the start of `tag` (the rest may come next)."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return text[:-size]
    return text
