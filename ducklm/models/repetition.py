"""Tell when a streamed answer has started repeating itself, and where the repeat began.

Small models fall into loops: the bundled SmolLM2-135M wrote one paragraph over and over
until its token limit. Penalties in the sampler make that rarer (`sampling.py`); this
guard ends what gets through. It reads the stream as words (whitespace-separated: chunk
boundaries differ by server, words do not) and keeps, for the last `WINDOW` words, how
often each run of `N` words came. A word is a repeat when its `N`-word run came before in
the window (more often than the turn's sources hold it, see `RepetitionGuard`); the
answer is repeating when `REPEATS` of the last `RECENT` words are repeats.

Why these numbers (tests/unit/test_repetition_guard.py keeps both sides):

- `N = 6`: a six-word run written twice is a copy. Lists of similar lines and code share
  shorter runs ("Read the file", "self.x = x") with a name or number between them that
  breaks every six-word run; with 3 or 4 such lists already count as repeats.
- `WINDOW = 300` words, about 400 tokens: it must hold a whole paragraph and its copy, or
  a loop longer than the window is never seen; loops of small models are a paragraph.
- `RECENT = 64`, `REPEATS = 48`: a loop is cut after about 50 copied words (one second of
  SmolLM2), and a copy with a word changed here and there (sampling) still counts, as
  one changed word breaks only the `N` runs that hold it.

The kept text ends where the repeated stretch began: its first repeated run, after
which no gap of more than `N` fresh words came.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterable

N = 6
WINDOW = 300
RECENT = 64
REPEATS = 48

Gram = tuple[str, ...]
_WORD = re.compile(r"\S+")


def grams(text: str, n: int = N) -> collections.Counter[Gram]:
    """How often each run of `n` words occurs in `text`."""
    words = text.split()
    return collections.Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


class RepetitionGuard:
    """Watches one stream of text; `feed` says when it repeats itself.

    Args:
        sources: Text the answer may quote, such as this turn's tool results: a run of
            words the sources hold k times may come k times before it counts as a repeat,
            so an answer that quotes a log file of identical lines is not cut.
    """

    def __init__(self, sources: Iterable[str] = ()) -> None:
        self._sources = sources
        self._allowed: dict[Gram, int] | None = None  # counted at the first candidate repeat
        self._text: list[str] = []
        self._length = 0  # characters in `_text`
        self._partial = ""  # the word still being written
        self._partial_at = 0  # where it starts
        self._words: collections.deque[str] = collections.deque(maxlen=N)
        self._seen: dict[Gram, int] = {}  # runs in the window, and how often
        self._window: collections.deque[Gram] = collections.deque()
        self._recent: collections.deque[bool] = collections.deque(maxlen=RECENT)
        self._repeats = 0  # repeats in `_recent`
        self._starts: collections.deque[int] = collections.deque(maxlen=N)  # offsets of `_words`
        self._fresh = N + 1  # words since the last repeat
        self._stretch_at = 0  # where the current repeated stretch began
        self.cut_at: int | None = None
        """Where the kept text ends, once the stream repeats."""

    def feed(self, piece: str) -> bool:
        """Read the next piece of the stream; whether it now repeats itself."""
        if self.cut_at is not None:
            return True
        start = self._length
        self._text.append(piece)
        self._length += len(piece)
        rest = piece[1:]
        if piece[:1] == " " and rest and " " not in rest and rest.isprintable():
            # The common token, " word": it ends the word before and starts one.
            self._end_word()
            self._partial, self._partial_at = rest, start + 1
            return False
        for match in _WORD.finditer(piece):
            begin, end = match.span()
            if begin > 0 or not self._partial:  # a word of its own, not the rest of one
                self._end_word()
                self._partial_at = start + begin
            self._partial += match.group()
            if end < len(piece):
                self._end_word()
        if piece[-1:].isspace():
            self._end_word()
        return self.cut_at is not None

    @property
    def fed(self) -> int:
        """How many characters were fed."""
        return self._length

    @property
    def text(self) -> str:
        """What was fed, up to where it repeats once it does."""
        text = "".join(self._text)
        return text if self.cut_at is None else text[: self.cut_at].rstrip()

    def _end_word(self) -> None:
        if self._partial and self.cut_at is None:
            self._word(self._partial, self._partial_at)
        self._partial = ""

    def _word(self, word: str, at: int) -> None:
        self._words.append(word)
        self._starts.append(at)
        if len(self._words) < N:
            return
        gram = tuple(self._words)
        seen = self._seen.get(gram, 0)
        repeat = seen > 0 and seen >= self._allowance(gram)
        self._remember(gram, seen)
        if len(self._recent) == RECENT and self._recent[0]:
            self._repeats -= 1
        self._recent.append(repeat)
        self._repeats += repeat
        if not repeat:
            self._fresh += 1
            return
        if self._fresh > N:  # a new stretch: it begins with this run's first word
            self._stretch_at = self._starts[0]
        self._fresh = 0
        if self._repeats >= REPEATS:
            self.cut_at = self._stretch_at

    def _allowance(self, gram: Gram) -> int:
        if self._allowed is None:
            # Counted late, when the stream first writes a run twice (most answers never
            # do), so the prompt is not read before the first token; only runs a source
            # repeats are kept, as once is what every run is allowed anyway.
            counts: collections.Counter[Gram] = collections.Counter()
            for source in self._sources:
                counts.update(grams(source))
            self._allowed = {gram: count for gram, count in counts.items() if count > 1}
        return self._allowed.get(gram, 1)

    def _remember(self, gram: Gram, seen: int) -> None:
        self._seen[gram] = seen + 1
        self._window.append(gram)
        if len(self._window) > WINDOW:
            old = self._window.popleft()
            left = self._seen[old] - 1
            if left:
                self._seen[old] = left
            else:
                del self._seen[old]
