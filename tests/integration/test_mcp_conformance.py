"""The official MCP conformance suite's client scenarios, DuckLM's client under test.

`@modelcontextprotocol/conformance` (tests/mcp_conformance, with the Node >= 22 it needs)
starts a test server per scenario and runs tests/support/conformance_client.py against
it; a scenario passes when none of its checks fails. The scenarios DuckLM does not pass
yet are listed in `NOT_YET` and expected to fail strictly: a fix that makes one pass
fails this test until the entry goes, so the count below stays true.

Today DuckLM passes 5 of 26 (a bare client on the same `mcp` SDK passes 24): the rest
need OAuth (the `auth/*` scenarios), which DuckLM's client does not have.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.conformance import (
    ROOT,
    SUITE_TIMEOUT_S,
    failures,
    listed_scenarios,
    read_checks,
    require_suite,
    suite_command,
    suite_env,
)

CLIENT = ROOT / "tests" / "support" / "conformance_client.py"

PASSING = (
    "initialize",
    "tools_call",
    "sse-retry",
    "auth/resource-mismatch",
    "elicitation-sep1034-client-defaults",
)
NEEDS_OAUTH = tuple(
    f"auth/{name}"
    for name in (
        "metadata-default",
        "metadata-var1",
        "metadata-var2",
        "metadata-var3",
        "basic-cimd",
        "scope-from-www-authenticate",
        "scope-from-scopes-supported",
        "scope-omitted-when-undefined",
        "scope-step-up",
        "scope-retry-limit",
        "token-endpoint-auth-basic",
        "token-endpoint-auth-post",
        "token-endpoint-auth-none",
        "pre-registration",
        "2025-03-26-oauth-metadata-backcompat",
        "2025-03-26-oauth-endpoint-fallback",
        "offline-access-scope",
        "offline-access-not-supported",
        "client-credentials-jwt",
        "client-credentials-basic",
        "cross-app-access-complete-flow",
    )
)
NOT_YET = {name: "no OAuth in DuckLM's client" for name in NEEDS_OAUTH}


def run_scenario(scenario: str, out: Path) -> list[dict[str, object]]:
    """The checks of `scenario` run against DuckLM's client (blocking: a sync test)."""
    command = f"{sys.executable} {CLIENT}"
    arguments = ["--command", command, "--scenario", scenario, "--timeout", "60000"]
    subprocess.run(
        suite_command("client", *arguments, "-o", str(out)),
        cwd=ROOT,
        env=suite_env(),
        capture_output=True,
        timeout=SUITE_TIMEOUT_S,
        check=False,
    )
    return read_checks(out)


@pytest.mark.slow
@pytest.mark.parametrize("scenario", [*PASSING, *NOT_YET])
def test_client_scenario(scenario: str, tmp_path: Path) -> None:
    require_suite()
    failed = failures(run_scenario(scenario, tmp_path / "results"))
    if scenario in NOT_YET:
        assert failed, f"{scenario} passes now: take it out of NOT_YET"
        pytest.xfail(NOT_YET[scenario])
    assert not failed, json.dumps(failed, indent=1)[:4000]


def test_every_client_scenario_is_listed() -> None:
    require_suite()
    assert listed_scenarios("Client") == {*PASSING, *NOT_YET}
