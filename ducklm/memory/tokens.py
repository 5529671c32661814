"""Words for keyword search: NFKC, lowercase, unicode words, stopwords out, plurals folded."""

from __future__ import annotations

import re
import unicodedata

# Letters and digits only: `_`, `.`, `/` and `-` split, so `deploy_prod.sh` and
# `scripts/deploy` share `deploy` with a question that says "deploy".
_WORD = re.compile(r"[^\W_]+")

# Function words and question words. Short on purpose: content words such as "home",
# "work" or "time" carry meaning in memories and stay.
_STOPWORD_TEXT = """
    a an the and or but if then so of to in on at by for with from into onto about as
    is are was were be been being am do does did doing have has had having will would
    shall should can could may might must i me my mine myself we us our you your he him
    his she her it its they them their this that these those there here what which who
    whom whose when where why how s t d ll m re ve not no yes just also too very any some
    all each every than up down out over again once only own same such both few more
    most other nor let lets get got
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def tokenize(text: str) -> list[str]:
    """The indexable words of `text`, in order, repeats kept (BM25 counts them)."""
    words = _WORD.findall(unicodedata.normalize("NFKC", text).lower())
    return [stem(w) for w in words if w not in STOPWORDS]


def stem(word: str) -> str:
    """Fold English plurals and third-person `-s` (Harman's S-stemmer, plus `-'s`).

    Only the `s` endings: stripping `-ing` / `-ed` as well conflates too much on short
    texts ("living" and "lived" become different stems anyway, "bed" loses its `ed`).
    """
    if len(word) <= 3 or not word.endswith("s"):
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith(("us", "ss", "is")):
        return word
    return word[:-1]
