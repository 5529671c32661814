"""Search over conversations for people: their titles and everything said in them.

What was said comes from the episodes store (`ducklm.memory.episodes`: every user and
assistant message, indexed behind each turn), so the web chat's search box, the Memory
page, `GET /v1/search` and `ducklm search` find what `search_conversations` (the
model's tool) finds. Each message hit names its conversation and the message's id, so a
door can open the conversation at that message. Titles are matched as text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ducklm.memory.records import MemoryHit
from ducklm.memory.store import MemoryStore
from ducklm.stores import Conversation, Conversations

MESSAGE_FLOOR = 0.35
"""A message that shares no word with the query is shown only at this score or more (the
floor recall reads for episodes): the vector search always returns *something*."""
SNIPPET_CHARS = 200
CONVERSATIONS_SEARCHED = 10_000

HitKind = Literal["title", "message"]


@dataclass(frozen=True)
class ConversationHit:
    """One place a query was found: a conversation's title or one of its messages."""

    conversation_id: str
    title: str
    kind: HitKind
    snippet: str
    """The title, or the message's text around the first query word (whitespace folded)."""
    score: float
    """0..1; a title match counts 1."""
    message_id: str | None = None
    """The matching message's id in the conversation's checkpointed messages."""
    speaker: str | None = None
    """`user` or `assistant` for a message."""
    said_at: float | None = None


@dataclass(frozen=True)
class ConversationSearch:
    """Hits, best first, and whether the message search fell back to keywords."""

    hits: list[ConversationHit]
    warning: str | None = None


async def search_conversations(
    query: str,
    conversations: Conversations,
    episodes: MemoryStore | None,
    *,
    default_workspace: str,
    k: int = 20,
) -> ConversationSearch:
    """Conversations whose title holds `query`, then the messages that match it best.

    Every workspace a conversation runs in is searched (episodes are kept per
    workspace); deleted conversations have no episodes left.
    """
    listed = await conversations.list(limit=CONVERSATIONS_SEARCHED)
    by_id = {c.id: c for c in listed}
    titles = [_title_hit(c) for c in listed if _in_title(query, c.title)]
    messages: list[ConversationHit] = []
    warning = None
    if episodes is not None:
        for workspace in _workspaces(listed, default_workspace):
            found = await episodes.search(query, workspace=workspace, k=k)
            warning = warning or found.warning
            messages += [_message_hit(h, by_id, query) for h in found.hits if _relevant(h)]
    messages.sort(key=lambda h: h.score, reverse=True)
    return ConversationSearch((titles + messages)[:k], warning)


def _workspaces(listed: Iterable[Conversation], default: str) -> list[str]:
    return sorted({default} | {c.workspace for c in listed if c.workspace})


def _in_title(query: str, title: str) -> bool:
    return query.strip().casefold() in title.casefold()


def _relevant(hit: MemoryHit) -> bool:
    return bool(hit.keyword_score) or hit.score >= MESSAGE_FLOOR


def _title_hit(conversation: Conversation) -> ConversationHit:
    return ConversationHit(conversation.id, conversation.title, "title", conversation.title, 1.0)


def _message_hit(hit: MemoryHit, by_id: dict[str, Conversation], query: str) -> ConversationHit:
    record = hit.record
    conversation_id = record.conversation_id or ""
    known = by_id.get(conversation_id)
    return ConversationHit(
        conversation_id,
        known.title if known else "",
        "message",
        snippet(record.text, query.split()),
        round(hit.score, 4),
        message_id=str(record.metadata.get("message_id") or "") or None,
        speaker=record.memory_type,
        said_at=record.created_at,
    )


def snippet(text: str, words: Sequence[str], width: int = SNIPPET_CHARS) -> str:
    """`text` folded to one line, cut to `width` around the first of `words` it holds."""
    line = " ".join(text.split())
    if len(line) <= width:
        return line
    folded = line.casefold()
    found = [i for w in words if (i := folded.find(w.casefold())) >= 0]
    start = max(0, min(found, default=0) - width // 3)
    end = min(len(line), start + width)
    head = "… " if start else ""
    tail = " …" if end < len(line) else ""
    return f"{head}{line[start:end].strip()}{tail}"
