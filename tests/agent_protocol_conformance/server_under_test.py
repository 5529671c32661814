"""The server under test, as the suite sees it: an address and what to send it.

Nothing here knows which server it is. `targets.py` builds one for each server this
repository checks; `from_env` builds one for any other server.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Literal

Dialect = Literal["langgraph", "ducklm"]

ENV_URL = "AP_CONFORMANCE_URL"
ENV_TOKEN = "AP_CONFORMANCE_TOKEN"
ENV_NAME = "AP_CONFORMANCE_NAME"
ENV_ASSISTANT = "AP_CONFORMANCE_ASSISTANT"
ENV_APPROVE = "AP_CONFORMANCE_APPROVE"
ENV_CONTEXT = "AP_CONFORMANCE_CONTEXT"
ENV_DIALECT = "AP_CONFORMANCE_DIALECT"
ENV_TARGETS = "AP_CONFORMANCE_TARGETS"

DEFAULT_APPROVE: dict[str, Any] = {"decisions": [{"type": "approve"}]}
"""LangChain's human-in-the-loop answer that approves the one pending action."""


@dataclass(frozen=True)
class Target:
    """A running server and the conventions of the graph it serves.

    The suite's prompts follow one contract (see `README.md`): any message gets an
    answer, a message starting `overwrite ` stops at an interrupt that `approve` answers,
    a message starting `slowly ` streams its answer over a few seconds.
    """

    name: str
    """Which server: `reference`, `ducklm`, or what `AP_CONFORMANCE_NAME` says."""
    url: str
    """Base URL, e.g. `http://127.0.0.1:2024`."""
    headers: dict[str, str] = field(default_factory=dict)
    """Sent with every request (the bearer token, when the server wants one)."""
    assistant: str = "ducklm"
    """The graph id to run."""
    approve: Any = field(default_factory=lambda: dict(DEFAULT_APPROVE))
    """The `Command(resume=...)` value that approves the pending question."""
    context: dict[str, Any] | None = None
    """The `context` every run sends (None: none)."""
    dialect: Dialect = "langgraph"
    """Which documented differences apply (`test_documented_differences.py`)."""


def env_targets() -> list[str] | None:
    """The target names to run when chosen by environment, else None (the default pair)."""
    if os.environ.get(ENV_URL):
        return [os.environ.get(ENV_NAME, "custom")]
    named = os.environ.get(ENV_TARGETS, "")
    return [n.strip() for n in named.split(",") if n.strip()] or None


def from_env() -> Target | None:
    """The server `AP_CONFORMANCE_URL` names, or None when it is unset."""
    url = os.environ.get(ENV_URL)
    if not url:
        return None
    token = os.environ.get(ENV_TOKEN)
    dialect = os.environ.get(ENV_DIALECT, "langgraph")
    if dialect not in ("langgraph", "ducklm"):
        raise ValueError(f"{ENV_DIALECT} must be 'langgraph' or 'ducklm', not {dialect!r}")
    return Target(
        name=os.environ.get(ENV_NAME, "custom"),
        url=url.rstrip("/"),
        headers={"Authorization": f"Bearer {token}"} if token else {},
        assistant=os.environ.get(ENV_ASSISTANT, "ducklm"),
        approve=json.loads(os.environ.get(ENV_APPROVE, json.dumps(DEFAULT_APPROVE))),
        context=json.loads(os.environ[ENV_CONTEXT]) if os.environ.get(ENV_CONTEXT) else None,
        dialect="ducklm" if dialect == "ducklm" else "langgraph",
    )
