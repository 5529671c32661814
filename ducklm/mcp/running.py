"""What a server's tools, lists and questions need of the server: its shape, not its class.

`server.py:McpServer` holds the session and builds the tools (`tools.py`,
`resources.py`), which call back into it; `catalog.py`, `prompts.py`, `mentions.py` and
`completion.py` read its session too. They name the server by this protocol, so none of
them imports `server.py` and `server.py` imports them without a circle.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from ducklm.mcp.asks import CallAsks
from ducklm.mcp.config import ServerSpec
from ducklm.mcp.held import HeldCalls

if TYPE_CHECKING:
    from ducklm.mcp.session import DuckSession


class RunningServer(Protocol):
    """One configured server as its tools and lists use it (`McpServer`)."""

    spec: ServerSpec
    error: str | None
    media_dir: Path
    asking: list[CallAsks]
    held: HeldCalls

    @property
    def state(self) -> str:
        """`stopped`, `running`, `failed` or `crashed`."""
        ...

    @property
    def session(self) -> DuckSession | None:
        """The open session, while the server runs."""
        ...

    @property
    def timeout_s(self) -> float:
        """Seconds one call may take in all."""
        ...

    @property
    def idle_timeout_s(self) -> float:
        """Seconds one call may go without a progress notification."""
        ...

    def mark_crashed(self, why: str) -> Awaitable[str]:
        """Record that the server died; the crash in words."""
        ...


S_co = TypeVar("S_co", bound=RunningServer, covariant=True)


class ServerSet(Protocol[S_co]):
    """Every configured server (`servers.py:McpServers`)."""

    @property
    def servers(self) -> Sequence[S_co]:
        """The servers, in the file's order."""
        ...

    def ensure(self) -> Awaitable[object]:
        """Start (or restart) them all."""
        ...
