"""The runs' numbers for Prometheus, read from the events they already emit.

Counted per process, from the runs this server starts (the web API, the Agent
Protocol, MCP turns; not the reviews behind answers). A step's time is the time from
the run's previous root step (or its start) to the update of the node(s) that made it:
for DuckLM's graph, where the root runs one node per step, that is the node's latency,
questions to the person excluded (a paused run ends at its question).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from ducklm.kit.events import QUESTION_EVENTS, Event

FIRST_TOKEN_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
NODE_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
MCP_STATES = ("stopped", "running", "failed", "crashed")


@dataclass
class _Live:
    """One run in flight: when it started, when its last step ended, its first token."""

    started: float
    last_step: float
    answered: bool = False


@dataclass
class RunMetrics:
    """A `RunObserver` that counts into its own registry (`registry`), one per app."""

    registry: CollectorRegistry = field(
        default_factory=lambda: CollectorRegistry(auto_describe=True)
    )
    _live: dict[str, _Live] = field(default_factory=dict)

    def __post_init__(self) -> None:
        r = self.registry
        self.runs = Counter("ducklm_runs", "Runs ended, by how they ended.", ["status"], registry=r)
        self.running = Gauge("ducklm_runs_running", "Runs going on in this process.", registry=r)
        self.queued = Gauge(
            "ducklm_queue_depth", "Agent Protocol runs waiting in the run queue.", registry=r
        )
        self.waiting = Gauge(
            "ducklm_questions_waiting", "Tasks waiting for the person's answer.", registry=r
        )
        self.asked = Counter(
            "ducklm_questions", "Questions put to the person, by kind.", ["kind"], registry=r
        )
        self.first_token = Histogram(
            "ducklm_time_to_first_token_seconds",
            "From a run's start to its answer's first token.",
            buckets=FIRST_TOKEN_BUCKETS,
            registry=r,
        )
        self.node = Histogram(
            "ducklm_node_seconds", "Time of each root step, by node.", ["node"],
            buckets=NODE_BUCKETS, registry=r,
        )  # fmt: skip
        self.model_calls = Counter(
            "ducklm_model_calls", "Answering model calls, by role.", ["role"], registry=r
        )
        self.tokens = Counter(
            "ducklm_model_tokens", "Tokens the model server counted, by role and direction.",
            ["role", "direction"], registry=r,
        )  # fmt: skip
        self.tools = Counter(
            "ducklm_tool_calls", "Tool calls ended, by tool, policy verdict and outcome.",
            ["tool", "verdict", "status"], registry=r,
        )  # fmt: skip
        self.mcp = Gauge(
            "ducklm_mcp_server_state", "1 for each MCP server's current state.",
            ["server", "state"], registry=r,
        )  # fmt: skip

    def saw(self, item: Event) -> None:
        """Count one event of a run (`RunObserver`)."""
        kind, run_id = item.get("type"), str(item.get("run_id") or "")
        if kind == "run_started":
            now = time.monotonic()
            self._live[run_id] = _Live(now, now)
            self.running.inc()
        elif kind == "token":
            self._first_token(run_id)
        elif kind == "done":
            self._ended(run_id, str(item.get("status") or "unknown"))
        elif kind == "tool_call_finished":
            labels = (str(item.get("tool")), str(item.get("verdict")), str(item.get("status")))
            self.tools.labels(*labels).inc()
        elif kind == "model_usage":
            self._usage(item)
        elif kind in QUESTION_EVENTS:
            self.asked.labels(str(kind).removesuffix("_requested")).inc()

    def stepped(self, run_id: str, nodes: Sequence[str]) -> None:
        """Time the root step that `nodes` ended (`RunObserver`)."""
        live = self._live.get(run_id)
        if live is None:
            return
        now = time.monotonic()
        for node in nodes:
            if not node.startswith("__"):  # `__interrupt__` is a question, not a node
                self.node.labels(node).observe(now - live.last_step)
        live.last_step = now

    def set_state(self, *, waiting: int, queued: int, mcp: Iterable[tuple[str, str]]) -> None:
        """The gauges read at scrape time: questions waiting, queue depth, MCP states."""
        self.waiting.set(waiting)
        self.queued.set(queued)
        self.mcp.clear()  # a server removed from the config leaves no stale series
        for name, state in mcp:
            for known in MCP_STATES:
                self.mcp.labels(name, known).set(1 if known == state else 0)

    def _first_token(self, run_id: str) -> None:
        live = self._live.get(run_id)
        if live is not None and not live.answered:
            live.answered = True
            self.first_token.observe(time.monotonic() - live.started)

    def _ended(self, run_id: str, status: str) -> None:
        self.runs.labels(status).inc()
        if self._live.pop(run_id, None) is not None:
            self.running.dec()

    def _usage(self, item: Event) -> None:
        role = str(item.get("role") or "unknown")
        self.model_calls.labels(role).inc()
        for direction in ("input", "output"):
            count = item.get(f"{direction}_tokens")
            if isinstance(count, int) and count > 0:
                self.tokens.labels(role, direction).inc(count)
