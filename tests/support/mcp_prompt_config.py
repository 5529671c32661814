"""The config of tests/support/mcp_prompt_server.py (prompts and resources) for the tests."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

PROMPT_SERVER = Path(__file__).resolve().parent / "mcp_prompt_server.py"


def prompt_server(*, trust: str = "untrusted") -> dict[str, Any]:
    """The server over stdio, as an `mcpServers` entry."""
    return {"command": sys.executable, "args": [str(PROMPT_SERVER)], "trust": trust}
