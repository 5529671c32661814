"""`chat` and `chat_status`: a DuckLM turn for another agent, and where it stands.

A turn runs in the hub like a `/v1/chat` run (recorded, audited, cancellable, one per
thread). When it stops at a question, the caller never answers it: under `ducklm serve`
the question waits for the person in the web chat, and the result says how to follow
it; with nobody to ask (`ducklm mcp serve` alone) the task is given up, nothing of it
having run, and the result says why.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from mcp.types import CallToolResult, TextContent

from ducklm.kit.events import QUESTION_EVENTS, Event
from ducklm.kit.workspaces import WorkspaceError, requested_workspace
from ducklm.server.busy import ThreadBusy
from ducklm.server.mcp_server.arguments import ChatArgs, ChatStatusArgs
from ducklm.server.mcp_server.door import McpDoor, ToolFailed
from ducklm.server.mcp_server.reporting import CallReport
from ducklm.server.tasks import LiveTask
from ducklm.stores import TaskRecord

WAITING = (
    "DuckLM is waiting for the person to answer in its web chat ({what}); nothing of it "
    "has run. Call chat_status with thread_id {thread!r} (wait_s up to 120) for the "
    "outcome, or read ducklm://conversations/{thread}."
)
REFUSED = (
    "DuckLM stopped: the turn needs the person ({what}), and nobody can answer through "
    "`ducklm mcp serve` on its own, since no `ducklm serve` runs on this data dir. Nothing "
    "of it ran and the task was given up. Start `ducklm serve` so such questions wait for "
    "the person in the web chat."
)
POLL_S = 0.5
"""How often `chat_status` looks whether the person has answered."""
FAILED = "DuckLM's turn {status}: {why}"
STEPS: dict[str, Callable[[Event], str]] = {
    "plan_created": lambda e: "planned {} steps".format(len(e["plan"].get("steps", []))),
    "plan_step_started": lambda e: f"step {e['index']}/{e['total']}: {e['goal']}",
    "tool_call_started": lambda e: f"running {e['tool']}",
    "approval_requested": lambda e: f"asking the person: {question_text(e)}",
    "password_requested": lambda e: "asking the person for the sudo password",
    "elicitation_requested": lambda e: "asking the person for input",
}


async def chat(door: McpDoor, args: ChatArgs, progress: CallReport) -> CallToolResult:
    """Run `args.message` as a new task; its answer, or why it has none yet."""
    try:
        workspace = await requested_workspace(door.duck.settings, args.workspace)
        live = await door.hub.start(
            args.message,
            thread_id=args.thread_id,
            workspace=workspace,
            critic=args.critic,
            memory=args.memory,
        )
    except (WorkspaceError, ThreadBusy) as exc:
        raise ToolFailed(str(exc)) from None
    try:
        await _follow(live, progress)
    except asyncio.CancelledError:
        # The caller cancelled its call (notifications/cancelled): the turn stops too.
        await asyncio.shield(door.hub.cancel(live.task_id))
        raise
    return await _ended(door, live)


async def chat_status(door: McpDoor, args: ChatStatusArgs) -> CallToolResult:
    """The conversation's latest task: running, waiting for the person, or its answer.

    With `wait_s`, waits that long at most for a running or waiting task to end.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.wait_s
    while True:
        task = await _latest(door, args.thread_id)
        live = door.hub.live_in(args.thread_id)
        left = deadline - loop.time()
        if left <= 0 or (live is None and task.status != "interrupted"):
            break
        if live is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(live.finished.wait(), left)
        else:  # the person has not answered yet: their answer starts a run
            await asyncio.sleep(min(POLL_S, left))
    if live is not None:
        return report(task.thread_id, task.task_id, "running", "DuckLM is still working on it.")
    if task.status == "interrupted":
        asked = await door.duck.pending(task)
        what = question_text(asked[0]) if asked else "a question"
        text = WAITING.format(what=what, thread=task.thread_id)
        return report(task.thread_id, task.task_id, "waiting", text)
    text = task.answer or task.error or f"the task ended {task.status}"
    return report(task.thread_id, task.task_id, task.status, text, error=task.status == "failed")


async def _latest(door: McpDoor, thread_id: str) -> TaskRecord:
    latest = await door.duck.tasks(thread_id, limit=1)
    if not latest:
        raise ToolFailed(f"no conversation with id {thread_id!r} has a task")
    return latest[0]


async def _follow(live: LiveTask, progress: CallReport) -> None:
    async for index, item in live.follow():
        step = STEPS.get(item["type"])
        if step is not None:
            await progress.step(index, step(item))
        elif item["type"] == "error":  # for people, never exception text (events.py)
            await progress.problem(item["message"], fatal=bool(item.get("fatal")))


async def _ended(door: McpDoor, live: LiveTask) -> CallToolResult:
    done = live.events[-1]
    status, answer = done.get("status", "failed"), str(done.get("answer") or "")
    thread, task = live.thread_id, live.task_id
    if status == "completed":
        return report(thread, task, status, answer)
    if status != "interrupted":
        why = next((e["message"] for e in live.events if e["type"] == "error"), "no answer")
        return report(thread, task, status, FAILED.format(status=status, why=why), error=True)
    asked = [e for e in live.events if e["type"] in QUESTION_EVENTS]
    what = question_text(asked[-1]) if asked else "a question"
    if door.questions == "person":
        return report(thread, task, "waiting", WAITING.format(what=what, thread=thread))
    await door.hub.cancel(task)  # gives the waiting task up: its question is never answered
    return report(thread, task, "refused", REFUSED.format(what=what), error=True)


def question_text(asked: Event) -> str:
    """What a question event asks, in a few words: the actions, or the kind of question."""
    if asked["type"] == "password_requested":
        return "the sudo password"
    request: dict[str, Any] = asked.get("request") or {}
    actions = request.get("action_requests") or []
    if not actions:
        return str(request.get("message") or "input for an MCP server")
    return "approval of " + "; ".join(str(a.get("description") or a.get("name")) for a in actions)


def report(
    thread_id: str, task_id: str, status: str, text: str, *, error: bool = False
) -> CallToolResult:
    """A tool result: `text` for the caller to read, the same facts as structured content."""
    facts = {"thread_id": thread_id, "task_id": task_id, "status": status, "text": text}
    shown = text if status == "completed" else f"[{status}] {text}"
    return CallToolResult(
        content=[TextContent(type="text", text=f"{shown}\n\n(thread_id: {thread_id})")],
        structured_content=facts,
        is_error=error,
    )
