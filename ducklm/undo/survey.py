"""What a snapshot keeps of a workspace's files, from one `lstat` each.

The survey gives what git cannot: the exact modes (git keeps only 0644 and 0755), the
sizes the limits check, and a stat signature per file. A workspace's first snapshot
in a process surveys every file git lists (`survey`); the next ones only the files
git's own stat cache says changed, the new ones, and the racy ones (`resurvey`).

Racy: git compares times to the second (as builds without USE_NSEC do, Debian's
too), so a change in the same second as a file's last one can look like none to it (a
`chmod 600` that keeps size and mtime). A file whose times are within `RACY_S` of its
survey is surveyed and re-read by git again next time, whatever git's stat cache says,
as git itself treats "racily clean" index entries.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

RACY_S = 2  # FAT keeps times to 2 s; git to 1 s
Signature = tuple[int, int, int, int, int]
"""inode, size, mode, mtime and ctime (ns)."""


@dataclass(frozen=True)
class Survey:
    """The files a snapshot covers, as they were when it was taken."""

    present: frozenset[str]
    """Listed names that exist (not folders)."""
    modes: dict[str, int]
    """Files whose mode git would not restore by itself."""
    size: int
    """Bytes in the files kept."""
    left_out: tuple[str, ...]
    """Files over the per-file limit: not kept."""
    signatures: dict[str, Signature] = field(default_factory=dict)
    racy: frozenset[str] = frozenset()
    """Files changed too close to the survey for git's stat cache to see the next change."""
    repos: frozenset[str] = frozenset()
    """Nested repositories (kept as links to their commit, which git reads)."""


def survey(workspace: str, names: Iterable[str], max_file: int) -> Survey:
    """`lstat` every name under `workspace` (no trailing slash). Blocking."""
    tally = _Tally(None, max_file)
    for name in names:
        tally.add(workspace, name)
    return tally.result()


def resurvey(
    workspace: str, old: Survey, candidates: Iterable[str], max_file: int
) -> tuple[Survey, list[str]] | None:
    """`old` brought up to date, and the names git must read again. Blocking.

    `candidates` are the names git's stat cache says changed, the new ones, and the
    files named by a file tool; the racy files and nested repositories of `old` join
    them. `None` when a file over the per-file limit changed, appeared or went: the
    caller takes a full snapshot, which rewrites the exclude file.
    """
    for name in old.left_out:  # git sees none of these
        if _signature(workspace, name) != old.signatures.get(name):
            return None
    names = {n.rstrip("/") for n in candidates} | old.racy | old.repos
    tally = _Tally(old, max_file)
    for name in names:
        tally.drop(name)
        tally.add(workspace, name)
    found = tally.result()
    if found.left_out != old.left_out:
        return None
    return found, sorted(names - set(found.left_out))


class _Tally:
    """A survey being built: from nothing, or from an older one file by file."""

    def __init__(self, base: Survey | None, max_file: int) -> None:
        self.started = time.time_ns()
        self.max_file = max_file
        self.present = set(base.present) if base else set()
        self.modes = dict(base.modes) if base else {}
        self.size = base.size if base else 0
        self.left_out = list(base.left_out) if base else []
        self.signatures = dict(base.signatures) if base else {}
        self.racy = set(base.racy) if base else set()
        self.repos = set(base.repos) if base else set()

    def drop(self, name: str) -> None:
        """Forget what the base survey knew of `name`."""
        sig = self.signatures.pop(name, None)
        if sig is not None and stat.S_ISREG(sig[2]) and name not in self.left_out:
            self.size -= sig[1]
        self.present.discard(name)
        self.modes.pop(name, None)
        self.racy.discard(name)
        self.repos.discard(name)
        if name in self.left_out:
            self.left_out.remove(name)

    def add(self, workspace: str, name: str) -> None:
        """Survey `name` as it is now."""
        path = f"{workspace}/{name}"  # str, not Path: a third of the time on 10,000 files
        try:
            info = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return
        if stat.S_ISDIR(info.st_mode):
            # A nested repository git lists, or a folder a file tool names (not kept:
            # `add -f` would take all of it).
            if os.path.lexists(path.rstrip("/") + "/.git"):
                self.repos.add(name.rstrip("/"))
            return
        self.present.add(name)
        self.signatures[name] = _of(info)
        if max(info.st_mtime_ns, info.st_ctime_ns) >= self.started - RACY_S * 10**9:
            self.racy.add(name)
        if not stat.S_ISREG(info.st_mode):
            return
        if info.st_size > self.max_file:
            self.left_out.append(name)
            return
        self.size += info.st_size
        mode = stat.S_IMODE(info.st_mode)
        if mode != default_mode(mode):
            self.modes[name] = mode

    def result(self) -> Survey:
        return Survey(
            frozenset(self.present), self.modes, self.size, tuple(sorted(self.left_out)),
            self.signatures, frozenset(self.racy), frozenset(self.repos),
        )  # fmt: skip


def _signature(workspace: str, name: str) -> Signature | None:
    try:
        return _of(os.lstat(f"{workspace}/{name}"))
    except (FileNotFoundError, NotADirectoryError):
        return None


def _of(info: os.stat_result) -> Signature:
    return (info.st_ino, info.st_size, info.st_mode, info.st_mtime_ns, info.st_ctime_ns)


def default_mode(mode: int) -> int:
    """The mode git gives a file back: 0755 when its owner may run it, else 0644."""
    return 0o755 if mode & stat.S_IXUSR else 0o644
