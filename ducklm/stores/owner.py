"""Which process owns a run: enough to tell later whether that process is still alive.

A pid alone is not enough: pids are reused, and after a reboot every old pid is dead
whatever runs under that number now. An owner is the host name, the kernel's boot id,
the pid and the process's start time (in clock ticks since boot, from `/proc`), so a
reused pid or a reboot never passes for the process that started the run.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
_SEP = "/"


@dataclass(frozen=True)
class ProcessOwner:
    """One process on one boot of one host."""

    host: str
    boot_id: str
    pid: int
    start_ticks: int

    @classmethod
    def current(cls) -> ProcessOwner:
        """The current process. Reads `/proc`: call it off the event loop."""
        pid = os.getpid()
        return cls(socket.gethostname(), _boot_id(), pid, _start_ticks(pid) or 0)

    @classmethod
    def parse(cls, token: str) -> ProcessOwner | None:
        """The owner `token()` wrote, or `None` for anything else."""
        parts = token.rsplit(_SEP, 3)
        if len(parts) != 4 or not parts[2].isdigit() or not parts[3].isdigit():
            return None
        return cls(parts[0], parts[1], int(parts[2]), int(parts[3]))

    def token(self) -> str:
        """The owner as stored in the `runs` table."""
        return _SEP.join((self.host, self.boot_id, str(self.pid), str(self.start_ticks)))

    def is_alive(self, me: ProcessOwner) -> bool:
        """Whether this owner still runs, as seen from process `me`. Reads `/proc`.

        An owner on another host cannot be checked and counts as alive: only its own
        host may declare its runs dead.
        """
        if self.host != me.host:
            return True
        if self.boot_id != me.boot_id:
            return False
        if self.pid == me.pid:
            return self.start_ticks == me.start_ticks
        ticks = _start_ticks(self.pid)
        if ticks is None:
            return pid_exists(self.pid) if not _BOOT_ID.exists() else False
        return ticks == self.start_ticks


def _boot_id() -> str:
    try:
        return _BOOT_ID.read_text().strip()
    except OSError:
        return ""


def _start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[19])  # field 22 of the whole line: starttime


def pid_exists(pid: int) -> bool:
    """Whether a process `pid` exists (someone else's counts), by a signal-0 probe.

    Without /proc (not Linux) the start time is unknown; this is the best left.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
