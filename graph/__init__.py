"""The cognitive cycle as a LangGraph `StateGraph`: state, routing, builder, Studio entry."""

from ducklm.graph.builder import build_graph
from ducklm.graph.state import DuckState, InputState

__all__ = ["DuckState", "InputState", "build_graph"]
