"""`search_conversations`: find what was said in earlier conversations of the workspace.

The episodes store (`ducklm.memory.episodes`) holds every user and assistant message
with its time; this tool is the action role's way in. The store and the asking
conversation come from the run's context (`get_runtime`), never from the model.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from langchain_core.tools import InjectedToolArg, tool
from langgraph.runtime import Runtime, get_runtime

from ducklm.memory.dates import Window, phrase_window, said_on
from ducklm.memory.records import MemoryHit
from ducklm.tools.errors import ToolError

if TYPE_CHECKING:  # the context module imports the tool registry, which imports this
    from ducklm.graph.context import DuckContext

MAX_RESULTS = 5
RESULT_CHARS = 400
NO_EPISODES = "conversation search is not available: no episode store is open"
NOTHING_FOUND = "nothing said in any conversation of this workspace matches {query!r}{when}"
RESULT_LINE = "{n}. [{said_on}] {speaker} (conversation {conversation}): {text}"
BAD_DATE = "{name}: {problem}"


@tool(parse_docstring=True)
async def search_conversations(  # noqa: D417  workspace is injected, not the model's
    query: str,
    workspace: Annotated[Path, InjectedToolArg],
    since: str = "",
    until: str = "",
) -> str:
    """Search what the user and you said in past conversations.

    Args:
        query: What to look for.
        since: From this date on, e.g. "2026-05-01" or "last week".
        until: Up to this date, that day included.
    """
    runtime: Runtime[DuckContext] = get_runtime()
    store = runtime.context.episodes
    if store is None:
        raise ToolError(NO_EPISODES)
    # dateparser reads time zone files the first time: off the event loop
    start, end = await asyncio.to_thread(lambda: (_bound("since", since), _bound("until", until)))
    found = await store.search(
        query,
        workspace=str(workspace),
        conversation_id=runtime.execution_info.thread_id if runtime.execution_info else None,
        k=MAX_RESULTS,
        since=start.since if start else None,
        until=end.until if end else None,
    )
    if not found.hits:
        when = "".join(f" {n} {v}" for n, v in (("since", since), ("until", until)) if v)
        return NOTHING_FOUND.format(query=query, when=when)
    return "\n".join(_line(n, hit) for n, hit in enumerate(found.hits, start=1))


def _bound(name: str, value: str) -> Window | None:
    if not value.strip():
        return None
    try:
        return phrase_window(value)
    except ValueError as exc:
        raise ToolError(BAD_DATE.format(name=name, problem=exc)) from exc


def _line(n: int, hit: MemoryHit) -> str:
    record = hit.record
    text = " ".join(record.text.split())
    if len(text) > RESULT_CHARS:
        text = text[:RESULT_CHARS].rstrip() + " ..."
    return RESULT_LINE.format(
        n=n,
        said_on=said_on(record.created_at).removeprefix("said on "),
        speaker=record.memory_type,
        conversation=record.conversation_id,
        text=text,
    )
