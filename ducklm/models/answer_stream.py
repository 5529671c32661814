"""One answer as it streams: ended when it repeats itself, and marked when it was cut.

An answer is cut in two ways: the repetition guard ended it (`repeating`, the text kept up
to where the repeat began) or the server stopped at the role's `max_output_tokens`
(`finish_reason == "length"`). Either way the person is told: the node emits
`answer_cut`, and the answer's message carries the reason (`CUT_KEY` in its
`response_metadata`), so a reopened conversation shows it too.

Reasoning (`ducklm.models.wire`) streams beside the answer, never in it: `admit` keeps
it apart (`reasoning`), and the answer's message carries it where LangChain keeps
reasoning, which no server is sent back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessageChunk

from ducklm.models.repetition import RepetitionGuard
from ducklm.models.wire import REASONING_KEY

CutReason = Literal["repeating", "length"]
CUT_KEY = "cut"
"""The key of an answer message's `response_metadata` that says why it was cut."""
CUT_NOTES: dict[CutReason, str] = {
    "repeating": "stopped: repeating",
    "length": "stopped at the length limit",
}
"""What people read under a cut answer (the web chat has the same words, `ui/turn.js`)."""
WORKING_KEY = "ducklm_working"
"""The key of an assistant message's `additional_kwargs` when its text is not an answer.

A plan step's result and an action reply's text that did not stream are the turn's
working: the person saw them in the plan (or not at all), never as the answer. The
reopened chat, `ducklm history` and the exports show only the other texts as answers,
so a turn reads the same after a reload as it did live.
"""


class AnswerStream:
    """Reads one model stream's chunks; says when to close it and how it ended.

    Args:
        sources: The prompt's texts, which the answer may quote (see `RepetitionGuard`).
    """

    def __init__(self, sources: Iterable[str] = ()) -> None:
        self._guard = RepetitionGuard(sources)
        self._finish_reason: str | None = None
        self._reasoning: list[str] = []

    def admit(self, chunk: BaseMessageChunk) -> bool:
        """Take `chunk`; `False` once the answer repeats itself: close the stream."""
        reason = chunk.response_metadata.get("finish_reason")
        if reason:
            self._finish_reason = reason
        if thought := reasoning_of(chunk):
            self._reasoning.append(thought)
        text = chunk.text  # a new str subclass at every read
        return not (text and self._guard.feed(text))

    @property
    def reasoning(self) -> str:
        """The reasoning that streamed beside the answer."""
        return "".join(self._reasoning)

    @property
    def streamed(self) -> bool:
        """Whether any text came."""
        return self._guard.fed > 0

    @property
    def text(self) -> str:
        """The answer: what streamed, up to where the repeat began when it repeated."""
        return self._guard.text.strip()

    @property
    def cut(self) -> CutReason | None:
        """Why the answer was cut, or `None` when the model ended it."""
        if self._guard.cut_at is not None:
            return "repeating"
        return "length" if self._finish_reason == "length" else None

    def cut_fields(self, role: str) -> dict[str, Any]:
        """The fields of `answer_cut` (call once `cut` is set).

        `dropped` is how many of the characters already sent the answer does not keep:
        the repeat, from where it began.
        """
        cut = self.cut or "length"
        kept = self._guard.cut_at
        dropped = 0 if kept is None else self._guard.fed - kept
        return {"reason": cut, "note": CUT_NOTES[cut], "role": role, "dropped": dropped}


def answer_message(text: str, cut: CutReason | None, reasoning: str = "") -> AIMessage:
    """The answer's message, with why it was cut in its metadata, and its reasoning apart."""
    return AIMessage(
        content=text,
        additional_kwargs={REASONING_KEY: reasoning} if reasoning else {},
        response_metadata={CUT_KEY: cut} if cut else {},
    )


def working_message(message: AIMessage) -> AIMessage:
    """`message`, marked as working: its text was not shown as the answer."""
    kwargs = {**message.additional_kwargs, WORKING_KEY: True}
    return message.model_copy(update={"additional_kwargs": kwargs})


def is_working(message: Any) -> bool:
    """Whether a stored message's text is working, not an answer (`WORKING_KEY`)."""
    return bool((getattr(message, "additional_kwargs", None) or {}).get(WORKING_KEY))


def reasoning_of(message: Any) -> str:
    """The reasoning a message or chunk carries beside its text ("" if none)."""
    thought = (getattr(message, "additional_kwargs", None) or {}).get(REASONING_KEY)
    return thought if isinstance(thought, str) else ""


def cut_of(message: Any) -> CutReason | None:
    """Why a stored answer was cut, if it was."""
    reason = (getattr(message, "response_metadata", None) or {}).get(CUT_KEY)
    return reason if reason in CUT_NOTES else None
