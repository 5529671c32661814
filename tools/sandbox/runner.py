"""Run one shell command in a sandbox, with limits, and leave nothing running behind it.

Three protections, strongest first:

- "bubblewrap": new user, mount, pid, network, ipc, uts and cgroup namespaces. The whole file system
  is read-only except the workspace; `/tmp` and `/run` are fresh and private; there is
  no network, and a command a person approved for it reaches only the approved hosts,
  through the egress proxy (`egress.py`). When the command's top process exits,
  the pid namespace takes every background child with it.
- "landlock": for machines where bubblewrap cannot start. A launcher (landlock.py)
  confines itself, then becomes the shell: read and execute the system and the
  workspace, write in the workspace and a private temp folder, TCP denied but for the
  egress proxy's port when a person approved the network.
- "none": a plain shell in the workspace; the caller has asked a person first.

In every mode the command runs under resource limits, in its own session, with a
minimal environment; the whole tree is killed at the timeout, and after the command
exits anything it left running is killed too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ducklm.tools.sandbox import cgroup
from ducklm.tools.sandbox.egress import ANY_HOST, EgressLog, egress_proxy
from ducklm.tools.sandbox.landlock import abi_version
from ducklm.tools.sandbox.launch import Plan, bwrap_probe_argv, prepare
from ducklm.tools.sandbox.output import OutputCapture

Protection = Literal["bubblewrap", "landlock", "none"]

logger = logging.getLogger(__name__)

READ_CHUNK = 64 << 10
PROBE_TIMEOUT_S = 10.0
TERM_GRACE_S = 1.0
KILL_GRACE_S = 5.0
DRAIN_GRACE_S = 1.0
"""After the tree is killed the pipe closes at once; this only bounds the wait when a
process escaped (no cgroup, and it called setsid) and still holds the pipe open."""


@dataclass(frozen=True)
class Limits:
    """What one command may use."""

    timeout_s: float = 60.0
    """Wall clock; on expiry the whole process tree is killed."""
    cpu_s: int = 60
    """RLIMIT_CPU, per process."""
    memory_bytes: int = 2 << 30
    """RLIMIT_AS, per process (address space, not resident memory)."""
    file_size_bytes: int = 256 << 20
    """RLIMIT_FSIZE: the largest file a process may write."""
    processes: int = 256
    """Processes at once: a pids cgroup when one can be made (needed as root), and
    RLIMIT_NPROC, which counts per user namespace under bubblewrap."""
    output_bytes: int = 64 << 10
    """Output kept: the first and the last half of this budget, the cut marked."""


@dataclass(frozen=True)
class ExecResult:
    """What a command did."""

    exit_code: int | None
    """The shell's exit status (128 + N when killed by signal N); None on timeout."""
    timed_out: bool
    output: str
    """stdout and stderr merged in order, decoded as UTF-8, capped (see `truncated`)."""
    output_bytes: int
    """Every byte the command wrote, kept or not."""
    truncated: bool
    duration_s: float
    protection: Protection
    """The protection the command actually ran under."""
    hosts_reached: tuple[str, ...] = ()
    """Through the egress proxy (approved network commands under bubblewrap)."""
    hosts_refused: tuple[str, ...] = ()
    """Asked of the egress proxy and refused: not approved, or a local address."""


def proxied(protection: Protection) -> bool:
    """Whether an approved network command goes through the egress proxy (`egress.py`).

    Under bubblewrap always; under Landlock from ABI 4 (TCP port rules); otherwise the
    command has the machine's own network, and the card says so.
    """
    return protection == "bubblewrap" or (protection == "landlock" and abi_version() >= 4)


async def detect_protection() -> Protection:
    """The strongest protection this machine offers, probed once; the caller caches it.

    Runs bubblewrap with the real sandbox's options on `true`; if that fails, asks the
    kernel for its Landlock ABI; else "none".
    """
    argv = await asyncio.to_thread(bwrap_probe_argv)  # the view looks at the file system
    try:
        probe = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError:
        pass  # not installed
    else:
        try:
            async with asyncio.timeout(PROBE_TIMEOUT_S):
                if await probe.wait() == 0:
                    return "bubblewrap"
        except TimeoutError:
            probe.kill()
            await probe.wait()
    return "landlock" if abi_version() >= 1 else "none"


async def run_sandboxed(
    command: str,
    *,
    workspace: Path,
    cwd: Path,
    protection: Protection,
    network: bool = False,
    readonly: Sequence[Path] = (),
    hidden: Sequence[Path] = (),
    secret_names: Sequence[str] = (),
    reveal_secrets: bool = False,
    control_writable: bool = False,
    limits: Limits = Limits(),
    stdin_data: bytes | None = None,
    unsandboxed: bool = False,
    hosts: Sequence[str] = (ANY_HOST,),
) -> ExecResult:
    """Run `command` with bash under `protection` and return what it did.

    Args:
        command: The shell command line.
        workspace: The only folder the command may write (besides private temp space).
        cwd: Where the command starts; inside `workspace` (the caller checked).
        protection: From `detect_protection`, or "none" when a person allowed it.
        network: Open a way out; only when a person approved a network command. Under
            bubblewrap that way is the egress proxy (`egress.py`) and leads to `hosts`
            only, never to a loopback or link-local address; so it is under Landlock
            when `proxied`; without a sandbox it is the machine's own network.
        readonly: Paths kept read-only inside the workspace (DuckLM's prompts and skills;
            every `.git` and what else runs by itself the view finds on its own).
            Paths outside it are out of the view anyway.
        hidden: DuckLM's data dir and configs: absent from the view wherever they are.
        secret_names: Name globs of secret files, shown empty in the workspace.
        reveal_secrets: The person approved a command that reads a secret: show them.
        control_writable: The person approved a command that writes git repositories
            (`git commit`): their `.git` folders are writable for it, which they are not
            otherwise (`view.py:scan_workspace`).
        limits: Time, CPU, memory, file size, process and output limits.
        stdin_data: Fed to the command's stdin, then closed; None gives /dev/null.
            Never logged or stored.
        unsandboxed: Run without bubblewrap or Landlock (for approved sudo commands,
            which cannot work in a user namespace); limits and cleanup still apply.
        hosts: The hosts the person approved (`ANY_HOST`: any public one).
    """
    started = time.monotonic()
    effective: Protection = "none" if unsandboxed else protection
    async with contextlib.AsyncExitStack() as stack:
        egress: Path | None = None
        seen: EgressLog | None = None
        if network and effective == "bubblewrap":
            egress = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="ducklm-egress-"))
            stack.push_async_callback(asyncio.to_thread, shutil.rmtree, egress, True)
            seen = await stack.enter_async_context(egress_proxy(egress, tuple(hosts)))
        elif network and effective == "landlock" and proxied("landlock"):
            seen = await stack.enter_async_context(egress_proxy(None, tuple(hosts)))
        plan = await asyncio.to_thread(
            prepare,
            command,
            workspace=workspace,
            cwd=cwd,
            protection=effective,
            network=network,
            readonly=readonly,
            hidden=hidden,
            secret_names=secret_names,
            reveal_secrets=reveal_secrets,
            control_writable=control_writable,
            limits=limits,
            unsandboxed=unsandboxed,
            egress=egress,
            proxy_port=seen.port if seen else 0,
        )
        try:
            transport, child = await _spawn(plan, feed_stdin=stdin_data is not None)
            try:
                code, timed_out, capture = await _supervise(
                    transport, child, plan, limits, stdin_data
                )
            finally:
                # Also on cancellation: a cancelled run must not leave its tree running.
                await _kill_tree(transport, child, plan)
                transport.close()
        finally:
            await asyncio.to_thread(plan.cleanup)
    return ExecResult(
        exit_code=code,
        timed_out=timed_out,
        output=capture.text(),
        output_bytes=capture.total,
        truncated=capture.truncated,
        duration_s=time.monotonic() - started,
        protection=effective,
        hosts_reached=tuple(seen.reached) if seen else (),
        hosts_refused=tuple(seen.refused) if seen else (),
    )


class _Child(asyncio.subprocess.SubprocessStreamProtocol):
    """The stream protocol, plus a future that resolves when the process itself exits.

    `Process.wait()` (Python 3.11) also waits for the pipes to close, which a background
    child holding stdout would put off for as long as it lives.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=2 * READ_CHUNK, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


async def _spawn(plan: Plan, *, feed_stdin: bool) -> tuple[asyncio.SubprocessTransport, _Child]:
    loop = asyncio.get_running_loop()
    transport, child = await loop.subprocess_exec(
        lambda: _Child(loop),
        *plan.argv,
        stdin=asyncio.subprocess.PIPE if feed_stdin else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        # A session of its own (setsid in the child, no preexec_fn): the timeout kills
        # the group, and the command cannot reach a terminal of ours.
        start_new_session=True,
        env=plan.env,
        cwd=plan.cwd,
    )
    return transport, child


async def _supervise(
    transport: asyncio.SubprocessTransport,
    child: _Child,
    plan: Plan,
    limits: Limits,
    stdin_data: bytes | None,
) -> tuple[int | None, bool, OutputCapture]:
    """Wait for the command or the timeout while reading its output; then kill the rest."""
    capture = OutputCapture(limits.output_bytes)
    assert child.stdout is not None
    tasks = [asyncio.create_task(_read_into(child.stdout, capture))]
    if stdin_data is not None and child.stdin is not None:
        tasks.append(asyncio.create_task(_feed(child.stdin, stdin_data)))
    timed_out = False
    try:
        try:
            async with asyncio.timeout(limits.timeout_s):
                await asyncio.shield(child.exited)
        except TimeoutError:
            timed_out = True
        # Background children the command left would otherwise outlive the tool call
        # and hold the output pipe open.
        await _kill_tree(transport, child, plan)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(tasks[0]), DRAIN_GRACE_S)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    code = transport.get_returncode()
    if timed_out or code is None:
        return None, timed_out, capture
    # Python reports death by signal N as -N; a shell says 128 + N.
    return (128 - code if code < 0 else code), False, capture


async def _read_into(stream: asyncio.StreamReader, capture: OutputCapture) -> None:
    while chunk := await stream.read(READ_CHUNK):
        capture.feed(chunk)


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    # The command may exit without reading everything; that is its choice, not an error.
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(data)
        await stdin.drain()
        stdin.close()
        await stdin.wait_closed()


async def _kill_tree(transport: asyncio.SubprocessTransport, child: _Child, plan: Plan) -> None:
    """Kill the command's process group and everything in its cgroup; await the top one."""
    pgid = transport.get_pid()
    if plan.unsandboxed and not child.exited.done():
        # sudo passes SIGTERM on to its command, which runs as root where our SIGKILL
        # may not reach (when DuckLM is not root).
        _signal_group(pgid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(child.exited), TERM_GRACE_S)
    # A process group id stays reserved while any member lives, so the group is ours
    # while the leader runs, and after it exits for as long as leftovers hold it. Under
    # bubblewrap the leftovers lived in the pid namespace instead, gone with it.
    if not child.exited.done() or not plan.pid_namespace:
        _signal_group(pgid, signal.SIGKILL)
    if plan.cgroup is not None:
        await asyncio.to_thread(cgroup.kill_all, plan.cgroup)
    try:
        await asyncio.wait_for(asyncio.shield(child.exited), KILL_GRACE_S)
    except TimeoutError:
        logger.warning("sandboxed process %d survived SIGKILL", pgid)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)
