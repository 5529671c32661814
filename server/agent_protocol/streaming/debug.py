"""Stream mode `debug` as the LangGraph server sends it (`langgraph_api/stream.py`).

The graph's own `debug` chunks are `{"step", "timestamp", "type", "payload"}` with type
`checkpoint`, `task` or `task_result`. The server adds to each checkpoint payload its
`checkpoint` and `parent_checkpoint` (`{thread_id, checkpoint_ns, checkpoint_id,
checkpoint_map?}`, what the SDK's `Checkpoint` holds) beside the `config` and
`parent_config` it came with, and gives each of its tasks a `checkpoint` in place of a
subgraph's `state`. The chunk the run keeps is never changed: every follower maps it.
"""

from __future__ import annotations

from typing import Any

CHECKPOINT_KEYS = ("checkpoint_id", "thread_id", "checkpoint_ns", "checkpoint_map")


def debug_payload(chunk: Any) -> Any:
    """A `debug` chunk as the LangGraph server sends it (a checkpoint's payload completed)."""
    if not isinstance(chunk, dict) or chunk.get("type") != "checkpoint":
        return chunk
    payload = chunk.get("payload")
    if not isinstance(payload, dict):
        return chunk
    completed = {
        **payload,
        "checkpoint": checkpoint_of(payload.get("config")),
        "parent_checkpoint": checkpoint_of(payload.get("parent_config")),
        "tasks": [_task(task) for task in payload.get("tasks") or ()],
    }
    return {**chunk, "payload": completed}


def checkpoint_of(config: Any) -> dict[str, Any] | None:
    """The checkpoint a config points at, or `None` when it names no thread or checkpoint."""
    configurable = config.get("configurable") if isinstance(config, dict) else None
    if not configurable or not configurable.get("thread_id"):
        return None
    if not configurable.get("checkpoint_id"):
        return None
    found = {key: configurable[key] for key in CHECKPOINT_KEYS if key in configurable}
    if "checkpoint_ns" in found:
        found["checkpoint_ns"] = found["checkpoint_ns"] or ""
    return found


def _task(task: Any) -> Any:
    """A checkpoint's task: a subgraph's `state` (a config) becomes its `checkpoint`."""
    state = task.get("state") if isinstance(task, dict) else None
    if not isinstance(state, dict) or not state.get("configurable"):
        return task
    kept = {key: value for key, value in task.items() if key != "state"}
    return {**kept, "checkpoint": state["configurable"]}
