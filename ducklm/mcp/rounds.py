"""A 2026-07-28 `tools/call` with its `input_required` rounds, shaped like a turn.

At 2026-07-28 a server asks during a call by answering it with an `input_required`
result (SEP-2322): the requests it needs answered (an elicitation, sampling, the
roots) and an opaque `request_state`. The call is made again with the answers and the
state, until a real result comes. Each request goes to the call's `CallAsks`: one the
answers in hand fit is answered at once; one they do not fit stops the call there
(`NeedsPerson`), nothing having run on the server, and the tool step asks the person and
makes the call again from its start, the answer now in hand. At 2025-11-25 no such
result comes (the questions arrive as requests during the call, `session.py`) and this
is one plain `tools/call`.

Imported only with the session (it needs the `mcp` SDK).
"""

from __future__ import annotations

from typing import Any

from mcp import types
from mcp.shared.dispatcher import ProgressFnT

from ducklm.mcp.asks import CallAsks, NeedsPerson, QuestionPending, Refused
from ducklm.mcp.session import DuckSession
from ducklm.tools.errors import ToolError

MAX_ROUNDS = 10
"""`input_required` rounds one call may take (the SDK's and the TypeScript SDK's cap)."""
TOO_MANY_ROUNDS = "the MCP server asked for input more than {n} times in one call to {name}"
NOT_A_RESULT = "the MCP server answered the call to {name} with a result DuckLM does not read"


async def call_in_rounds(
    session: DuckSession,
    name: str,
    arguments: dict[str, Any],
    *,
    asks: CallAsks | None,
    progress: ProgressFnT,
) -> types.CallToolResult:
    """`tools/call` of `name`, its `input_required` rounds answered from `asks`.

    Raises:
        NeedsPerson: A request no answer in hand fits: the person is to be asked.
        ToolError: DuckLM refused a request, nobody takes this call's questions, or the
            server kept asking past `MAX_ROUNDS`.
    """
    responses: types.InputResponses | None = None
    state: str | None = None
    for _ in range(MAX_ROUNDS + 1):
        result = await session.call_tool(
            name,
            arguments,
            progress_callback=progress,
            input_responses=responses,
            request_state=state,
            allow_input_required=True,
        )
        if isinstance(result, types.CallToolResult):
            return result
        if not isinstance(result, types.InputRequiredResult):
            raise ToolError(NOT_A_RESULT.format(name=name))
        responses = await _answers(session, asks, result.input_requests or {})
        state = result.request_state
    raise ToolError(TOO_MANY_ROUNDS.format(n=MAX_ROUNDS, name=name))


async def _answers(
    session: DuckSession, asks: CallAsks | None, requests: types.InputRequests
) -> types.InputResponses:
    """The answers to one round's requests, in the server's order (so in the person's)."""
    answers: types.InputResponses = {}
    for key, request in requests.items():
        try:
            answers[key] = await session.answer_input(asks, request)
        except QuestionPending:
            assert asks is not None and asks.pending is not None  # set with the raise
            raise NeedsPerson(asks.pending) from None
        except Refused as refused:
            raise ToolError(str(refused)) from None
    return answers
