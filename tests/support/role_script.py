"""A scripted model that answers each role from its own queue.

JSON requests by schema name (plans, step checks, coder changes; the critic gets a fixed
review), the action role (its requests carry tools, or ask for an `action_directive`)
and the thinker (the rest) in order. Install it with `llm.set_responder(script)`.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from tests.support.scripted_llm import Reply, reply


class RoleScript:
    """Queues per role, and the system prompts the action role and the thinker saw."""

    def __init__(self) -> None:
        self.plans: deque[str] = deque()
        self.checks: deque[dict[str, Any]] = deque()
        self.code: deque[dict[str, str]] = deque()
        self.actions: deque[Reply] = deque()
        self.answers: deque[str] = deque()
        self.thinker_systems: list[str] = []
        self.action_systems: list[str] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        system = body["messages"][0]["content"]
        # The action role: tools in native mode, a directive schema in json tool mode.
        if "tools" in body or schema == "action_directive":
            self.action_systems.append(system)
            return self.actions.popleft()
        if schema is None:
            self.thinker_systems.append(system)
            return reply(self.answers.popleft())
        return reply(self._json(schema))

    def _json(self, schema: str) -> str:
        if schema == "Plan":
            return self.plans.popleft()
        if schema == "StepCheck":
            return json.dumps(self.checks.popleft())
        if schema == "code_change":
            return json.dumps(self.code.popleft())
        if schema == "Critique":
            return json.dumps({"score": 0.7, "summary": "fine"})
        raise AssertionError(f"unexpected JSON request {schema}")
