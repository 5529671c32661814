"""A repository whose config names programs: git in the sandbox never starts them.

The workspace's `.git/config` points core.fsmonitor, core.pager, diff.external and a
`pager.<cmd>` at a script that touches a marker file. Run on the host, git runs it
(the control); run through `run_sandboxed`, the command-line-level settings of
`tools/sandbox/git_config.py` win and the marker never appears. Keys with names the
repository chooses (filters, textconv, `!` aliases) cannot be overridden: the
classifier asks for those.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ducklm.tools.commands.policy import load_command_policy
from ducklm.tools.sandbox.runner import Limits, run_sandboxed

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is missing")

MARKERS = ("fsmonitor", "pager", "logpager", "external")


def _git(ws: Path, *args: str) -> None:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(ws),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    subprocess.run(["git", "-C", str(ws), *args], check=True, env=env, capture_output=True)


@pytest.fixture
def hostile_repo(workspace: Path) -> Path:
    script = workspace / "mark.sh"
    script.write_text('#!/bin/sh\ntouch "$(dirname "$0")/MARK.$1"\ncat >/dev/null\n')
    script.chmod(0o755)
    _git(workspace, "init", "-q")
    _git(
        workspace,
        "-c",
        "user.email=a@b",
        "-c",
        "user.name=a",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "0",
    )
    (workspace / "f.txt").write_text("one\n")
    _git(workspace, "add", "f.txt")
    _git(workspace, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "1")
    (workspace / "f.txt").write_text("two\n")
    _git(workspace, "config", "core.fsmonitor", f"{script} fsmonitor")
    _git(workspace, "config", "core.pager", f"{script} pager")
    _git(workspace, "config", "pager.log", f"{script} logpager")
    _git(workspace, "config", "diff.external", f"{script} external")
    return workspace


def _markers(ws: Path) -> list[str]:
    return sorted(p.name for p in ws.glob("MARK.*"))


def test_the_control_git_on_the_host_runs_the_scripts(hostile_repo: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(hostile_repo)}
    for args in (["status"], ["diff"]):
        subprocess.run(["git", *args], cwd=hostile_repo, env=env, capture_output=True, check=False)
    assert {"MARK.fsmonitor", "MARK.external"} <= set(_markers(hostile_repo))


@pytest.mark.parametrize(
    "command", ["git status", "git diff", "git log -p", "git -p log", "git show", "git log | cat"]
)
async def test_sandboxed_git_starts_none_of_them(hostile_repo: Path, command: str) -> None:
    if command == "git diff":
        # git diff runs diff.external, which no setting can switch off (an empty value
        # breaks git diff): the classifier asks for it (below); here the rest is checked
        await asyncio.to_thread(_git, hostile_repo, "config", "--unset", "diff.external")
    result = await run_sandboxed(
        command,
        workspace=hostile_repo,
        cwd=hostile_repo,
        protection="bubblewrap",
        limits=Limits(timeout_s=20),
    )
    assert result.exit_code == 0, result.output
    assert "two" in result.output or command != "git diff", result.output
    assert await asyncio.to_thread(_markers, hostile_repo) == [], result.output


async def test_the_classifier_asks_for_diff_external(hostile_repo: Path) -> None:
    policy = await asyncio.to_thread(load_command_policy)
    verdict = await asyncio.to_thread(policy.classify, "git diff", workspace=hostile_repo)
    assert verdict.action == "ask"
    assert "the repository's config sets diff.external, which git runs" in verdict.reasons


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("filter.x.clean", "touch MARK"),
        ("diff.x.textconv", "touch MARK"),
        ("alias.st", "!touch MARK"),
    ],
)
async def test_the_classifier_asks_for_keys_git_runs_by_name(
    workspace: Path, key: str, value: str
) -> None:
    await asyncio.to_thread(_git, workspace, "init", "-q")
    await asyncio.to_thread(_git, workspace, "config", key, value)
    policy = await asyncio.to_thread(load_command_policy)
    for command in ("git status", "git diff", "git log -p"):
        verdict = await asyncio.to_thread(policy.classify, command, workspace=workspace)
        assert verdict.action == "ask", command
        assert f"the repository's config sets {key.lower()}, which git runs" in [
            r.lower() for r in verdict.reasons
        ]


async def test_no_git_variable_of_ducklm_reaches_the_command(
    hostile_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", f"{hostile_repo / 'mark.sh'} outside")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor=sh -c id'")
    result = await run_sandboxed(
        "env | grep ^GIT_ | sort; git status --short",
        workspace=hostile_repo,
        cwd=hostile_repo,
        protection="bubblewrap",
        limits=Limits(timeout_s=20),
    )
    assert "GIT_EXTERNAL_DIFF" not in result.output
    assert "GIT_CONFIG_PARAMETERS" not in result.output
    assert "GIT_CONFIG_COUNT=" in result.output
    assert await asyncio.to_thread(_markers, hostile_repo) == []
