"""A tool call's questions from its MCP server: elicitation and sampling requests.

A server may ask during `tools/call`: for input (`elicitation/create`, a form for the
person, or in URL mode a link for the person to open in their browser) or for a model's
reply (`sampling/createMessage`). The model never answers an elicitation, and an
untrusted server's sampling needs the person's yes. A person is asked only by a LangGraph
`interrupt()`, which ends the node (the node runs again from its top when answered). At
2025-11-25 the question comes as a request inside the call, and the call waits for the
answer: a question no answer in hand fits is recorded (`pending`), the node's attempt
ends with `NeedsPerson` while the call stays open, held by its server (`held.py`), and the
person's answer reaches that same call (`deliver`), within `HOLD_S`. Otherwise (an
`input_required` round at 2026-07-28, a link a refused call names, a held call that
expired or was lost in a restart) the call stops there (the server gets
`notifications/cancelled`) and the tool step makes it again with the answers in hand
(`answered`), which are handed to the server's same questions, in order
(`ducklm/turn/tool_step/server_asks.py`).

Free of the `mcp` SDK: the session (`session.py`) translates to and from its types.
"""

from __future__ import annotations

import asyncio
import contextlib
import urllib.parse
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from ducklm.tools.hitl import ServerQuestion

MAX_QUESTIONS = 5
"""Questions one call may ask before DuckLM stops answering it (a server asking in a loop)."""
RELEASE_WAIT_S = 2.0
NO_CALL = "DuckLM asks the person only during one of its tool calls, and none is waiting"
MANY_CALLS = "DuckLM cannot tell which of its calls to this server is asking"
ASKING = "DuckLM stopped this call to ask the person; it will call again with the answer"
DECLINED = "the person declined to let DuckLM's model answer this server"
URL_SCHEMES = ("https", "http")
BAD_URL = "DuckLM asks the person to open http or https links only, not {url!r}"
TOO_MANY = "the server asked more than {n} questions in one call"
HOLD_S = 300.0
"""How long a call held open for the person's answer waits (`held.py`); shown on the card."""
HELD = (
    "The server's call waits for your answer for up to {minutes:g} minutes (until {until} "
    "UTC); answered later, DuckLM makes the call again with your answer"
)
LATE = "the person did not answer while the call could wait"
AGAIN = (
    "DuckLM stopped the call to ask you; answering makes the call again, and your answer "
    "goes to the server when it asks this again"
)


@dataclass(frozen=True)
class SamplingAsk:
    """What a server asks DuckLM's model (`sampling/createMessage`)."""

    messages: list[dict[str, str]]
    """`{"role", "text"}` each, non-text content named in words."""
    system_prompt: str | None
    max_tokens: int


@dataclass(frozen=True)
class Sampled:
    """DuckLM's model's reply to a `SamplingAsk`."""

    text: str
    model: str


Sampler = Callable[[SamplingAsk], Awaitable[Sampled]]
Person = Callable[[ServerQuestion], Awaitable[dict[str, Any]]]
"""Someone who answers at once (a test, the conformance client); the graph asks by interrupt."""


@dataclass(frozen=True)
class Asked:
    """A question a call asked, and the person's answer (the `ElicitAnswer` wire form)."""

    question: ServerQuestion
    answer: dict[str, Any]


class NeedsPerson(Exception):
    """The call stopped at a question that no answer in hand fits; the server was told."""

    def __init__(self, question: ServerQuestion) -> None:
        super().__init__(question["message"])
        self.question = question


class Refused(Exception):
    """A server's request DuckLM answers with an error (declined sampling, no call)."""


class QuestionPending(Exception):
    """Raised inside the session's handler: the call is being stopped to ask the person."""


@dataclass
class CallAsks:
    """One tool call's questions: the answers it has, and the one it stopped at."""

    call_id: str
    server: str
    tool: str
    trusted: bool
    answered: Sequence[Asked] = ()
    sampler: Sampler | None = None
    on_sampled: Callable[[SamplingAsk, Sampled], None] | None = None
    person: Person | None = None
    pending: ServerQuestion | None = None
    hold_s: float = field(default_factory=lambda: HOLD_S)
    """How long a question asked inside the call (2025-11-25) keeps the call open."""
    held: bool = False
    """Whether the call waits, open, for the answer to `pending` (else it is stopped)."""
    stopped: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the call must stop, or be held, for a question (`pending`)."""
    released: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the stopped call was cancelled, so the server hears the cancel first."""
    _next: int = 0
    _reply: asyncio.Future[dict[str, Any]] | None = None

    async def elicit(
        self, message: str, schema: dict[str, Any], *, hold: bool = False
    ) -> dict[str, Any]:
        """The answer (`ElicitResult` fields) to the server's form question.

        `hold`: asked inside the call, which may wait for the person (`HOLD_S`).

        Raises:
            QuestionPending: No answer in hand fits: the call is to stop and ask.
            Refused: The call was held and the person's answer did not come in time.
        """
        question = self._question("elicitation", message, requested_schema=schema)
        return await self._answer(question, hold=hold)

    async def elicit_url(self, message: str, url: str, *, hold: bool = False) -> dict[str, Any]:
        """The person's answer (`action` only) to the server's request to open `url`.

        DuckLM never opens it: the person sees the link and who asks, and says whether
        they did what it asks (accept), refused (decline) or dismissed it (cancel).

        Raises:
            QuestionPending: No answer in hand fits: the call is to stop and ask.
            Refused: `url` is not an http or https link (a `javascript:` or `file:` one
                is never put before the person).
        """
        parts = urllib.parse.urlsplit(url)
        if parts.scheme.lower() not in URL_SCHEMES or not parts.netloc:
            raise Refused(BAD_URL.format(url=url[:200]))
        question = self._question("elicitation", message, mode="url", url=url)
        return {"action": (await self._answer(question, hold=hold))["action"]}

    async def sample(self, ask: SamplingAsk, *, hold: bool = False) -> Sampled:
        """DuckLM's model's reply; an untrusted server's request asks the person first.

        Raises:
            QuestionPending: The person must be asked first.
            Refused: The person declined, or no model serves sampling here.
        """
        if not self.trusted:
            question = self._question("sampling", _sampling_words(ask), messages=ask.messages)
            if (await self._answer(question, hold=hold)).get("action") != "accept":
                raise Refused(DECLINED)
        if self.sampler is None:
            raise Refused("no DuckLM model serves sampling here")
        sampled = await self.sampler(ask)
        if self.on_sampled is not None:
            self.on_sampled(ask, sampled)
        return sampled

    async def wait_released(self) -> None:
        """Wait (bounded) until the stopped call was cancelled."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.released.wait(), timeout=RELEASE_WAIT_S)

    def _question(self, kind: str, message: str, **extra: Any) -> ServerQuestion:
        base = {"call_id": self.call_id, "tool": self.tool, "server": self.server}
        question = {"type": kind, **base, "message": message, "note": AGAIN, **extra}
        return question  # type: ignore[return-value]

    def deliver(self, answer: dict[str, Any]) -> None:
        """The person's answer to `pending`, handed to the held call waiting for it."""
        reply = self._reply
        self.pending, self.held = None, False
        self.stopped.clear()  # cleared first: the next wait must not see this question
        if reply is not None and not reply.done():
            reply.set_result(answer)

    def give_up(self, why: str = LATE) -> None:
        """The held question gets no answer: the server is told `why` (an error)."""
        reply = self._reply
        if reply is not None and not reply.done():
            reply.set_exception(Refused(why))

    def take_callbacks(self, other: CallAsks) -> None:
        """Use `other`'s sampler and listeners: the node's attempt that took up this call."""
        self.sampler, self.on_sampled = other.sampler, other.on_sampled

    async def _answer(self, question: ServerQuestion, *, hold: bool = False) -> dict[str, Any]:
        if self._next < len(self.answered) and same_question(
            self.answered[self._next].question, question
        ):
            self._next += 1
            return self.answered[self._next - 1].answer
        if self.person is not None:
            return await self.person(question)
        if hold and self.hold_s > 0:
            return await self._wait_for_person(question)
        self.pending = question
        self.stopped.set()
        raise QuestionPending(ASKING)

    async def _wait_for_person(self, question: ServerQuestion) -> dict[str, Any]:
        """Hold the call open for the answer (`held.py` keeps it, the node asks)."""
        until = datetime.now(UTC) + timedelta(seconds=self.hold_s)
        note = HELD.format(minutes=round(self.hold_s / 60, 1), until=until.strftime("%H:%M"))
        self._reply = asyncio.get_running_loop().create_future()
        self.pending, self.held = {**question, "note": note}, True
        self.stopped.set()
        try:
            return await self._reply
        finally:
            self._reply = None


def same_question(a: ServerQuestion, b: ServerQuestion) -> bool:
    """Whether two questions ask the same (the call id and error left out)."""
    # A URL-mode question's `elicitationId` is left out: servers make a new one each call.
    keys = ("type", "server", "tool", "message", "mode", "url", "requested_schema", "messages")
    return all(a.get(k) == b.get(k) for k in keys)


def _sampling_words(ask: SamplingAsk) -> str:
    last = ask.messages[-1]["text"] if ask.messages else ""
    return f"The server asks DuckLM's model to answer: {last[:500]}"


call_asks: ContextVar[CallAsks | None] = ContextVar("mcp_call_asks", default=None)
"""Set around an MCP tool's call by the tool step; read by the call when it starts."""
