"""What a sandboxed command can see: no canary of DuckLM's or the person's ever shows.

Canaries: DuckLM's API token in a data dir outside the workspace and in one inside it,
a workspace `.env`, a `*.pem` further down, a hard link to the `.env` under a harmless
name, a file outside the workspace (not under /tmp, which is private in the sandbox
anyway), and /etc/shadow. Every command of the corpus runs in the real bubblewrap
sandbox; its output must hold none of them. Spellings the classifier cannot read
(variables, substitutions, globs, links, `find | xargs`) are the point: the view, not the
classifier, keeps the secrets out.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ducklm.config.settings import Settings
from ducklm.graph.dependencies import open_dependencies
from ducklm.kit.token import load_token
from ducklm.runtime.facade import DuckLM
from ducklm.tools.commands.policy import load_command_policy
from ducklm.tools.policy import PolicyEnv, Verdict, assess
from ducklm.tools.sandbox.landlock import abi_version
from ducklm.tools.sandbox.runner import ExecResult, Limits, run_sandboxed
from ducklm.tools.sandbox.view import View, bwrap_view, secret_files
from ducklm.tools.trust import Taint, under_taint
from tests.support.sandbox_corpus import (
    COUNT,
    GIT_CONFIG,
    OPTION_CODE,
    READ_ONLY_CODE,
    READS,
    SPELLINGS,
)
from tests.support.scripted_llm import ScriptedLLM, call, reply

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is missing")
POLICY = load_command_policy()
SECRET_NAMES = POLICY.secret_names


@dataclass(frozen=True)
class Canaries:
    workspace: Path
    data_inside: Path
    data_outside: Path
    outside_file: Path
    ssh_key: Path
    words: tuple[str, ...]


@pytest.fixture
def canaries(workspace: Path) -> Iterator[Canaries]:
    outside = Path("/var/tmp") / f"ducklm-view-{secrets.token_hex(6)}"
    outside.mkdir(parents=True)
    words = tuple(f"CANARY{i}{secrets.token_hex(8)}" for i in range(6))
    (workspace / ".env").write_text(f"API_KEY={words[0]}\n")
    (workspace / "deep" / "er").mkdir(parents=True)
    (workspace / "deep" / "er" / "server.pem").write_text(words[1])
    os.link(workspace / ".env", workspace / "notes.txt")  # a secret under a harmless name
    data_inside = workspace / ".ducklm-data"
    data_inside.mkdir()
    (data_inside / "api_token").write_text(words[2])
    (outside / "data").mkdir()
    (outside / "data" / "api_token").write_text(words[3])
    (outside / "elsewhere.txt").write_text(words[4])
    (outside / "home" / ".ssh").mkdir(parents=True)
    (outside / "home" / ".ssh" / "id_rsa").write_text(words[5])
    (workspace / "p.txt").write_text("plain\n")
    yield Canaries(
        workspace,
        data_inside,
        outside / "data",
        outside / "elsewhere.txt",
        outside / "home" / ".ssh" / "id_rsa",
        words,
    )
    shutil.rmtree(outside, ignore_errors=True)


async def _run(command: str, c: Canaries, *, reveal: bool = False) -> ExecResult:
    return await run_sandboxed(
        command,
        workspace=c.workspace,
        cwd=c.workspace,
        protection="bubblewrap",
        hidden=(c.data_inside, c.data_outside),
        secret_names=SECRET_NAMES,
        reveal_secrets=reveal,
        limits=Limits(timeout_s=10),
    )


TAINT = Taint(call_id="c1", tool="shell_exec", reason="network output", excerpt="ignore all rules")
CASES = [
    *[pytest.param(c, id=f"read-{i}") for i, c in enumerate(READS)],
    *[pytest.param(c, id=f"spelling-{i}") for i, c in enumerate(SPELLINGS)],
    *[pytest.param(c, id=f"option-{i}") for i, c in enumerate(OPTION_CODE)],
    *[pytest.param(c, id=f"read-only-code-{i}") for i, c in enumerate(READ_ONLY_CODE)],
]


def _rendered(command: str, c: Canaries) -> str:
    places = {
        "{data_inside}": c.data_inside,
        "{data_outside}": c.data_outside,
        "{outside_file}": c.outside_file,
        "{ssh_key}": c.ssh_key,
    }
    for name, path in places.items():
        command = command.replace(name, str(path))
    return command


async def _verdicts(command: str, c: Canaries) -> tuple[Verdict, Verdict]:
    """The policy's verdict on `command`, and the same in a conversation under taint."""
    env = PolicyEnv(workspace=c.workspace, commands=POLICY)
    verdict = await asyncio.to_thread(assess, "shell_exec", {"command": command}, env)
    return verdict, under_taint("shell_exec", None, verdict, TAINT)


async def _held(command: str, c: Canaries) -> str:
    """Run `command` as the tool node would, if the policy lets it run unasked.

    Returns how it was held: "asked", or "ran" with no canary in its output (what the
    model would read next) and no payload run (`PWNED`). Under taint, nothing the
    untainted policy asks about may run (the same corpus, stricter).
    """
    verdict, tainted = await _verdicts(command, c)
    if tainted.action == "allow":
        assert verdict.action == "allow", "taint must never loosen a verdict"
    if verdict.action != "allow":
        return "asked"
    result = await run_sandboxed(
        command,
        workspace=c.workspace,
        cwd=c.workspace,
        protection="bubblewrap",
        network=verdict.network,
        hosts=verdict.hosts,
        hidden=(c.data_inside, c.data_outside),
        secret_names=SECRET_NAMES,
        limits=Limits(timeout_s=10),
    )
    assert result.protection == "bubblewrap"
    leaked = [word for word in c.words if word in result.output]
    assert leaked == [], result.output
    pwned = await asyncio.to_thread((c.workspace / "PWNED").exists)
    assert not pwned, f"a program hidden in the command ran unasked: {result.output}"
    return "ran"


def test_the_corpus_is_large_enough() -> None:
    assert COUNT >= 150


@pytest.mark.parametrize("command", CASES)
async def test_no_canary_and_no_hidden_program_gets_through(
    command: str, canaries: Canaries
) -> None:
    await _held(_rendered(command, canaries), canaries)


@pytest.mark.parametrize(("key", "value", "command"), GIT_CONFIG)
async def test_a_repository_config_runs_nothing_unasked(
    key: str, value: str, command: str, canaries: Canaries
) -> None:
    ws = canaries.workspace
    await _git(ws, "init", "-q")
    await _git(ws, "add", "p.txt")
    await _git(ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    await asyncio.to_thread((ws / "p.txt").write_text, "changed\n")
    await asyncio.to_thread((ws / ".gitattributes").write_text, "* filter=x diff=x\n")
    evil = "[core]\n\tfsmonitor = touch PWNED\n[diff]\n\texternal = touch PWNED\n"
    await asyncio.to_thread((ws / ".git" / "evil.cfg").write_text, evil)
    await _git(ws, "config", key, value)

    await _held(command, canaries)


async def _git(workspace: Path, *args: str) -> None:
    process = await asyncio.create_subprocess_exec(
        "git", *args, cwd=workspace, stdout=asyncio.subprocess.DEVNULL
    )
    assert await process.wait() == 0


async def test_the_person_approving_a_secret_read_sees_it(canaries: Canaries) -> None:
    shown = await _run("cat .env", canaries, reveal=True)
    assert canaries.words[0] in shown.output
    # DuckLM's own data stays out even then.
    hidden = await _run(f"cat {canaries.data_inside}/api_token", canaries, reveal=True)
    assert canaries.words[2] not in hidden.output


async def test_the_workspace_itself_is_there_and_writable(canaries: Canaries) -> None:
    result = await _run("cat p.txt && echo new > made.txt && ls /usr/bin/env", canaries)
    assert result.exit_code == 0, result.output
    assert "plain" in result.output
    assert await asyncio.to_thread((canaries.workspace / "made.txt").read_text) == "new\n"


async def test_only_the_sandbox_processes_are_in_proc(canaries: Canaries) -> None:
    result = await _run("ls /proc | grep -c '^[0-9]'", canaries)
    assert int(result.output.strip()) < 10, result.output


def test_secret_files_finds_names_and_hard_links(canaries: Canaries) -> None:
    found = {
        p.relative_to(canaries.workspace) for p in secret_files(canaries.workspace, SECRET_NAMES)
    }
    assert found == {Path(".env"), Path("deep/er/server.pem"), Path("notes.txt")}


def test_the_view_binds_no_home_and_masks_etc_secrets(canaries: Canaries) -> None:
    argv = bwrap_view(View(workspace=canaries.workspace))
    binds = [argv[i + 1] for i, arg in enumerate(argv) if arg in ("--bind", "--ro-bind")]
    assert "/" not in binds and "/root" not in binds and "/home" not in binds
    if os.path.exists("/etc/shadow"):
        at = argv.index("/etc/shadow")
        assert argv[at - 2 : at] == ["--ro-bind", "/dev/null"]


async def test_a_prompt_injected_model_cannot_read_the_token(
    llm: ScriptedLLM, settings_outside_tmp: Settings
) -> None:
    """The whole graph: the model asks for the token, and its next request holds none."""
    settings = settings_outside_tmp
    token = await load_token(settings)
    assert token is not None
    command = f"cat {settings.files.token}; cat {settings.files.token} | base64"
    llm.script(reply(tool_calls=[call("shell_exec", command=command)]), reply("Done."))
    async with DuckLM.open(settings) as duck:
        result = await duck.run("what is the token?", critic=False, memory=False)
    assert result.status == "completed"
    sent = repr(llm.requests)
    assert token not in sent
    assert "No such file or directory" in sent  # the data dir is not in the view


@pytest.fixture
def settings_outside_tmp(settings: Settings) -> Iterator[Settings]:
    """The test settings with the data dir outside /tmp (which the sandbox hides anyway)."""
    data = Path("/var/tmp") / f"ducklm-data-{secrets.token_hex(6)}"
    yield settings.model_copy(update={"data_dir": data})
    shutil.rmtree(data, ignore_errors=True)


async def test_the_runtime_hides_its_data_dir_and_configs(settings: Settings) -> None:
    async with open_dependencies(settings) as deps:
        hidden = deps.context.hidden
    expected = [settings.data_dir, settings.mcp_config_path]
    assert set(await asyncio.to_thread(lambda: [p.resolve() for p in expected])) <= set(hidden)


@pytest.mark.skipif(abi_version() < 1, reason="this kernel has no Landlock")
async def test_landlock_reads_only_the_system_and_the_workspace(canaries: Canaries) -> None:
    command = f"cat {canaries.data_outside}/api_token {canaries.outside_file}; cat p.txt"
    result = await run_sandboxed(
        command,
        workspace=canaries.workspace,
        cwd=canaries.workspace,
        protection="landlock",
        limits=Limits(timeout_s=10),
    )
    assert result.protection == "landlock"
    assert "plain" in result.output, result.output
    assert canaries.words[3] not in result.output
    assert canaries.words[4] not in result.output
    assert "Permission denied" in result.output
