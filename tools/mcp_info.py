"""What DuckLM knows about an MCP tool besides its schema: its server, trust and hints.

Kept apart from the session code (and free of the `mcp` SDK) because the tool policy,
the events and the CLI read it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any

from langchain_core.tools import BaseTool

SEPARATOR = "__"
# OpenAI-style function names: the model sees `<server>__<tool>` within these limits.
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64
METADATA_KEY = "ducklm_mcp"

ProgressListener = Callable[[float, float | None, str | None], None]
progress_listener: ContextVar[ProgressListener | None] = ContextVar(
    "mcp_progress_listener", default=None
)
"""Set around an MCP tool's call to hear its progress: `(progress, total, message)`.

The tool step sets it to emit `tool_progress` events; the call reads it when it starts
(the SDK reports progress from its own task, where this context is not set).
"""


@dataclass(frozen=True)
class McpToolInfo:
    """One MCP tool as DuckLM sees it."""

    server: str
    tool: str
    """The tool's own name on its server."""
    name: str
    """The name the model sees: `<server>__<tool>`."""
    description: str
    trusted: bool
    """Its server is marked trusted in the config."""
    annotations: dict[str, Any] = field(default_factory=dict)
    """The server's hints (`readOnlyHint`, `destructiveHint`, `openWorldHint`, ...)."""

    @property
    def read_only(self) -> bool:
        """It says it only reads and does not reach the open world."""
        hints = self.annotations
        return hints.get("readOnlyHint") is True and hints.get("openWorldHint") is not True

    @property
    def destructive(self) -> bool:
        """Its server says it may destroy data (`destructiveHint: true`)."""
        return self.annotations.get("destructiveHint") is True

    def as_json(self) -> dict[str, Any]:
        """The fields `ducklm mcp tools --json` prints."""
        return {k: v for k, v in asdict(self).items() if k != "trusted"} | {
            "trust": "trusted" if self.trusted else "untrusted"
        }


def model_name(server: str, tool: str) -> str:
    """`<server>__<tool>`, with characters a function name cannot carry replaced."""
    return _UNSAFE.sub("_", f"{server}{SEPARATOR}{tool}")[:MAX_NAME]


def mcp_info(tool: BaseTool | None) -> McpToolInfo | None:
    """The MCP facts of `tool`, or `None` for DuckLM's own tools."""
    if tool is None or not tool.metadata:
        return None
    info = tool.metadata.get(METADATA_KEY)
    return info if isinstance(info, McpToolInfo) else None


def event_fields(tool: BaseTool | None) -> dict[str, str]:
    """`server` and `mcp_tool` for a tool call's events; nothing for DuckLM's own tools."""
    info = mcp_info(tool)
    return {} if info is None else {"server": info.server, "mcp_tool": info.tool}
