"""A pids cgroup per sandboxed command: a hard cap on processes, and a way to kill them all.

RLIMIT_NPROC does not bind real root (the kernel exempts uid 0 of the initial user
namespace, even inside bubblewrap's user namespace), so when DuckLM runs as root a fork
bomb is held only by a pids cgroup. The cgroup also finds every process the command
left behind, even one that escaped its process group with `setsid`.

Creating one needs write access to the current cgroup's folder: true for root, rarely
for a desktop user (systemd owns that tree). Everything here is best effort and
returns None or False rather than raising. All functions block on the file system:
call them through `asyncio.to_thread`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

_KILL_ROUNDS = 50
_REMOVE_ROUNDS = 20
_REMOVE_PAUSE_S = 0.05


@dataclass(frozen=True)
class PidsCgroup:
    """A cgroup this module created, with `pids.max` set."""

    path: Path

    @property
    def procs_file(self) -> Path:
        """Writing a pid here moves that process (and its future children) in."""
        return self.path / "cgroup.procs"


def create(max_pids: int) -> PidsCgroup | None:
    """A fresh cgroup under this process's own, capped at `max_pids` processes.

    Returns:
        The cgroup, or None when this machine or user cannot have one.
    """
    parent = _own_pids_cgroup()
    if parent is None:
        return None
    path = parent / f"ducklm-sandbox-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        path.mkdir()
    except OSError:
        return None
    try:
        # On cgroup v2 the file exists only if the parent delegates the pids controller.
        (path / "pids.max").write_text(str(max_pids))
    except OSError:
        remove(PidsCgroup(path))
        return None
    return PidsCgroup(path)


def kill_all(group: PidsCgroup) -> None:
    """SIGKILL every process in the cgroup until none is left (or give up quietly)."""
    kill_file = group.path / "cgroup.kill"  # cgroup v2, Linux 5.14+: one atomic write
    if kill_file.exists():
        with contextlib.suppress(OSError):
            kill_file.write_text("1")
    # cgroup v1 has no atomic kill: repeat, since a process may fork between the read
    # and the signal. pids.max keeps the number of rounds small.
    for _ in range(_KILL_ROUNDS):
        pids = _members(group)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
    logger.warning("processes still alive in %s after SIGKILL", group.path)


def remove(group: PidsCgroup) -> bool:
    """Delete the (emptied) cgroup; retries while the killed processes are reaped."""
    for _ in range(_REMOVE_ROUNDS):
        try:
            group.path.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            time.sleep(_REMOVE_PAUSE_S)
    logger.warning("could not remove cgroup %s", group.path)
    return False


def _members(group: PidsCgroup) -> list[int]:
    try:
        return [int(line) for line in group.procs_file.read_text().split()]
    except (OSError, ValueError):
        return []


def _own_pids_cgroup() -> Path | None:
    """The folder of this process's cgroup in the hierarchy that has the pids controller."""
    try:
        memberships = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    v1_path = v2_path = None
    for line in memberships:
        hierarchy, controllers, path = line.split(":", 2)
        if hierarchy == "0" and not controllers:
            v2_path = path
        elif "pids" in controllers.split(","):
            v1_path = path
    for line in mounts:
        root, mount_point, fstype, super_options = _parse_mount(line)
        if v1_path is not None and fstype == "cgroup" and "pids" in super_options.split(","):
            return _join(mount_point, root, v1_path)
        if v1_path is None and v2_path is not None and fstype == "cgroup2":
            return _join(mount_point, root, v2_path)
    return None


def _parse_mount(line: str) -> tuple[str, str, str, str]:
    # mountinfo: id parent dev root mount_point options [optional...] - fstype source super
    before, _, after = line.partition(" - ")
    fields, tail = before.split(), after.split()
    if len(fields) < 5 or len(tail) < 3:
        return "", "", "", ""
    return _unescape(fields[3]), _unescape(fields[4]), tail[0], tail[2]


def _unescape(field: str) -> str:
    # The kernel writes space, tab, newline and backslash in paths as octal escapes.
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _join(mount_point: str, mount_root: str, cgroup_path: str) -> Path | None:
    relative = os.path.relpath(cgroup_path, mount_root)
    if relative.startswith(".."):
        return None  # our cgroup is outside what this mount shows (a container's view)
    return Path(mount_point) / relative
