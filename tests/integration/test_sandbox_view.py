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
from ducklm.tools.sandbox.landlock import abi_version
from ducklm.tools.sandbox.runner import ExecResult, Limits, run_sandboxed
from ducklm.tools.sandbox.view import View, bwrap_view, secret_files
from tests.support.scripted_llm import ScriptedLLM, call, reply

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is missing")
SECRET_NAMES = load_command_policy().secret_names


@dataclass(frozen=True)
class Canaries:
    workspace: Path
    data_inside: Path
    data_outside: Path
    outside_file: Path
    words: tuple[str, ...]


@pytest.fixture
def canaries(workspace: Path) -> Iterator[Canaries]:
    outside = Path("/var/tmp") / f"ducklm-view-{secrets.token_hex(6)}"
    outside.mkdir(parents=True)
    words = tuple(f"CANARY{i}{secrets.token_hex(8)}" for i in range(5))
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
    (workspace / "p.txt").write_text("plain\n")
    yield Canaries(workspace, data_inside, outside / "data", outside / "elsewhere.txt", words)
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


HOSTILE = [
    "cat .env",
    "f=.env; cat $f",
    "cat $(echo .env)",
    "cat .{e,}nv",
    "cat .e*",
    "cat ./.??v",
    "ln -s .env e.txt && cat e.txt",
    "cat notes.txt",
    "find . -name .env | xargs cat",
    "find . -name '*.pem' -exec cat {} +",
    "grep -r CANARY . ; grep -ra CANARY /",
    "sed '1r .env' p.txt",
    "sed -n p deep/er/server.pem",
    "tar -cf - . | tar -xOf -",
    "cp .env copy && cat copy",
    "python3 -c 'print(open(\".env\").read())'",
    "awk 1 .env deep/er/server.pem",
    "head -c 999 < .env",
    'while read l; do echo "$l"; done < .env',
    "base64 .env | base64 -d",
    "cat {data_inside}/api_token",
    "ls -la {data_inside}; cat {data_inside}/*",
    "cat {data_outside}/api_token",
    "cat {outside_file}",
    "cat /proc/1/root{outside_file}",
    "cat /proc/self/root{data_outside}/api_token",
    "cat /etc/shadow /etc/gshadow",
    "ls -la /root ~ /home /var /opt 2>&1; cat /root/.bash_history",
    "for p in /proc/[0-9]*; do cat $p/environ; done | tr '\\0' '\\n'",
    "cd / && grep -rl CANARY usr etc 2>/dev/null | head",
]


@pytest.mark.parametrize("command", HOSTILE)
async def test_no_canary_reaches_a_command(command: str, canaries: Canaries) -> None:
    places = {
        "{data_inside}": canaries.data_inside,
        "{data_outside}": canaries.data_outside,
        "{outside_file}": canaries.outside_file,
    }
    text = command
    for name, path in places.items():
        text = text.replace(name, str(path))
    result = await _run(text, canaries)
    assert result.protection == "bubblewrap"
    leaked = [word for word in canaries.words if word in result.output]
    assert leaked == [], result.output


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
