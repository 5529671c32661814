"""DuckLM: a local cognitive runtime over local OpenAI-compatible models.

The library surface: open a runtime (`DuckLM.open`), run or stream a message on a
thread, resume a paused run with decisions; `build_graph` for composing your own.

The names are imported on first use (PEP 562): `import ducklm.cli.main` must not load the
graph, LangChain or the embedding model, so that a CLI talking to a running server
starts in a fraction of a second.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ducklm.config.settings import Settings, SettingsError, load_settings
    from ducklm.graph.builder import build_graph
    from ducklm.graph.context import DuckContext
    from ducklm.graph.dependencies import open_dependencies
    from ducklm.graph.state import DuckState, InputState
    from ducklm.kit.events import EVENT_TYPES, Event, EventType, RunStatus
    from ducklm.kit.ids import new_thread_id
    from ducklm.runtime.facade import DuckLM, NotWaitingError, RunResult
    from ducklm.tools.hitl import Decision, DecisionError
    from ducklm.undo import UndoError, UndoRefused, UndoResult

# Each public name and the module that defines it.
_EXPORTS = {
    "DuckContext": "ducklm.graph.context",
    "open_dependencies": "ducklm.graph.dependencies",
    "EVENT_TYPES": "ducklm.kit.events",
    "Event": "ducklm.kit.events",
    "EventType": "ducklm.kit.events",
    "RunStatus": "ducklm.kit.events",
    "build_graph": "ducklm.graph.builder",
    "DuckState": "ducklm.graph.state",
    "InputState": "ducklm.graph.state",
    "DuckLM": "ducklm.runtime.facade",
    "NotWaitingError": "ducklm.runtime.facade",
    "RunResult": "ducklm.runtime.facade",
    "new_thread_id": "ducklm.kit.ids",
    "Settings": "ducklm.config.settings",
    "SettingsError": "ducklm.config.settings",
    "load_settings": "ducklm.config.settings",
    "Decision": "ducklm.tools.hitl",
    "DecisionError": "ducklm.tools.hitl",
    "UndoError": "ducklm.undo",
    "UndoRefused": "ducklm.undo",
    "UndoResult": "ducklm.undo",
}

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
    "UndoError",
    "UndoRefused",
    "UndoResult",
    "build_graph",
    "load_settings",
    "new_thread_id",
    "open_dependencies",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its module the first time it is asked for."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ducklm' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
