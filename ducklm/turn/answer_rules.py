"""Requests DuckLM answers by rule, with no tool and no model: which rule, if any.

A calculation (`ducklm.turn.arithmetic`), an explicit request to remember
(`ducklm.turn.explicit_memory`) and a question about DuckLM itself
(`ducklm.turn.self_questions`) need no tool, and the bundled model gets each of them
wrong: 17 x 23 = 409, "I'll remember" with nothing kept, an invented list of skills. The
router gives such a request the `NO_TOOL` shortcut under the rule's name, and the
answering node writes the answer from the rule (`ducklm.turn.answers.ruled`).

Everything here is pure: no I/O, no model, no clock.
"""

from __future__ import annotations

from ducklm.turn.arithmetic import find_calculation
from ducklm.turn.explicit_memory import requested_memory
from ducklm.turn.self_questions import self_topics

CALCULATION = "a calculation, computed"
REMEMBER = "an explicit request to remember"
ABOUT_ME = "a question about DuckLM itself"
ANSWER_RULES = frozenset({CALCULATION, REMEMBER, ABOUT_ME})


def answer_rule(task: str) -> str | None:
    """The rule that answers `task` itself (one of `ANSWER_RULES`), or `None`."""
    if find_calculation(task) is not None:
        return CALCULATION
    if requested_memory(task) is not None:
        return REMEMBER
    if self_topics(task):
        return ABOUT_ME
    return None
