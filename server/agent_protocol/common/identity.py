"""The one assistant's names: the graph `ducklm`, its UUID, and the aliases runs accept.

The assistant id is derived from the graph id the way the LangGraph server derives its
system assistants' ids, so DuckLM's server and `langgraph dev` name the same assistant.
"""

from __future__ import annotations

import uuid

GRAPH_ID = "ducklm"
# agent-chat-ui's default assistant id: accepted as another name of the one graph.
ALIASES = frozenset({GRAPH_ID, "agent"})
# langgraph_api.graph.NAMESPACE_GRAPH: system assistant id = uuid5(namespace, graph_id).
NAMESPACE_GRAPH = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")
ASSISTANT_ID = str(uuid.uuid5(NAMESPACE_GRAPH, GRAPH_ID))


def is_assistant(assistant_id: str) -> bool:
    """Whether runs may name `assistant_id`: the assistant's UUID, the graph id or an alias."""
    return assistant_id.lower() == ASSISTANT_ID or assistant_id.lower() in ALIASES
