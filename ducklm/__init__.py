"""DuckLM: a local cognitive runtime over local OpenAI-compatible models.

The library surface: open a runtime (`DuckLM.open`), run or stream a message on a
thread, resume a paused run with decisions; `build_graph` for composing your own.
"""

from ducklm.context import DuckContext, open_dependencies
from ducklm.events import EVENT_TYPES, Event, EventType, RunStatus
from ducklm.graph.builder import build_graph
from ducklm.graph.state import DuckState, InputState
from ducklm.runtime import DuckLM, NotWaitingError, RunResult, new_thread_id
from ducklm.settings import Settings, SettingsError, load_settings
from ducklm.tools.hitl import Decision, DecisionError

__all__ = [
    "EVENT_TYPES",
    "Decision",
    "DecisionError",
    "DuckContext",
    "DuckLM",
    "DuckState",
    "Event",
    "EventType",
    "InputState",
    "NotWaitingError",
    "RunResult",
    "RunStatus",
    "Settings",
    "SettingsError",
    "build_graph",
    "load_settings",
    "new_thread_id",
    "open_dependencies",
]
