"""Approval requests and decisions in LangChain's human-in-the-loop shape.

agent-chat-ui and other LangGraph clients render exactly this shape, so the interrupt
payload follows it: `action_requests` and `review_configs`, answered with
`{"decisions": [...]}` in the same order. DuckLM adds the decision `allow_forever`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

DecisionType = Literal["approve", "edit", "reject", "allow_forever"]
DECISION_TYPES: tuple[DecisionType, ...] = ("approve", "edit", "reject", "allow_forever")


class ActionRequest(TypedDict):
    """One tool call a person is asked about."""

    name: str
    args: dict[str, Any]
    description: NotRequired[str]
    default_decision: NotRequired[DecisionType]
    """DuckLM's own: the decision a client offers first (`reject` when the call does not
    match the request, which its description says first)."""


class ReviewConfig(TypedDict):
    """Which decisions the person may take on the action of the same name."""

    action_name: str
    allowed_decisions: list[DecisionType]


class HITLRequest(TypedDict):
    """The interrupt payload."""

    action_requests: list[ActionRequest]
    review_configs: list[ReviewConfig]


class _Answer(BaseModel):
    # Unknown keys are refused: a typo in a decision is an error the person sees, not a
    # silent approve.
    model_config = ConfigDict(extra="forbid", frozen=True)


class EditedAction(_Answer):
    """The replacement call of an `edit` decision (the tool stays the one asked about)."""

    name: str | None = None
    args: dict[str, Any]


class Approve(_Answer):
    """Run the call as asked."""

    type: Literal["approve"] = "approve"


class AllowForever(_Answer):
    """Run it, and allow exactly this action from now on (a rule in DuckLM's tables)."""

    type: Literal["allow_forever"] = "allow_forever"


class Edit(_Answer):
    """Run the call with other arguments."""

    type: Literal["edit"] = "edit"
    edited_action: EditedAction


class Reject(_Answer):
    """Do not run it; `message` tells the model why."""

    type: Literal["reject"] = "reject"
    message: str | None = None


Decision = Annotated[Approve | AllowForever | Edit | Reject, Field(discriminator="type")]
"""A person's answer to one action request: parsed once, at the door it came through."""

_DECISIONS: TypeAdapter[list[Decision]] = TypeAdapter(list[Decision])


class Decisions(_Answer):
    """The answer to an approval question: one decision per action, in order."""

    decisions: list[Decision]

    def wire(self) -> dict[str, Any]:
        """The HITL resume value, as every LangGraph client sends it (no empty fields)."""
        return {"decisions": [d.model_dump(exclude_none=True) for d in self.decisions]}


class PasswordAnswer(_Answer):
    """The sudo password a question asked for (it goes to the vault, never a checkpoint)."""

    password: str = Field(min_length=1, repr=False)


class PasswordRefusal(_Answer):
    """No password: the command does not run."""

    cancel: Literal[True] = True


ElicitAction = Literal["accept", "decline", "cancel"]
FormValue = str | int | float | bool | list[str]
"""A value of an elicitation form's field: the spec allows only primitives (and enum lists)."""


class ElicitAnswer(_Answer):
    """The person's answer to a question an MCP server asked during a tool call.

    The MCP `ElicitResult` shape: `accept` with the form's `content`, `decline` (no), or
    `cancel` (dismissed without choosing). A sampling question (may DuckLM's model answer
    the server?) is answered the same way, without content.
    """

    action: ElicitAction
    content: dict[str, FormValue] | None = None

    @model_validator(mode="after")
    def _content_only_when_accepted(self) -> ElicitAnswer:
        if self.content is not None and self.action != "accept":
            raise ValueError(f"only accept carries content, not {self.action}")
        return self

    def wire(self) -> dict[str, Any]:
        """The resume value (the `ElicitResult` fields, no empty ones)."""
        return self.model_dump(exclude_none=True)


Answer = Decisions | PasswordAnswer | PasswordRefusal | ElicitAnswer
"""Every answer a person can give to the question a run is paused at."""


class ServerQuestion(TypedDict):
    """The interrupt payload for a question an MCP server asks during a tool call.

    `type` is `elicitation` (a form: `message` and `requested_schema`; or, with `mode`
    `url`, a link the person is asked to open: `message` and `url`, answered without
    content) or `sampling` (may DuckLM's model answer the server's `messages`?).
    """

    type: Literal["elicitation", "sampling"]
    call_id: str
    tool: str
    server: str
    message: str
    mode: NotRequired[Literal["form", "url"]]
    """An elicitation's mode; absent is `form`."""
    url: NotRequired[str]
    """A URL-mode elicitation's link (http or https): shown to the person, never opened."""
    requested_schema: NotRequired[dict[str, Any]]
    messages: NotRequired[list[dict[str, str]]]
    note: NotRequired[str]
    """What answering does (the call is made again with the answer)."""
    error: NotRequired[str]


def is_server_question(value: object) -> bool:
    """Whether an interrupt payload is a question from an MCP server (elicitation, sampling)."""
    return isinstance(value, dict) and value.get("type") in ("elicitation", "sampling")


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


def read_decisions(response: object) -> Decisions:
    """Read a resume value (`{"decisions": [...]}`) into typed decisions.

    Raises:
        DecisionError: The value is not `{"decisions": [...]}`, or a decision is not one
            of the decision types or is malformed (an `edit` without `edited_action`).
    """
    if isinstance(response, Decisions):
        return response
    if not isinstance(response, dict) or not isinstance(response.get("decisions"), list):
        raise DecisionError('a resume value must be {"decisions": [...]}')
    for index, raw in enumerate(response["decisions"]):
        _check_shape(index, raw)
    try:
        return Decisions(decisions=_DECISIONS.validate_python(response["decisions"]))
    except ValidationError as exc:
        raise DecisionError(_first_problem(exc)) from None


def check_decisions(request: HITLRequest, answer: Decisions) -> Decisions:
    """Check `answer` against the question it answers; the decisions, edits named.

    Raises:
        DecisionError: The wrong number of decisions, a decision type the request does
            not allow, or an `edit` of another tool.
    """
    expected = len(request["action_requests"])
    if len(answer.decisions) != expected:
        raise DecisionError(f"{expected} decision(s) expected, got {len(answer.decisions)}")
    checked: list[Decision] = []
    for index, (decision, action, review) in enumerate(
        zip(answer.decisions, request["action_requests"], request["review_configs"], strict=True)
    ):
        where = f"decision {index + 1} ({action['name']})"
        if decision.type not in review["allowed_decisions"]:
            allowed = ", ".join(review["allowed_decisions"])
            raise DecisionError(f"{where}: type {decision.type!r} is not one of {allowed}")
        if isinstance(decision, Edit):
            if decision.edited_action.name not in (None, action["name"]):
                raise DecisionError(f"{where}: an edit cannot change the tool")
            named = EditedAction(name=action["name"], args=decision.edited_action.args)
            checked.append(Edit(edited_action=named))
        else:
            checked.append(decision)
    return Decisions(decisions=checked)


def parse_decisions(request: HITLRequest, response: object) -> list[Decision]:
    """`read_decisions` then `check_decisions`: the graph's own reading of a resume value.

    A resume reaches the graph from DuckLM's doors (checked by `DuckLM.answer` already)
    or straight from a LangGraph server (`langgraph dev`, Studio), where nothing checked
    it: the tool step reads every answer this one way.

    Raises:
        DecisionError: As `read_decisions` and `check_decisions` say.
    """
    return check_decisions(request, read_decisions(response)).decisions


def _check_shape(index: int, raw: object) -> None:
    # The person's words for the two commonest mistakes, before pydantic's own.
    where = f"decision {index + 1}"
    if not isinstance(raw, dict):
        raise DecisionError(f"{where} must be an object with a 'type'")
    if raw.get("type") not in DECISION_TYPES:
        raise DecisionError(
            f"{where}: type {raw.get('type')!r} is not one of {', '.join(DECISION_TYPES)}"
        )
    if raw["type"] == "edit":
        edited = raw.get("edited_action")
        if not isinstance(edited, dict) or not isinstance(edited.get("args"), dict):
            raise DecisionError(f"{where}: edit needs edited_action with an args object")


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"] if not isinstance(part, str) or part)
    return f"decision {where}: {error['msg']}"
