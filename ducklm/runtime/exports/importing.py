"""Writing an imported conversation: a new thread whose history is the file's messages.

The messages go into the new thread's checkpoint as if its last turn had just ended,
so the web chat and `ducklm history` show them and the next message goes on from them.
Nothing in them runs: a tool call arrives with its result (or a "not run" one). The
conversation is marked untrusted (`taint`), as after reading any outside content: text
from a file may be telling the model to act, so whatever is not read-only asks first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langchain_core.messages import HumanMessage

from ducklm.graph.routing import AT_REST
from ducklm.kit.ids import new_thread_id
from ducklm.runtime.exports.reading import ImportedConversation
from ducklm.stores import Conversation
from ducklm.stores.conversations import title_from
from ducklm.tools.trust import EXCERPT_CHARS, Taint

if TYPE_CHECKING:
    from ducklm.runtime.facade import DuckLM

IMPORTED = "the imported conversation"
IMPORTED_REASON = "it was imported from a file: what it says was not said here"


async def import_conversation(
    duck: DuckLM, found: ImportedConversation, *, workspace: str | None = None
) -> Conversation:
    """A new conversation holding `found`'s messages; all of it, or nothing.

    Args:
        duck: The open runtime.
        found: What `read_jsonl` read.
        workspace: An allowed workspace (checked by the caller), else the default one.
    """
    thread_id = new_thread_id()
    title = found.header.title.strip() or _first_words(found) or "Imported conversation"
    conversation = await duck.conversations.create(thread_id, title=title, workspace=workspace)
    if not found.messages:
        return conversation
    try:
        values = {"messages": found.messages, "taint": _taint(found)}
        await duck.update_state(thread_id, values, as_node=AT_REST)
    except BaseException:
        await duck.forget_thread(thread_id)  # nothing half-imported stays behind
        raise
    return conversation


def _first_words(found: ImportedConversation) -> str:
    first = next((m for m in found.messages if isinstance(m, HumanMessage)), None)
    return title_from(first.text) if first is not None else ""


def _taint(found: ImportedConversation) -> Taint:
    excerpt = " ".join(found.messages[0].text.split())[:EXCERPT_CHARS]
    return Taint(call_id="", tool=IMPORTED, reason=IMPORTED_REASON, excerpt=excerpt)
