"""recall: find memories relevant to the request.

Runs beside the context node, in the same superstep (one checkpoint for both), so it
reads the request from the messages itself rather than from `task`.

Hybrid search gets candidates; when there are more than a few, the recall role picks
the relevant ones, shown to it numbered from 1. If the role fails, the top candidates
above a score threshold are kept. A degraded search (Qdrant down: keyword only) is a
warning event, never a failed run.

Beside the facts it searches the episodes (what was said in the workspace's other
conversations; this one's are in the history), with a budget of its own: the best
`EPISODES` above `EPISODE_MIN_SCORE`, never shown to the recall role. A request that
names a time ("last week", "in May") searches within it first, and everywhere when
nothing was said then. While the embedding model is still loading (`ducklm serve` warms
it up in the background) the turn goes on without recall, and says so (`recall_skipped`).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel

from ducklm.graph.state import DuckState
from ducklm.kit.events import emit
from ducklm.memory import MemoryHit, MemoryStore, SearchResult
from ducklm.memory.dates import Window, find_window_async
from ducklm.memory.warmup import STILL_LOADING
from ducklm.nodes.route import rules_route
from ducklm.turn.prompting.recalled import SPEAKERS
from ducklm.turn.prompting.structured import ask_validated, system_prompt, with_system
from ducklm.turn.prompting.transcript import latest_request

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

log = logging.getLogger(__name__)

CANDIDATES = 8
"""How many memories hybrid search proposes."""
FEW = 3
"""Up to this many candidates are kept without asking the recall role."""
FALLBACK_MIN_SCORE = 0.3
"""Without the recall role, candidates scoring below this are dropped."""
EPISODES = 3
"""At most this many episodes join the facts."""
EPISODE_MIN_SCORE = 0.35
"""Episodes scoring below this are left out: unrelated chat only costs a small model."""
PICK_REQUEST = "Request: {request}\n\nMemories:\n{memories}\n\nWhich memories help? Numbers only."


class RecallPick(BaseModel):
    """The recall role's answer: the numbers (from 1) of the relevant memories."""

    relevant: list[int]


async def recall_memories(state: DuckState, runtime: Runtime[DuckContext]) -> dict[str, Any]:
    """Search memory for the latest request and keep what helps."""
    ctx = runtime.context
    request = latest_request(state.messages)
    wanted = rules_route(state, ctx).recall  # the router's rules (it runs beside this node)
    if ctx.memory is None or not request.strip() or not wanted:
        return {"recalled": []} if state.recalled else {}
    if ctx.embeddings.loading:  # a person waits for this turn; the model may take 40 s
        emit(runtime, "recall_skipped", reason=STILL_LOADING)
        return {"recalled": []} if state.recalled else {}
    thread_id = runtime.execution_info.thread_id if runtime.execution_info else None
    where = Where(state.workspace or str(ctx.settings.workspace), thread_id)
    window = await find_window_async(request)
    result = await _search(ctx.memory, request, where, window, k=CANDIDATES)
    if result.degraded:
        emit(runtime, "error", stage="recall", fatal=False, message=result.warning or "")
    hits = result.hits if len(result.hits) <= FEW else await _pick(ctx, request, result.hits)
    said = await _episodes(ctx.episodes, request, where, window)
    return {"recalled": [_recalled(hit) for hit in hits] + [_recalled(hit) for hit in said]}


@dataclass(frozen=True)
class Where:
    """The request's workspace and conversation."""

    workspace: str
    conversation_id: str | None


async def _search(
    store: MemoryStore,
    request: str,
    where: Where,
    window: Window | None,
    *,
    k: int,
    others_only: bool = False,
) -> SearchResult:
    """Search within `window` first; everywhere when nothing was said then."""
    search = functools.partial(
        store.search,
        request,
        workspace=where.workspace,
        conversation_id=where.conversation_id,
        k=k,
        others_only=others_only,
    )
    if window is not None:
        within = await search(since=window.since, until=window.until)
        if within.hits:
            return within
    return await search()


async def _episodes(
    store: MemoryStore | None, request: str, where: Where, window: Window | None
) -> list[MemoryHit]:
    if store is None or not store.has_records:
        return []
    found = await _search(store, request, where, window, k=EPISODES, others_only=True)
    return [hit for hit in found.hits if hit.score >= EPISODE_MIN_SCORE]


async def _pick(ctx: DuckContext, request: str, hits: list[MemoryHit]) -> list[MemoryHit]:
    numbered = "\n".join(f"{i}. {hit.record.text}" for i, hit in enumerate(hits, start=1))
    system = system_prompt(ctx, "recall", RecallPick.model_json_schema())
    question = HumanMessage(PICK_REQUEST.format(request=request, memories=numbered))
    try:
        pick = await ask_validated(ctx, "recall", RecallPick, with_system(system, [question]))
    except Exception:  # recall is a help, not a requirement: fall back to the scores
        log.warning("recall role failed; keeping the best-scored memories", exc_info=True)
        return [h for h in hits if h.score >= FALLBACK_MIN_SCORE][:FEW]
    return [hits[n - 1] for n in dict.fromkeys(pick.relevant) if 1 <= n <= len(hits)]


def _recalled(hit: MemoryHit) -> dict[str, Any]:
    record = hit.record
    item = {"id": record.id, "text": record.text, "scope": record.scope, "score": hit.score}
    item["said_at"] = record.created_at
    if record.memory_type in SPEAKERS and record.metadata.get("message_id"):
        item.update(kind="episode", speaker=record.memory_type, conversation=record.conversation_id)
    return item
