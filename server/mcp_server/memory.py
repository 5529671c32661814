"""`memory_search` and `memory_add`: DuckLM's long-term memory, as `/v1/memory` serves it."""

from __future__ import annotations

import json
from dataclasses import asdict

from mcp.types import CallToolResult, TextContent

from ducklm.kit.workspaces import WorkspaceError, resolve_workspace
from ducklm.memory import MemoryStore
from ducklm.server.mcp_server.arguments import MemoryAddArgs, MemorySearchArgs
from ducklm.server.mcp_server.door import McpDoor, ToolFailed

NO_MEMORY = "DuckLM has no memory store open (memory is off in its settings)"
HIT_FIELDS = ("id", "text", "scope", "workspace", "conversation_id", "memory_type")


async def memory_search(door: McpDoor, args: MemorySearchArgs) -> CallToolResult:
    """The memories that best match the query, for a workspace and conversation."""
    store = _store(door)
    workspace = await _workspace(door, args.workspace)
    result = await store.search(
        args.query, workspace=workspace, conversation_id=args.thread_id, k=args.k
    )
    hits = [
        {**{k: getattr(h.record, k) for k in HIT_FIELDS}, "score": round(h.score, 4)}
        for h in result.hits
    ]
    found = {"hits": hits, "degraded": result.degraded, "warning": result.warning}
    lines = [f"- {h['text']}  (id {h['id']}, {h['scope']})" for h in hits] or ["no memories"]
    if result.warning:
        lines.append(f"warning: {result.warning}")
    return CallToolResult(
        content=[TextContent(type="text", text="\n".join(lines))], structured_content=found
    )


async def memory_add(door: McpDoor, args: MemoryAddArgs) -> CallToolResult:
    """Store one memory as it is (the memory policy's rules are for what a model proposes)."""
    store = _store(door)
    try:
        record = await store.add(
            args.text,
            scope=args.scope,
            workspace=await _workspace(door, args.workspace),
            conversation_id=args.thread_id,
            memory_type=args.memory_type,
            importance=args.importance,
        )
    except ValueError as exc:  # messages written for people (ducklm/memory/intake.py)
        raise ToolFailed(str(exc)) from None
    stored = asdict(record)
    text = f"remembered ({record.scope}, id {record.id}): {record.text}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=json.loads(json.dumps(stored, default=str)),
    )


def _store(door: McpDoor) -> MemoryStore:
    if door.duck.context.memory is None:
        raise ToolFailed(NO_MEMORY)
    return door.duck.context.memory


async def _workspace(door: McpDoor, requested: str | None) -> str:
    try:
        return str(await resolve_workspace(door.duck.settings, requested))
    except WorkspaceError as exc:
        raise ToolFailed(str(exc)) from None
