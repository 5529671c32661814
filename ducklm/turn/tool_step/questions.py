"""The questions the tool node can put to a person: approvals, passwords.

An MCP server's own question (an elicitation form, or may DuckLM's model answer it) is
`server_question.py:ask_server`.

Both are `interrupt()` calls that ask again, with what was wrong, when the answer is
unusable, so a bad answer never fails the run. On resume LangGraph replays earlier
answers by position, so the questions must come in the same order on every re-run:
they depend only on the step's calls, the decisions, the tokens answered so far and
which of those the vault still holds. (Should a token expire between two re-runs, a
replayed answer may land on another sudo call of the step: the same person's password,
so harmless; what matters is that no password is taken before the last answer.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages.tool import ToolCall
from langgraph.types import interrupt

from ducklm.kit.secrets import SecretVault
from ducklm.tools.coder_tools import CODER_TOOL_NAMES
from ducklm.tools.hitl import (
    DECISION_TYPES,
    ActionRequest,
    Decision,
    DecisionError,
    DecisionType,
    PasswordRequest,
    build_request,
    parse_decisions,
)
from ducklm.tools.policy import Verdict

PASSWORD_PROMPT = "Password for sudo, to run: {command}"
PASSWORD_LOST = "the password did not arrive (or expired); please enter it again"
PASSWORD_ANSWER = 'answer with {"password_token": ...} from provide_password, or {"cancel": true}'


@dataclass(frozen=True)
class PasswordFor:
    """A call that will run through sudo: the command the person is shown."""

    call_id: str
    command: str


@dataclass(frozen=True)
class Asking:
    """A call that needs a person's decision, with the verdict that says why."""

    call: ToolCall
    verdict: Verdict
    mismatch: str = ""
    """Why the call does not fit the request (`ducklm.turn.tool_step.intent`), shown first."""


def ask_person(asking: Sequence[Asking]) -> dict[str, Decision]:
    """One interrupt for every call that needs a person; the decisions by call id."""
    if not asking:
        return {}
    request = build_request([(_action_request(a), _allowed(a)) for a in asking])
    error: str | None = None
    while True:
        response = interrupt(request if error is None else {**request, "error": error})
        try:
            decisions = parse_decisions(request, response)
        except DecisionError as exc:
            error = str(exc)
            continue
        return {a.call["id"] or "": d for a, d in zip(asking, decisions, strict=True)}


def ask_passwords(needs: Sequence[PasswordFor], vault: SecretVault) -> dict[str, str | None]:
    """The sudo password of each call in `needs` by call id; `None` where the person cancelled.

    Only one-time tokens travel through the interrupts (and so the checkpoint); the
    passwords were put in the vault by `DuckLM.provide_password`. Every question is
    asked before any password leaves the vault: the node re-runs from its top after
    each answer and must find every earlier token still there. A token that no longer
    resolves (expired, or put in the vault of a process that has since stopped) is asked
    for again, so all passwords are in hand before anything runs.
    """
    tokens = {item.call_id: _ask_token(item) for item in needs}
    while True:
        lost = [i for i in needs if _is_lost(tokens[i.call_id], vault)]
        for item in lost:
            tokens[item.call_id] = _ask_token(item, PASSWORD_LOST)
        if lost:
            continue  # the new tokens may have expired meanwhile too
        taken = vault.take_all([t for t in tokens.values() if t is not None])
        if taken is not None:  # else one expired since the check: look again
            return {cid: taken[t] if t is not None else None for cid, t in tokens.items()}


def _is_lost(token: str | None, vault: SecretVault) -> bool:
    return token is not None and not vault.holds(token)


def _ask_token(item: PasswordFor, error: str | None = None) -> str | None:
    """The token the person answered with for `item`; `None` if they cancelled."""
    request: PasswordRequest = {
        "type": "password",
        "call_id": item.call_id,
        "command": item.command,
        "prompt": PASSWORD_PROMPT.format(command=item.command),
    }
    while True:
        response = interrupt(request if error is None else {**request, "error": error})
        if isinstance(response, dict) and response.get("cancel") is True:
            return None
        token = response.get("password_token") if isinstance(response, dict) else None
        if isinstance(token, str) and token:
            return token
        error = PASSWORD_ANSWER


def _action_request(item: Asking) -> ActionRequest:
    request: ActionRequest = {
        "name": item.call["name"],
        "args": item.call["args"],
        "description": f"{item.mismatch} {item.verdict.reason}".strip(),
    }
    if item.mismatch:  # not what was asked for: a hurried Enter must not approve it
        request["default_decision"] = "reject"
    return request


def _allowed(item: Asking) -> list[DecisionType]:
    allowed = list(DECISION_TYPES)
    if not item.verdict.rule_key:
        allowed.remove("allow_forever")
    if item.call["name"] in CODER_TOOL_NAMES:
        # An edit would change the request after the coder answered it: the person
        # approves or rejects the proposed change (a rejection's message tells why).
        allowed.remove("edit")
    return allowed
