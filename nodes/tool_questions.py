"""The two questions the tool node can put to a person: approvals and the sudo password.

Both are `interrupt()` calls that ask again, with what was wrong, when the answer is
unusable, so a bad answer never fails the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages.tool import ToolCall
from langgraph.types import interrupt

from ducklm.secrets import SecretVault
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
class Asking:
    """A call that needs a person's decision, with the verdict that says why."""

    call: ToolCall
    verdict: Verdict


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


def ask_password(call: ToolCall, vault: SecretVault) -> str | None:
    """The sudo password for `call`, taken out of the vault; `None` if the person cancelled.

    Only a one-time token travels through the interrupt (and so the checkpoint); the
    password itself was put in the vault by `DuckLM.provide_password`.
    """
    command = str(call["args"].get("command", ""))
    request: PasswordRequest = {
        "type": "password",
        "call_id": call["id"] or "",
        "command": command,
        "prompt": PASSWORD_PROMPT.format(command=command),
    }
    while True:
        response = interrupt(request)
        if isinstance(response, dict) and response.get("cancel") is True:
            return None
        token = response.get("password_token") if isinstance(response, dict) else None
        password = vault.take(token) if isinstance(token, str) else None
        if password is not None:
            return password
        request = {**request, "error": PASSWORD_LOST if token else PASSWORD_ANSWER}


def _action_request(item: Asking) -> ActionRequest:
    return {
        "name": item.call["name"],
        "args": item.call["args"],
        "description": item.verdict.reason,
    }


def _allowed(item: Asking) -> list[DecisionType]:
    allowed = list(DECISION_TYPES)
    if not item.verdict.rule_key:
        allowed.remove("allow_forever")
    if item.call["name"] in CODER_TOOL_NAMES:
        # An edit would change the request after the coder answered it: the person
        # approves or rejects the proposed change (a rejection's message tells why).
        allowed.remove("edit")
    return allowed
