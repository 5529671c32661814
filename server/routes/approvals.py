"""Approvals: the questions waiting for a person, and the allow-forever rules."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, HTTPException, Response, status

from ducklm.server.deps import Duck, Hub
from ducklm.server.responses import PendingApproval, TaskStatusView, errors
from ducklm.server.schemas import Id, RowId
from ducklm.stores import ApprovalRule
from ducklm.tools.hitl import DecisionType, read_decisions

router = APIRouter(prefix="/approvals", tags=["approvals"])

# A one-click answer is a decision type that needs no more input. `allow_once` and
# `deny` are the page's first words, kept as aliases for clients that send them
# (docs/api.md); the web chat sends the decision types.
OneClick = Literal["approve", "allow_forever", "reject", "allow_once", "deny"]
_ALIASES: dict[str, DecisionType] = {"allow_once": "approve", "deny": "reject"}


@router.get("/pending")
async def pending(duck: Duck, hub: Hub) -> list[PendingApproval]:
    """Every approval question waiting for an answer, oldest first."""
    # A task the hub runs has been answered, though its row may not say so yet.
    waiting = [
        t
        for t in await duck.tasks(limit=500)
        if t.status == "interrupted" and hub.live(t.task_id) is None
    ]
    found = []
    for task in reversed(waiting):
        for item in await duck.pending(task):
            found.append(
                PendingApproval(
                    id=item["interrupt_id"],
                    kind="password" if item["type"] == "password_requested" else "approval",
                    task_id=task.task_id,
                    conversation_id=task.thread_id,
                    message=task.message,
                    request=item["request"],
                )
            )
    return found


@router.post("/{approval_id}/{answer}", responses=errors(404, 409))
async def answer(approval_id: Id, answer: OneClick, duck: Duck, hub: Hub) -> TaskStatusView:
    """Answer every action of one question the same way; the task runs on in the background."""
    for item in await pending(duck, hub):
        if item.id != approval_id:
            continue
        if item.kind == "password":
            raise HTTPException(
                status.HTTP_409_CONFLICT, "this question asks for a password, not an approval"
            )
        actions = item.request["action_requests"]
        kind = _ALIASES.get(answer, answer)
        decisions = read_decisions({"decisions": [{"type": kind} for _ in actions]})
        live = await hub.answer(item.task_id, decisions, interrupt_id=approval_id)
        return TaskStatusView(task_id=live.task_id, status="running")
    raise HTTPException(status.HTTP_404_NOT_FOUND, f"no pending approval with id {approval_id!r}")


@router.get("/rules")
async def rules(duck: Duck) -> list[ApprovalRule]:
    """The actions allowed forever."""
    return await duck.approval_rules()


@router.delete("/rules/{rule_id}", status_code=status.HTTP_204_NO_CONTENT, responses=errors(404))
async def revoke(rule_id: RowId, duck: Duck) -> Response:
    """Forget an allow-forever rule."""
    if not await duck.revoke_rule(rule_id):
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no rule with id {rule_id}")
    return Response(status_code=status.HTTP_204_NO_CONTENT)
