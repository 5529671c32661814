"""The question an MCP server asks during a call, put to the person (`ask_server`).

An elicitation form, a link to open, or may DuckLM's model answer it (sampling). The
same kind of `interrupt()` as the tool step's other questions (`questions.py`), asked
again, with what was wrong, when the answer does not fit; kept apart from them so that
what asks a server's question loads nothing of the tool policy.
"""

from __future__ import annotations

from typing import Any

from langgraph.types import interrupt

from ducklm.tools.elicitation import check_elicit_answer, read_elicit_answer
from ducklm.tools.hitl import DecisionError, ServerQuestion


def ask_server(question: ServerQuestion) -> dict[str, Any]:
    """The person's answer to an MCP server's question, in the `ElicitResult` wire form.

    Asked again, with what was wrong, until the answer fits the question's form; an
    accepted form comes back with the schema's defaults filled in.
    """
    error: str | None = None
    while True:
        response = interrupt(question if error is None else {**question, "error": error})
        try:
            return check_elicit_answer(question, read_elicit_answer(response)).wire()
        except DecisionError as exc:
            error = str(exc)
