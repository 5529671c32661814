"""The official MCP conformance suite's client scenarios, DuckLM's client under test.

`@modelcontextprotocol/conformance` (tests/mcp_conformance, with the Node >= 22 it needs)
runs the two frozen requirement sets, 2025-11-25 and 2026-07-28, each at its own wire and
each with its scenarios at once: a test server per scenario, and
tests/support/conformance_client.py against it, DuckLM's client driven as a turn drives
it (`open_mcp`, `ducklm mcp login` when the turn says so, each call a graph node whose
questions are interrupts answered at the door); it agrees on 2026-07-28 with a current
server and falls back to 2025-11-25 with an older one. A
scenario passes when none of its checks fails. The scenarios DuckLM does not pass yet
are in `NOT_YET` and expected to fail strictly: a fix that makes one pass fails this test
until the entry goes, so the counts stay true. The sets' `not_scored` scenarios
(extensions, added after the release) run and are only reported by the suite.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
import pytest_asyncio

from tests.support.conformance import (
    ROOT,
    Check,
    checks_by_scenario,
    failures,
    require_suite,
    required_scenarios,
    suite_command,
    suite_env,
)

CLIENT = ROOT / "tests" / "support" / "conformance_client.py"
OLDER, CURRENT = "2025-11-25", "2026-07-28"
# A set starts its scenarios together, each a Python process of DuckLM's client (a
# scenario may take 120 s of them): on 2 cores shared with other work that is minutes.
SET_TIMEOUT_S = 900
NOT_YET: dict[str, dict[str, str]] = {OLDER: {}, CURRENT: {}}


@pytest.fixture(scope="module")
def installed() -> None:
    """The suite is installed (checked here, off any event loop: it reads the disk)."""
    require_suite()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def suite_runs(
    installed: None, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, list[Check]]]:
    """Both client requirement sets, one after the other (the suite runs a set's scenarios
    at once); each scenario's checks, by revision."""
    root = tmp_path_factory.mktemp("mcp-client-conformance")
    for revision in (OLDER, CURRENT):
        await _run_set(revision, root / revision)
    return {
        revision: await asyncio.to_thread(checks_by_scenario, root / revision)
        for revision in (OLDER, CURRENT)
    }


async def _run_set(revision: str, out: Path) -> None:
    command = f"{sys.executable} {CLIENT}"
    arguments = ["--command", command, "--requirements", revision, "--timeout", "120000"]
    suite = await asyncio.create_subprocess_exec(
        *suite_command("client", *arguments, "-o", str(out)),
        cwd=ROOT,
        env=suite_env(),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    # It exits 1 when a scenario fails; which ones is read from their checks.
    await asyncio.wait_for(suite.wait(), SET_TIMEOUT_S)


def _cases() -> list[object]:
    cases: list[object] = []
    for revision in (OLDER, CURRENT):
        for scenario in sorted(_required(revision)):
            why = NOT_YET[revision].get(scenario)
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            cases.append(pytest.param(revision, scenario, id=f"{revision}-{scenario}", marks=marks))
    return cases


def _required(revision: str) -> set[str]:
    try:
        return required_scenarios(revision, "client")
    except OSError:  # the suite is not installed: `installed` says so in each test
        return set()


@pytest.mark.slow
@pytest.mark.parametrize(("revision", "scenario"), _cases())
def test_client_scenario(
    revision: str, scenario: str, suite_runs: dict[str, dict[str, list[Check]]]
) -> None:
    checks = suite_runs[revision].get(scenario)
    assert checks is not None, f"the suite ran no {scenario!r} at {revision}"
    failed = failures(checks)
    assert not failed, json.dumps(failed, indent=1)[:4000]


@pytest.mark.parametrize("revision", [OLDER, CURRENT])
def test_the_sets_are_what_was_counted(installed: None, revision: str) -> None:
    required = required_scenarios(revision, "client")
    assert len(required) == {OLDER: 18, CURRENT: 32}[revision]
    assert set(NOT_YET[revision]) <= required
