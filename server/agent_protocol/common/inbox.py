"""The earlier "agent inbox" interrupt shape, for the agent-chat-ui that npm installs.

npm's `create-agent-chat-app` (0.1.x) installs an agent-chat-ui that draws its approval
card only for LangGraph's earlier `HumanInterrupt` (`action_request`, `config` with
`allow_accept` / `allow_edit` / `allow_respond` / `allow_ignore`, `description`) and
answers with a list of `HumanResponse`s (`accept`, `edit`, `response`, `ignore`). Without
those keys it shows DuckLM's question as raw JSON with no buttons.

DuckLM's questions are in the HITL shape (`tools/hitl.py`), which today's
agent-chat-ui draws. This door writes the earlier keys beside the HITL ones when a
question is about one tool call (that UI answers one call at a time), and reads an
earlier-shape answer as HITL decisions; the graph only ever sees decisions.
"""

from __future__ import annotations

from typing import Any

ACCEPT, EDIT, RESPOND, IGNORE = "accept", "edit", "response", "ignore"
RESPONSES = frozenset({ACCEPT, EDIT, RESPOND, IGNORE})


def with_inbox_keys(value: Any) -> Any:
    """A HITL request about one call, with the agent-inbox keys added; anything else as is."""
    if not isinstance(value, dict):
        return value
    actions, reviews = value.get("action_requests"), value.get("review_configs")
    if not (isinstance(actions, list) and isinstance(reviews, list)):
        return value
    if len(actions) != 1 or len(reviews) != 1:
        return value
    [action], [review] = actions, reviews
    allowed = review.get("allowed_decisions") or []
    return {
        **value,
        "action_request": {"action": action.get("name"), "args": action.get("args") or {}},
        "config": {
            "allow_accept": "approve" in allowed,
            "allow_edit": "edit" in allowed,
            # Responding instead of running the call is a rejection with a reason.
            "allow_respond": "reject" in allowed,
            "allow_ignore": "reject" in allowed,
        },
        "description": action.get("description") or "",
    }


def as_decisions(resume: Any) -> Any:
    """An agent-inbox answer (`[{"type": "accept", ...}]`) as `{"decisions": [...]}`.

    Anything else (decisions, a password, a value the graph will refuse) is left as is.
    """
    if not (isinstance(resume, list) and resume and all(_is_response(r) for r in resume)):
        return resume
    return {"decisions": [_decision(r) for r in resume]}


def _is_response(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") in RESPONSES


def _decision(response: dict[str, Any]) -> dict[str, Any]:
    kind, args = response["type"], response.get("args")
    if kind == ACCEPT:
        return {"type": "approve"}
    if kind == EDIT:
        edited = args if isinstance(args, dict) else {}
        # The graph checks that `args` is an object and the tool is the one asked about.
        action: dict[str, Any] = {"args": edited.get("args")}
        if "action" in edited:
            action["name"] = edited["action"]
        return {"type": "edit", "edited_action": action}
    if kind == RESPOND and isinstance(args, str) and args.strip():
        return {"type": "reject", "message": args}
    return {"type": "reject"}
