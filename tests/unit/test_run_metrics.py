"""`RunMetrics` counts a run from its events and steps, into a registry of its own."""

from __future__ import annotations

from prometheus_client import generate_latest

from ducklm.server.observability.metrics import RunMetrics


def _value(metrics: RunMetrics, name: str, **labels: str) -> float:
    found = metrics.registry.get_sample_value(name, labels)
    return 0.0 if found is None else found


def _turn(metrics: RunMetrics, run_id: str) -> None:
    ids = {"run_id": run_id, "thread_id": "t"}
    metrics.saw({"type": "run_started", **ids})
    metrics.stepped(run_id, ["context"])
    metrics.saw({"type": "approval_requested", **ids})
    metrics.stepped(run_id, ["__interrupt__"])
    metrics.saw({"type": "tool_call_finished", "tool": "file_read", "verdict": "allow",
                 "status": "success", **ids})  # fmt: skip
    metrics.saw({"type": "token", "text": "a", **ids})
    metrics.saw({"type": "token", "text": "b", **ids})
    metrics.saw({"type": "model_usage", "role": "thinker", "input_tokens": 7,
                 "output_tokens": 2, **ids})  # fmt: skip
    metrics.stepped(run_id, ["thinker"])
    metrics.saw({"type": "done", "status": "completed", **ids})


def test_a_turn_is_counted_once_per_thing() -> None:
    metrics = RunMetrics()
    _turn(metrics, "r1")
    assert _value(metrics, "ducklm_runs_total", status="completed") == 1
    assert _value(metrics, "ducklm_runs_running") == 0
    assert _value(metrics, "ducklm_time_to_first_token_seconds_count") == 1  # not per token
    assert _value(metrics, "ducklm_node_seconds_count", node="context") == 1
    assert _value(metrics, "ducklm_node_seconds_count", node="thinker") == 1
    assert _value(metrics, "ducklm_node_seconds_count", node="__interrupt__") == 0
    assert _value(metrics, "ducklm_questions_total", kind="approval") == 1
    labels = {"tool": "file_read", "verdict": "allow", "status": "success"}
    assert _value(metrics, "ducklm_tool_calls_total", **labels) == 1
    assert _value(metrics, "ducklm_model_calls_total", role="thinker") == 1
    assert _value(metrics, "ducklm_model_tokens_total", role="thinker", direction="input") == 7
    assert _value(metrics, "ducklm_model_tokens_total", role="thinker", direction="output") == 2


def test_two_apps_count_apart() -> None:
    first, second = RunMetrics(), RunMetrics()
    _turn(first, "r1")
    assert _value(second, "ducklm_runs_total", status="completed") == 0
    assert b"ducklm_runs_total" in generate_latest(second.registry)


def test_an_end_without_a_start_leaves_running_alone() -> None:
    metrics = RunMetrics()
    metrics.saw({"type": "done", "status": "cancelled", "run_id": "elsewhere"})
    metrics.stepped("elsewhere", ["action"])
    assert _value(metrics, "ducklm_runs_running") == 0
    assert _value(metrics, "ducklm_runs_total", status="cancelled") == 1
    assert _value(metrics, "ducklm_node_seconds_count", node="action") == 0


def test_mcp_states_are_one_hot_and_forget_removed_servers() -> None:
    metrics = RunMetrics()
    metrics.set_state(waiting=2, queued=1, mcp=[("notes", "running"), ("old", "failed")])
    assert _value(metrics, "ducklm_mcp_server_state", server="notes", state="running") == 1
    assert _value(metrics, "ducklm_mcp_server_state", server="notes", state="failed") == 0
    metrics.set_state(waiting=0, queued=0, mcp=[("notes", "crashed")])
    assert (
        metrics.registry.get_sample_value(
            "ducklm_mcp_server_state", {"server": "old", "state": "failed"}
        )
        is None
    )
    assert _value(metrics, "ducklm_mcp_server_state", server="notes", state="crashed") == 1
    assert _value(metrics, "ducklm_questions_waiting") == 0
