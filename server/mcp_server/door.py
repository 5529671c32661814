"""What the MCP door works on: the runtime, the hub that owns its runs, who answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ducklm.runtime.facade import DuckLM
from ducklm.server.tasks import TaskHub

Questions = Literal["person", "refuse"]
"""Who answers a turn's question: the person in the web chat (`ducklm serve`), or
nobody (`ducklm mcp serve` alone), in which case the turn stops and the call says why."""


class ToolFailed(Exception):
    """A tool call that cannot be done; the message is for the calling agent (isError)."""


@dataclass(frozen=True)
class McpDoor:
    """The open runtime, its task hub, and who answers the questions its turns ask.

    The MCP caller is never the one who answers: an agent approving its own request
    would make every approval moot.
    """

    duck: DuckLM
    hub: TaskHub
    questions: Questions
