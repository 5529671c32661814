"""The data dir's layout: every file and folder DuckLM keeps there, named once.

The data dir is private (0700, its files 0600: `ducklm.stores.private`) and holds what
DuckLM writes at run time. A module that needs one of these asks `Settings.files` for it
rather than joining a name of its own, so the layout is read in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class DataDir:
    """The files under one data dir (`DUCK_DATA_DIR`)."""

    root: Path

    def entries(self) -> tuple[Path, ...]:
        """Every file and folder of the layout, at the top of the data dir."""
        return tuple(getattr(self, name) for name in _ENTRIES)

    @property
    def database(self) -> Path:
        """SQLite file of DuckLM's own tables (runs, audit events, approval rules, memory)."""
        return self.root / "ducklm.sqlite"

    @property
    def checkpoints(self) -> Path:
        """SQLite file of LangGraph's checkpointer."""
        return self.root / "checkpoints.sqlite"

    @property
    def qdrant(self) -> Path:
        """Folder of the embedded Qdrant (used when `DUCK_QDRANT_URL` is unset)."""
        return self.root / "qdrant"

    @property
    def skill_proposals(self) -> Path:
        """Skills the critic proposes, waiting for `ducklm skills apply`."""
        return self.root / "skill_proposals"

    @property
    def undo(self) -> Path:
        """The undo repository: workspace snapshots before and after each change."""
        return self.root / "undo"

    @property
    def mcp_config(self) -> Path:
        """The MCP servers file, unless `DUCK_MCP_CONFIG` names another."""
        return self.root / "mcp.json"

    @property
    def mcp_logs(self) -> Path:
        """Folder of the MCP servers' stderr logs, one file per server."""
        return self.root / "mcp"

    @property
    def token(self) -> Path:
        """The API token created on first start (unless `DUCK_API_TOKEN` is set)."""
        return self.root / "api_token"

    @property
    def server(self) -> Path:
        """`server.json`: where the running `ducklm serve` listens, for the CLI."""
        return self.root / "server.json"

    @property
    def browser_sessions(self) -> Path:
        """`browser_sessions.json`: the web chat's logged-in browsers (digests, expiry)."""
        return self.root / "browser_sessions.json"

    @property
    def log(self) -> Path:
        """DuckLM's own log (rotated)."""
        return self.root / "ducklm.log"

    @property
    def llama_pid(self) -> Path:
        """The pid of the local model server DuckLM started."""
        return self.root / "llama.pid"

    @property
    def llama_log(self) -> Path:
        """The local model server's output."""
        return self.root / "llama.log"

    @property
    def llama_exit(self) -> Path:
        """How the last supervised local model server ended (`llama.exit.json`)."""
        return self.root / "llama.exit.json"


_ENTRIES = tuple(name for name, value in vars(DataDir).items() if isinstance(value, property))
