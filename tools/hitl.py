"""Approval requests and decisions in LangChain's human-in-the-loop shape.

agent-chat-ui and other LangGraph clients render exactly this shape, so the interrupt
payload follows it: `action_requests` and `review_configs`, answered with
`{"decisions": [...]}` in the same order. DuckLM adds the decision `allow_forever`.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict, cast

DecisionType = Literal["approve", "edit", "reject", "allow_forever"]
DECISION_TYPES: tuple[DecisionType, ...] = ("approve", "edit", "reject", "allow_forever")


class ActionRequest(TypedDict):
    """One tool call a person is asked about."""

    name: str
    args: dict[str, Any]
    description: NotRequired[str]


class ReviewConfig(TypedDict):
    """Which decisions the person may take on the action of the same name."""

    action_name: str
    allowed_decisions: list[DecisionType]


class HITLRequest(TypedDict):
    """The interrupt payload."""

    action_requests: list[ActionRequest]
    review_configs: list[ReviewConfig]


class EditedAction(TypedDict):
    """The replacement call of an `edit` decision."""

    name: str
    args: dict[str, Any]


class Decision(TypedDict):
    """A person's answer to one action request."""

    type: DecisionType
    message: NotRequired[str]
    edited_action: NotRequired[EditedAction]


class PasswordRequest(TypedDict):
    """The interrupt payload that asks for a sudo password (answered out of band)."""

    type: Literal["password"]
    call_id: str
    command: str
    prompt: str
    error: NotRequired[str]


def is_password_request(value: object) -> bool:
    """Whether an interrupt payload asks for a password rather than a decision."""
    return isinstance(value, dict) and value.get("type") == "password"


class DecisionError(ValueError):
    """Decisions that do not answer the request; the message says what is wrong."""


def build_request(items: list[tuple[ActionRequest, list[DecisionType]]]) -> HITLRequest:
    """The interrupt payload for `(request, allowed decisions)` pairs, in order."""
    return {
        "action_requests": [request for request, _ in items],
        "review_configs": [
            {"action_name": request["name"], "allowed_decisions": allowed}
            for request, allowed in items
        ],
    }


def parse_decisions(request: HITLRequest, response: object) -> list[Decision]:
    """Check `response` against `request` and return its decisions, in order.

    Raises:
        DecisionError: The response is not `{"decisions": [...]}`, has the wrong number
            of decisions, a decision type the request does not allow, or an `edit`
            without a well-formed `edited_action` for the same tool.
    """
    if not isinstance(response, dict) or not isinstance(response.get("decisions"), list):
        raise DecisionError('a resume value must be {"decisions": [...]}')
    decisions = response["decisions"]
    expected = len(request["action_requests"])
    if len(decisions) != expected:
        raise DecisionError(f"{expected} decision(s) expected, got {len(decisions)}")
    return [
        _parse_one(i, raw, action, review)
        for i, (raw, action, review) in enumerate(
            zip(decisions, request["action_requests"], request["review_configs"], strict=True)
        )
    ]


def _parse_one(index: int, raw: object, action: ActionRequest, review: ReviewConfig) -> Decision:
    where = f"decision {index + 1} ({action['name']})"
    if not isinstance(raw, dict):
        raise DecisionError(f"{where} must be an object with a 'type'")
    kind = raw.get("type")
    if kind not in review["allowed_decisions"]:
        allowed = ", ".join(review["allowed_decisions"])
        raise DecisionError(f"{where}: type {kind!r} is not one of {allowed}")
    decision: dict[str, Any] = {"type": kind}
    if kind == "reject" and raw.get("message") is not None:
        if not isinstance(raw["message"], str):
            raise DecisionError(f"{where}: message must be text")
        decision["message"] = raw["message"]
    if kind == "edit":
        edited = raw.get("edited_action")
        if not isinstance(edited, dict) or not isinstance(edited.get("args"), dict):
            raise DecisionError(f"{where}: edit needs edited_action with an args object")
        if edited.get("name", action["name"]) != action["name"]:
            raise DecisionError(f"{where}: an edit cannot change the tool")
        decision["edited_action"] = {"name": action["name"], "args": edited["args"]}
    return cast(Decision, decision)
