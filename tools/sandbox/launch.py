"""How a sandboxed command is launched: the argv chain, its environment and its cleanup.

The chain, each step `exec`-ing the next so one process carries it all:

1. `/bin/sh` writes its pid into the run's pids cgroup (when there is one), so the
   process cap holds from the first fork. No `preexec_fn`: unsafe in a threaded program.
2. The confinement: `bwrap ...`, or `python landlock.py ...`, or nothing.
3. `/bin/bash` sets the rlimits with `ulimit` (inside the sandbox, so RLIMIT_NPROC
   counts only the sandbox's user namespace), then runs the command with bash.

Everything here touches the file system; `prepare` runs in a worker thread.
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ducklm.tools.sandbox import cgroup, landlock
from ducklm.tools.sandbox.egress import SOCKET_NAME
from ducklm.tools.sandbox.git_config import git_env
from ducklm.tools.sandbox.view import (
    EGRESS_DIR,
    FORWARD_SCRIPT,
    View,
    bwrap_view,
    landlock_reads,
    relay_interpreter,
)

if TYPE_CHECKING:
    from ducklm.tools.sandbox.runner import Limits, Protection

BASH = "/bin/bash"
SH = "/bin/sh"
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
BWRAP_HOME = "/tmp"
"""HOME inside bubblewrap: the private tmpfs, so caches and dotfiles neither land in the
workspace nor touch the real home, and vanish with the run."""

PROXY_PORT = 3128
"""The relay's port on the sandbox's own loopback (its own network namespace)."""


def proxy_env(port: int) -> dict[str, str]:
    """curl, wget, git, pip and npm all read these; curl only the lower-case http_proxy."""
    url = f"http://127.0.0.1:{port}"
    names = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy")
    return dict.fromkeys(names, url)


_JOIN_CGROUP = 'echo $$ > "$0" && exec "$@"'
# Hard and soft limits alike, so the command cannot raise them; except CPU, whose hard
# limit is a second later: the soft one sends SIGXCPU ("CPU time limit exceeded"), which
# tells the model more than the hard limit's bare SIGKILL.
_LIMITS = (
    "ulimit -t {cpu_hard} -v {memory_kib} -f {file_kib} -u {processes} && ulimit -S -t {cpu}"
    ' && exec {bash} -c "$1"'
)
_BWRAP_FLAGS = ("--unshare-all", "--die-with-parent", "--new-session")


@dataclass
class Plan:
    """One prepared launch."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    """The launcher's working directory on the host."""
    pid_namespace: bool
    """Leftover processes die with the namespace (bubblewrap)."""
    unsandboxed: bool = False
    """Approved sudo: the command may run as root, beyond our SIGKILL when DuckLM is not
    root, so the timeout sends SIGTERM first, which sudo passes on."""
    cgroup: cgroup.PidsCgroup | None = None
    private_tmp: Path | None = None

    def cleanup(self) -> None:
        """Remove the run's cgroup and private temp folder. Blocking."""
        if self.cgroup is not None:
            cgroup.kill_all(self.cgroup)
            cgroup.remove(self.cgroup)
        if self.private_tmp is not None:
            shutil.rmtree(self.private_tmp, ignore_errors=True)


def bwrap_probe_argv() -> list[str]:
    """The sandbox's own bubblewrap options around `true`: if this runs, runs will."""
    view = bwrap_view(View(workspace=Path(tempfile.gettempdir())), scan=False)
    return ["bwrap", *view, *_BWRAP_FLAGS, *_cap_drop(), "--", "true"]


def prepare(
    command: str,
    *,
    workspace: Path,
    cwd: Path,
    protection: Protection,
    network: bool,
    readonly: Sequence[Path],
    limits: Limits,
    unsandboxed: bool,
    hidden: Sequence[Path] = (),
    secret_names: Sequence[str] = (),
    reveal_secrets: bool = False,
    control_writable: bool = False,
    egress: Path | None = None,
    proxy_port: int = 0,
) -> Plan:
    """Resolve paths, make the cgroup and temp folder, and build the argv chain.

    `egress`: for an approved network command under bubblewrap, the folder of the
    egress proxy's socket (`egress.py`); the command reaches the network only through it.
    `proxy_port`: the same under Landlock, the proxy's port on loopback.
    """
    workspace, cwd = workspace.resolve(), cwd.resolve()
    plan = Plan(
        argv=[],
        env=_env(),
        cwd=cwd,
        pid_namespace=protection == "bubblewrap",
        unsandboxed=unsandboxed,
    )
    try:
        plan.cgroup = cgroup.create(limits.processes)
        if protection == "bubblewrap":
            plan.env["HOME"] = BWRAP_HOME
            view = View(
                workspace=workspace,
                readonly=tuple(p.resolve() for p in readonly),
                hidden=tuple(p.resolve() for p in hidden),
                secret_names=tuple(secret_names),
                reveal_secrets=reveal_secrets,
                control_writable=control_writable,
                egress=egress if network else None,
            )
            confine = _bwrap_argv(view, cwd)
            if view.egress is not None:
                plan.env.update(proxy_env(PROXY_PORT))
            plan.cwd = workspace  # bwrap --chdir sets the command's own
        else:
            plan.private_tmp = Path(tempfile.mkdtemp(prefix="ducklm-run-"))
            plan.env.update(HOME=str(plan.private_tmp), TMPDIR=str(plan.private_tmp))
            confine = []
            if protection == "landlock":
                view = View(workspace=workspace)
                confine = _landlock_argv(view, plan.private_tmp, network, proxy_port)
                if network and proxy_port:
                    plan.env.update(proxy_env(proxy_port))
        join = [] if plan.cgroup is None else [SH, "-c", _JOIN_CGROUP, str(plan.cgroup.procs_file)]
        shell = [BASH, "-c", _limits_prelude(limits, plan.pid_namespace), "ducklm", command]
        plan.argv = [*join, *confine, *shell]
    except BaseException:
        plan.cleanup()
        raise
    return plan


def _bwrap_argv(view: View, cwd: Path) -> list[str]:
    # Never --share-net: an approved network command still has a network namespace of its
    # own, whose only way out is the relay to the egress proxy.
    argv = ["bwrap", *bwrap_view(view), *_BWRAP_FLAGS, *_cap_drop(), "--chdir", str(cwd), "--"]
    if view.egress is None:
        return argv
    socket = f"{EGRESS_DIR}/{SOCKET_NAME}"
    relay = [relay_interpreter(), "-I", "-S", FORWARD_SCRIPT, socket, str(PROXY_PORT)]
    return [*argv, *relay, "--"]


def _cap_drop() -> list[str]:
    # Unprivileged bwrap already runs the command with no capabilities; as root it keeps
    # them in its user namespace, where CAP_SYS_ADMIN could remount `/` read-write.
    return ["--cap-drop", "ALL"] if os.geteuid() == 0 else []


def _landlock_argv(view: View, private_tmp: Path, network: bool, proxy_port: int) -> list[str]:
    launcher = [sys.executable, "-I", "-S", landlock.__file__]
    readable = [arg for folder in landlock_reads(view) for arg in ("--read", folder)]
    writable = ["--write", str(view.workspace), "--write", str(private_tmp)]
    if not network:
        net = ["--deny-network"]
    elif proxy_port:
        net = ["--deny-network", "--connect-port", str(proxy_port)]
    else:
        net = []  # an old kernel: the machine's network, and the card said so
    return [*launcher, *readable, *writable, *net, "--"]


def _env() -> dict[str, str]:
    # Nothing else from DuckLM's environment: no API keys, no tokens, no SSH agent, no
    # GIT_*; git gets settings the repository's own config cannot turn into programs.
    return {
        "PATH": os.environ.get("PATH") or DEFAULT_PATH,
        "LANG": os.environ.get("LANG") or "C.UTF-8",
        "TERM": "dumb",
        **git_env(),
    }


def _limits_prelude(limits: Limits, user_namespace: bool) -> str:
    return _LIMITS.format(
        cpu=_clamped(resource.RLIMIT_CPU, limits.cpu_s, 1),
        cpu_hard=_clamped(resource.RLIMIT_CPU, limits.cpu_s + 1, 1),
        memory_kib=_clamped(resource.RLIMIT_AS, limits.memory_bytes, 1024),
        file_kib=_clamped(resource.RLIMIT_FSIZE, limits.file_size_bytes, 1024),
        processes=_clamped(resource.RLIMIT_NPROC, _nproc(limits.processes, user_namespace), 1),
        bash=BASH,
    )


def _clamped(which: int, value: int, unit: int) -> int:
    # Asking for more than the hard limit fails for a non-root user; take what is there.
    hard = resource.getrlimit(which)[1]
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    return max(value, 0) // unit


def _nproc(processes: int, user_namespace: bool) -> int:
    """The RLIMIT_NPROC that gives the command `processes` more processes.

    Inside bubblewrap's user namespace the kernel counts only that namespace's
    processes (Linux 5.14+). Elsewhere it counts every process of the user, so the
    user's current ones are added. Root is exempt either way; its cap is the cgroup.
    """
    if user_namespace or os.geteuid() == 0:
        return processes
    uid = os.getuid()
    owned = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                owned += entry.stat().st_uid == uid
            except OSError:
                continue  # exited meanwhile
    return owned + processes
