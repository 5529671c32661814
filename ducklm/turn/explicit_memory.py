"""An explicit request to remember, read by rule: the fact to keep, whatever a model says.

"Please remember: my favourite editor is Helix." got the memory policy's `skip` on the
bundled model, and nothing was kept. Nobody needs a model to see that such a request
asks to keep something: a request to remember is recognised by its form, and the fact is
the rest of the sentence. The forms:

- a verb of keeping in front: "remember (that) ...", "please note ...", "keep in mind
  ...", "don't forget ...", "make a note that ...", "for future reference, ...";
- one behind the fact: "... , remember that.", "... (please) note it.";
- a standing wish: "from now on ...", "I prefer ...", "I'd rather ...", "always ...",
  "never ...", "call me ...".

A question is never one ("do you remember ...?", "remember what I said?"): it asks for
something kept, it keeps nothing. The memory rules (`ducklm.turn.memory_rules`) still
judge the fact (no secrets; a repeat updates, a new value supersedes).

Everything here is pure: no I/O, no model, no clock.
"""

from __future__ import annotations

import re

FACT_CHARS = 400
KEEP_VERB = (
    r"(?:remember|memori[sz]e|note(?:\s+down)?|take\s+note|make\s+a\s+note|keep\s+in\s+mind"
    r"|bear\s+in\s+mind|(?:don't|do\s+not)\s+forget|for\s+(?:future\s+)?reference)"
)
LEAD = r"^\s*(?:(?:ok(?:ay)?|so|hey|hi|duck|also|and)[,!.\s]+)*(?:please[,\s]+)?"
IN_FRONT = re.compile(
    LEAD + KEEP_VERB + r"(?:\s+(?:this|that|the\s+fact\s+that|for\s+me|for\s+later))*"
    r"\s*(?:[:,\u2014-]\s*|\s+)(?P<fact>.+)$",
    re.I | re.S,
)
BEHIND = re.compile(
    r"^(?P<fact>.+?)\s*[,;.!\u2014-]*\s*(?:and\s+)?(?:please\s+)?" + KEEP_VERB
    + r"(?:\s+(?:that|this|it))?(?:\s+(?:please|for\s+me|for\s+later))?\s*[.!]*\s*$",
    re.I | re.S,
)  # fmt: skip
STANDING = re.compile(
    LEAD + r"(?P<fact>(?:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|"
    r"i(?:\s+prefer|(?:\s+would|'d|\u2019d)\s+(?:rather|prefer|like\s+you\s+to\s+always))|"
    r"(?:always|never)\s+(?:use|answer|reply|write|call|speak|respond|give)|call\s+me|"
    r"my\s+preference\s+is)\b.+)$",
    re.I | re.S,
)
QUESTION_WORD = re.compile(
    r"^(?:what|who|where|when|why|how|which|whether|if|do|does|did|is|are|can|could)\b", re.I
)


def requested_memory(task: str) -> str | None:
    """The fact `task` explicitly asks to keep, as a sentence; `None` when it asks none."""
    text = " ".join(task.split())
    if not text or len(text) > FACT_CHARS or text.endswith("?"):
        return None
    for pattern in (IN_FRONT, BEHIND, STANDING):
        match = pattern.match(text)
        if match is None:
            continue
        fact = match["fact"].strip(" \"'\u201c\u201d:,;-")
        if fact and not QUESTION_WORD.match(fact) and len(fact.split()) >= 2:
            return _sentence(fact)
    return None


def _sentence(fact: str) -> str:
    fact = fact.rstrip(" .!")
    if fact.lower().startswith("to "):  # "remember to buy milk" keeps a reminder
        fact = "remember " + fact
    return fact[:1].upper() + fact[1:] + "."
