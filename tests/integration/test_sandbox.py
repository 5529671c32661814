"""The shell sandbox for real: bubblewrap, Landlock and plain runs, with proof on disk.

Every "cannot" is checked on the host after the run (the file is not there, the process
is gone), not only by the command's own error message.
"""

from __future__ import annotations

import asyncio
import os
import resource
import secrets
import shutil
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from ducklm.tools.sandbox.landlock import abi_version
from ducklm.tools.sandbox.runner import (
    ExecResult,
    Limits,
    Protection,
    detect_protection,
    run_sandboxed,
)
from tests.support.pids_cgroup import require_pids_cgroup

HAS_BWRAP = shutil.which("bwrap") is not None
HAS_LANDLOCK = abi_version() >= 1
needs_bwrap = pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap is not installed")
needs_landlock = pytest.mark.skipif(not HAS_LANDLOCK, reason="this kernel has no Landlock")
ALL_MODES = [
    pytest.param("bubblewrap", marks=needs_bwrap),
    pytest.param("landlock", marks=needs_landlock),
    pytest.param("none"),
]
QUICK = Limits(timeout_s=10)


async def run(
    command: str,
    workspace: Path,
    protection: Protection = "bubblewrap",
    *,
    limits: Limits = QUICK,
    network: bool = False,
    readonly: Sequence[Path] = (),
    stdin_data: bytes | None = None,
    unsandboxed: bool = False,
) -> ExecResult:
    return await run_sandboxed(
        command,
        workspace=workspace,
        cwd=workspace,
        protection=protection,
        network=network,
        readonly=readonly,
        limits=limits,
        stdin_data=stdin_data,
        unsandboxed=unsandboxed,
    )


def marker() -> tuple[str, str]:
    """A unique process name, and shell text that spells it without containing it.

    The shell's own command line holds the text, so only the processes renamed with
    `exec -a` match the name: the scan below finds exactly what the command left.
    """
    token = secrets.token_hex(6)
    return f"duckmark{token}", f'"duck""mark{token}"'


def _pids_named(name: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if name.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue  # exited while we looked
    return found


async def pids_named(name: str) -> list[int]:
    return await asyncio.to_thread(_pids_named, name)


async def seen_alive(name: str, within_s: float = 5.0) -> bool:
    """Poll until a process with this name shows up: proof the test is not vacuous."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if await pids_named(name):
            return True
        await asyncio.sleep(0.05)
    return False


async def exists(path: Path) -> bool:
    return await asyncio.to_thread(path.exists)


# --- detection ---------------------------------------------------------------------------


@needs_bwrap
async def test_detect_protection_finds_bubblewrap() -> None:
    assert await detect_protection() == "bubblewrap"


@needs_landlock
async def test_detect_protection_falls_back_to_landlock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # bubblewrap cannot be found
    assert await detect_protection() == "landlock"


# --- file system -------------------------------------------------------------------------


async def test_write_inside_the_workspace_lands_on_disk(workspace: Path) -> None:
    result = await run("mkdir -p sub && echo quack > sub/out.txt", workspace)

    assert result.exit_code == 0, result.output
    assert result.protection == "bubblewrap"
    assert await asyncio.to_thread((workspace / "sub" / "out.txt").read_text) == "quack\n"


@needs_bwrap
async def test_writes_outside_the_workspace_leave_nothing_on_disk(
    workspace: Path, tmp_path: Path
) -> None:
    beside = tmp_path / "outside.txt"
    in_root = Path("/root") / f"ducklm-sandbox-{secrets.token_hex(6)}"
    try:
        result = await run(f"echo x > {beside}; echo x > {in_root}; echo x > /etc/duck", workspace)
        assert not await exists(Path("/etc/duck"))
    finally:
        await asyncio.to_thread(in_root.unlink, missing_ok=True)
        await asyncio.to_thread(Path("/etc/duck").unlink, missing_ok=True)

    # tmp_path is under /tmp, which is a private tmpfs inside: the write "works" there
    # and vanishes. /etc is the real tree, read-only; /root is not in the view at all.
    assert not await exists(beside)
    assert not await exists(in_root)
    assert not await exists(Path("/etc/duck"))
    assert "/etc/duck: Read-only file system" in result.output, result.output
    assert f"{in_root}: No such file or directory" in result.output, result.output


@needs_bwrap
async def test_the_workspace_git_folder_is_read_only(workspace: Path) -> None:
    hooks = workspace / ".git" / "hooks"
    await asyncio.to_thread(hooks.mkdir, parents=True)
    await asyncio.to_thread((workspace / ".git" / "HEAD").write_text, "ref: refs/heads/main\n")

    result = await run(
        "touch .git/hooks/x; echo evil > .git/HEAD; rm -rf .git; mv .git gone; touch ok",
        workspace,
        readonly=[workspace / ".git"],
    )

    assert not await exists(hooks / "x")
    assert await asyncio.to_thread((workspace / ".git" / "HEAD").read_text) == (
        "ref: refs/heads/main\n"
    )
    assert await exists(workspace / "ok"), "the rest of the workspace stays writable"
    assert "Read-only file system" in result.output


@needs_bwrap
async def test_a_readonly_data_folder_inside_the_workspace_is_unchanged(workspace: Path) -> None:
    data = workspace / "data"
    await asyncio.to_thread(data.mkdir)
    await asyncio.to_thread((data / "state.db").write_bytes, b"precious")

    await run(
        "echo hacked > data/state.db; rm -f data/state.db; touch data/new",
        workspace,
        readonly=[data, workspace / "no-such-folder"],
    )

    assert await asyncio.to_thread((data / "state.db").read_bytes) == b"precious"
    assert not await exists(data / "new")


@needs_bwrap
async def test_tmp_inside_is_fresh_and_private(workspace: Path) -> None:
    name = f"ducklm-sandbox-{secrets.token_hex(6)}"
    host_file = Path("/tmp") / f"{name}-host"
    await asyncio.to_thread(host_file.write_text, "host")
    try:
        result = await run(
            f"test -e /tmp/{name}-host && echo SEES-HOST; echo in > /tmp/{name}-inside; echo ok",
            workspace,
        )
    finally:
        await asyncio.to_thread(host_file.unlink)

    assert result.output == "ok\n"
    assert not await exists(Path("/tmp") / f"{name}-inside")


PROFILES = (".bash_profile", ".bash_login", ".profile", ".bashrc", ".lesskey", ".gitconfig")


@pytest.mark.parametrize("protection", ALL_MODES[:2])
async def test_each_call_gets_a_fresh_empty_home_and_tmp(
    workspace: Path, protection: Protection
) -> None:
    """What one command writes in HOME or /tmp (profiles, lesskey, .gitconfig) is gone for
    the next; and a command's shell reads no profile file (`bash -c`, no BASH_ENV)."""
    plant = "; ".join(f'echo "touch $PWD/PWNED" > "$HOME/{name}"' for name in PROFILES)
    first = await run(f'{plant}; echo x > "${{TMPDIR:-/tmp}}/left"; ls -A "$HOME"', workspace,
                      protection)  # fmt: skip
    assert first.exit_code == 0 and ".bash_profile" in first.output, first.output

    second = await run(
        'ls -A "$HOME" "${TMPDIR:-/tmp}"; git config --global --list; echo done', workspace,
        protection,
    )  # fmt: skip
    assert second.output.strip().endswith("done"), second.output
    assert not any(name in second.output for name in (*PROFILES, "left")), second.output
    assert not await exists(workspace / "PWNED")


@needs_bwrap
async def test_the_sandbox_has_no_privilege_left(workspace: Path) -> None:
    """Even when DuckLM runs as root: no capabilities, no sysctls, no host sockets."""
    result = await run(
        "grep CapEff /proc/self/status; "
        # Writing back the current value: harmless if this ever succeeded.
        "v=$(cat /proc/sys/vm/swappiness); echo $v 2>&1 > /proc/sys/vm/swappiness; "
        "ls -A /run; echo end",
        workspace,
    )

    assert "CapEff:\t0000000000000000\n" in result.output
    assert "/proc/sys/vm/swappiness: Read-only file system" in result.output
    assert result.output.endswith("Read-only file system\nend\n"), "/run is empty"


@needs_landlock
async def test_landlock_confines_writes_to_the_workspace(workspace: Path, tmp_path: Path) -> None:
    beside = tmp_path / "outside.txt"
    result = await run(
        f'echo in > inside.txt; echo out > {beside}; f=$(mktemp) && echo tmp > "$f" && echo TMP-OK',
        workspace,
        protection="landlock",
    )

    assert result.protection == "landlock"
    assert await asyncio.to_thread((workspace / "inside.txt").read_text) == "in\n"
    assert not await exists(beside)
    assert "Permission denied" in result.output
    assert "TMP-OK" in result.output, "its private temp folder is writable"


async def test_unsandboxed_runs_plain_but_limited(workspace: Path) -> None:
    host_file = Path("/tmp") / f"ducklm-sandbox-{secrets.token_hex(6)}"
    await asyncio.to_thread(host_file.write_text, "host")
    try:
        result = await run(
            f"cat {host_file}; ulimit -t",
            workspace,
            unsandboxed=True,
            limits=Limits(timeout_s=10, cpu_s=7),
        )
    finally:
        await asyncio.to_thread(host_file.unlink)

    assert result.protection == "none"
    assert result.output == "host7\n", "the host's own /tmp, and the CPU limit set"


# --- processes ---------------------------------------------------------------------------


@pytest.mark.parametrize("protection", ALL_MODES)
async def test_timeout_kills_the_whole_tree(workspace: Path, protection: Protection) -> None:
    name, spelled = marker()
    command = f"(exec -a {spelled} sleep 300) & echo started; exec -a {spelled} sleep 30"
    running = asyncio.create_task(run(command, workspace, protection, limits=Limits(timeout_s=1.5)))

    assert await seen_alive(name)
    result = await running

    assert result.timed_out and result.exit_code is None
    assert 1.5 <= result.duration_s < 5
    assert result.output == "started\n", "output read before the kill is kept"
    assert await pids_named(name) == []


@pytest.mark.parametrize("protection", ALL_MODES)
async def test_nothing_is_left_running_after_a_normal_exit(
    workspace: Path, protection: Protection
) -> None:
    name, spelled = marker()
    command = (
        f"(exec -a {spelled} sleep 300 &); "
        f"(exec -a {spelled} sleep 301) & "
        f"until pgrep -f {spelled} >/dev/null; do sleep 0.05; done; echo done"
    )
    result = await run(command, workspace, protection)

    assert result.exit_code == 0 and result.output == "done\n"
    assert not result.timed_out
    assert await pids_named(name) == []


async def test_a_process_that_leaves_the_session_is_still_killed(workspace: Path) -> None:
    """Without a pid namespace only the cgroup finds a `setsid` escapee."""
    await require_pids_cgroup("without a pid namespace only a pids cgroup finds it")
    name, spelled = marker()
    command = f"setsid bash -c 'exec -a \"$0\" sleep 300' {spelled} & sleep 0.3; echo done"

    result = await run(command, workspace, "none")

    assert result.output == "done\n"
    assert await pids_named(name) == []


async def test_cancelling_the_call_kills_the_command(workspace: Path) -> None:
    name, spelled = marker()
    running = asyncio.create_task(run(f"exec -a {spelled} sleep 300", workspace))
    assert await seen_alive(name)

    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running

    assert await pids_named(name) == []


@pytest.fixture
async def process_cap() -> None:
    """Skip where nothing bounds a fork bomb: as root only a pids cgroup does."""
    if os.geteuid() != 0:
        return  # RLIMIT_NPROC binds everyone else
    await require_pids_cgroup("as root only a pids cgroup bounds processes")


BOMB = ":(){ :|:& };:"


@pytest.mark.slow
@pytest.mark.usefixtures("process_cap")
@pytest.mark.parametrize("protection", ALL_MODES)
async def test_a_fork_bomb_is_contained_and_killed_at_the_timeout(
    workspace: Path, protection: Protection
) -> None:
    name, _ = marker()  # every forked subshell carries the command text, so the name
    limits = Limits(timeout_s=3, processes=64, memory_bytes=256 << 20)
    # The shell stays alive, else the run ends (and the bomb is killed) at once.
    command = f": {name}; {BOMB}; sleep 30"
    running = asyncio.create_task(run(command, workspace, protection, limits=limits))

    peak = 0
    while not running.done():
        peak = max(peak, len(await pids_named(name)))
        # The machine still works: the host can start a process during the bomb.
        probe = await asyncio.create_subprocess_exec("true")
        assert await probe.wait() == 0
        await asyncio.sleep(0.1)
    result = await running

    assert result.timed_out
    assert "fork" in result.output and "unavailable" in result.output, "the cap was hit"
    assert 16 <= peak <= 64 + 2, peak  # + bwrap or the launcher, which hold the text too
    assert await pids_named(name) == []


@pytest.mark.usefixtures("process_cap")
@pytest.mark.parametrize("protection", ALL_MODES)
async def test_a_fork_bomb_dies_with_its_shell(workspace: Path, protection: Protection) -> None:
    name, _ = marker()
    limits = Limits(timeout_s=3, processes=64, memory_bytes=256 << 20)
    result = await run(f": {name}; {BOMB}", workspace, protection, limits=limits)

    assert not result.timed_out and result.duration_s < 2
    assert await pids_named(name) == []


# --- limits ------------------------------------------------------------------------------


@pytest.mark.parametrize("protection", ALL_MODES)
async def test_exit_codes_propagate(workspace: Path, protection: Protection) -> None:
    assert (await run("exit 7", workspace, protection)).exit_code == 7
    assert (await run("kill -KILL $$", workspace, protection)).exit_code == 128 + 9


async def test_the_file_size_limit_stops_a_big_write(workspace: Path) -> None:
    limits = Limits(timeout_s=10, file_size_bytes=1 << 20)
    result = await run("head -c 10M /dev/zero > big", workspace, limits=limits)

    assert result.exit_code == 128 + 25  # SIGXFSZ
    assert await asyncio.to_thread(lambda: (workspace / "big").stat().st_size) <= 1 << 20


async def test_the_cpu_limit_stops_a_busy_loop(workspace: Path) -> None:
    limits = Limits(timeout_s=10, cpu_s=1)
    result = await run("while :; do :; done", workspace, limits=limits)

    assert result.exit_code == 128 + 24  # SIGXCPU
    assert not result.timed_out and result.duration_s < 5


async def test_the_memory_limit_stops_a_big_allocation(workspace: Path) -> None:
    limits = Limits(timeout_s=10, memory_bytes=256 << 20)
    # The system's python3: the sandbox shows /usr, not a home's (pyenv) or a venv's.
    result = await run("python3 -c 'bytearray(512 << 20)'", workspace, limits=limits)

    assert result.exit_code != 0
    assert "MemoryError" in result.output


# --- output and stdin --------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("command", ["yes", "cat /dev/urandom | base64"])
async def test_an_output_flood_stays_bounded(workspace: Path, command: str) -> None:
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = await run(command, workspace, limits=Limits(timeout_s=2, output_bytes=64 << 10))
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before

    assert result.timed_out
    assert result.truncated and "bytes cut ...]" in result.output
    assert result.output_bytes > 10 << 20
    assert len(result.output.encode()) < (64 << 10) + 100
    assert grown_kib < 64 << 10, "the test process did not buffer the flood"


async def test_the_cut_keeps_head_and_tail(workspace: Path) -> None:
    command = "printf 'HEAD'; head -c 100000 /dev/zero | tr '\\0' a; printf 'TAIL'"
    result = await run(command, workspace, limits=Limits(timeout_s=10, output_bytes=1000))

    assert result.output_bytes == 100_008
    head, _, tail = result.output.partition("\n[... 99008 bytes cut ...]\n")
    assert head == "HEAD" + "a" * 496
    assert tail == "a" * 496 + "TAIL"


async def test_invalid_utf8_is_replaced(workspace: Path) -> None:
    result = await run("printf 'ok\\377\\n'", workspace)
    assert result.output == "ok\ufffd\n"


@pytest.mark.parametrize("protection", ALL_MODES)
async def test_stdin_is_closed_by_default(workspace: Path, protection: Protection) -> None:
    result = await run("cat; echo end", workspace, protection)

    assert result.output == "end\n"
    assert result.duration_s < 3


async def test_stdin_data_is_delivered(workspace: Path) -> None:
    small = await run("cat", workspace, stdin_data=b"hunter2\n")
    large = await run("wc -c", workspace, stdin_data=b"x" * (1 << 20))
    unread = await run("true", workspace, stdin_data=b"x" * (1 << 20))

    assert small.output == "hunter2\n"
    assert large.output.strip() == str(1 << 20)
    assert unread.exit_code == 0, "a command that ignores its input is not an error"


async def test_the_environment_is_minimal(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    result = await run("env | sort", workspace)

    names = {line.split("=", 1)[0] for line in result.output.splitlines()}
    assert "OPENAI_API_KEY" not in names
    assert {"PATH", "HOME", "LANG", "TERM"} <= names
    assert "HOME=/tmp\n" in result.output


# --- network -----------------------------------------------------------------------------


@pytest.fixture
async def loopback_server() -> AsyncIterator[tuple[int, list[str]]]:
    """A TCP server on 127.0.0.1 in the test process; records each connection."""
    seen: list[str] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append("connected")
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield port, seen


CONNECT = "exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED"


@pytest.mark.parametrize(
    "protection",
    [pytest.param("bubblewrap", marks=needs_bwrap), pytest.param("landlock", marks=needs_landlock)],
)
async def test_the_network_is_unreachable_without_approval(
    workspace: Path, loopback_server: tuple[int, list[str]], protection: Protection
) -> None:
    port, seen = loopback_server
    result = await run(CONNECT.format(port=port), workspace, protection)
    await asyncio.sleep(0.1)

    assert result.exit_code != 0
    assert "CONNECTED" not in result.output
    assert seen == []


@needs_bwrap
async def test_dns_fails_without_approval(workspace: Path) -> None:
    result = await run("getent hosts pypi.org", workspace)
    assert result.exit_code != 0
    assert result.output == ""


@pytest.mark.parametrize(
    "protection",
    [
        pytest.param("bubblewrap", marks=needs_bwrap),
        pytest.param(
            "landlock",
            marks=pytest.mark.skipif(abi_version() < 4, reason="no Landlock network rules"),
        ),
    ],
)
async def test_an_approved_command_never_reaches_loopback(
    workspace: Path, loopback_server: tuple[int, list[str]], protection: Protection
) -> None:
    """Its own network namespace (bubblewrap), or the proxy's port only (Landlock)."""
    port, seen = loopback_server
    result = await run(CONNECT.format(port=port), workspace, protection, network=True)
    await asyncio.sleep(0.1)

    assert "CONNECTED" not in result.output
    assert seen == []
