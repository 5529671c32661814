"""What watches runs from outside: one observer sees every run's events and graph steps.

The runner hands each event it stamps, and each step of the graph's root (the nodes
that updated the state), to the `RunObserver` a door set on the facade
(`DuckLM.observer`); the server's metrics are one (`ducklm.server.observability`). It is
called on the run's path, between receiving an item and passing it on, so it must not
block or await, and it must never raise: a metric must not stop a run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ducklm.kit.events import Event


class RunObserver(Protocol):
    """Receives the runs' events and steps as they pass (cheap, synchronous, never raising)."""

    def saw(self, item: Event) -> None:
        """One stamped event of a run (with `run_id`, `thread_id` and `type`)."""

    def stepped(self, run_id: str, nodes: Sequence[str]) -> None:
        """The graph's root finished a step of run `run_id`: `nodes` updated the state."""
