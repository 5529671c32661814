"""A snapshot's tree, from a walk of every entry of the workspace (`survey`).

What a snapshot covers is decided by construction, not by a list: every folder (empty
or not, with its exact mode), every file of any size, every symlink, at any depth,
ignored or not, inside nested repositories and their `.git` as anywhere else. Only
FIFOs, sockets and devices are left out (undo cannot make them), and the undo store
itself when it lies inside the workspace.

A file's content is read only when its stat signature differs from the last survey's
(`cache`), or when it changed too close to that survey for the signature to tell (a
rewrite in the same clock tick keeps size and times: "racy", as git treats its own
index). Reading stops at a budget (`Budget`: bytes per file, bytes per survey, a time
bound): a file past it is covered by a stand-in id made from its signature, so a change
of it is still seen and said, but its content cannot be restored (`left_out`).
Blocking: run off the event loop.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from dataclasses import dataclass, field

from ducklm.undo.objects import ObjectStore

RACY_S = 2  # FAT keeps times to 2 s; a clock tick is far less
Signature = tuple[int, int, int, int, int]
"""inode, size, mode, mtime and ctime (ns)."""
DIR, FILE, EXEC, LINK = "40000", "100644", "100755", "120000"
TOO_BIG = "larger than DUCK_UNDO_MAX_FILE_BYTES"
OVER_BUDGET = "over DUCK_UNDO_MAX_BYTES in one checkpoint"
TOO_SLOW = "past DUCK_UNDO_MAX_SECONDS"
UNREADABLE = "unreadable"


Entry = tuple[Signature, str, str, str, bool]
"""One entry of a folder: signature, git mode, id (a sub-folder's: its tree), why its
content was not kept (empty when it was), racy (read it again next time)."""


@dataclass(frozen=True)
class Folder:
    """What the last survey found in one folder: the cache a survey starts from."""

    entries: dict[str, Entry]
    tree: str
    modes: dict[str, int] = field(default_factory=dict)
    """Entry name -> exact mode, where the tree does not say it."""
    left_out: dict[str, str] = field(default_factory=dict)
    files: int = 0
    size: int = 0


@dataclass(frozen=True)
class Budget:
    """How much one survey may read and store."""

    max_file: int
    max_bytes: int
    deadline: float
    """`time.monotonic()` past which no more content is read."""


@dataclass(frozen=True)
class Survey:
    """A workspace as one walk found it."""

    tree: str
    modes: dict[str, int]
    """Exact modes git's tree does not say: files not 0644/0755, folders not 0755."""
    files: int
    size: int
    """Bytes in the regular files."""
    left_out: dict[str, str] = field(default_factory=dict)
    """Files whose content was not kept (path -> why): a change is seen, not undoable."""
    read: int = 0
    """Bytes read and stored by this survey."""
    reread: int = 0
    """Files (and links) whose content this survey read."""


def survey(
    workspace: str, store: ObjectStore, cache: dict[str, Folder], budget: Budget, skip: str = ""
) -> tuple[Survey, dict[str, Folder]]:
    """Walk `workspace` (no trailing slash) and store its tree; the survey and the new cache.

    Args:
        workspace: The resolved workspace folder.
        store: Where blobs and trees go.
        cache: The last survey's folders by path (`""` the workspace; empty the first time).
        budget: What this survey may read.
        skip: An absolute folder not to enter (the undo store, when inside the workspace).
    """
    return _Walk(workspace, store, cache, budget, skip).run()


class _Walk:
    def __init__(
        self, root: str, store: ObjectStore, cache: dict[str, Folder], budget: Budget, skip: str
    ) -> None:
        self.root, self.store, self.cache, self.budget, self.skip = root, store, cache, budget, skip
        self.racy_after = time.time_ns() - RACY_S * 10**9
        self.unreadable: list[str] = []
        self.read = self.reread = 0

    def run(self) -> tuple[Survey, dict[str, Folder]]:
        order = [""]  # folders, parents before children; iterative: trees may be deep
        listed: dict[str, tuple[dict[str, Entry], bool]] = {}
        at = 0
        while at < len(order):
            folder = order[at]
            at += 1
            listed[folder] = self._list(folder, order)
        done: dict[str, Folder] = {}
        for folder in reversed(order):  # children first: a folder's tree names theirs
            entries, dirty = listed[folder]
            for name, entry in entries.items():
                if entry[1] == DIR:
                    tree = done[f"{folder}/{name}" if folder else name].tree
                    if entry[2] != tree:
                        entries[name] = (entry[0], DIR, tree, "", False)
                        dirty = True
            last = self.cache.get(folder)
            done[folder] = last if last is not None and not dirty else self._folder(entries)
        return self._survey(done), done

    def _list(self, folder: str, order: list[str]) -> tuple[dict[str, Entry], bool]:
        """The entries of `folder`, and whether they differ from the last survey's."""
        last = self.cache.get(folder)
        old = last.entries if last is not None else {}
        entries: dict[str, Entry] = {}
        dirty = last is None
        try:
            with os.scandir(f"{self.root}/{folder}" if folder else self.root) as listing:
                for item in listing:
                    name = item.name
                    try:
                        info = item.stat(follow_symlinks=False)
                    except OSError:
                        continue  # gone since the listing
                    mode = info.st_mode
                    sig = (info.st_ino, info.st_size, mode, info.st_mtime_ns, info.st_ctime_ns)
                    was = old.get(name)
                    is_dir = stat.S_ISDIR(mode)
                    if is_dir:
                        path = f"{folder}/{name}" if folder else name
                        if self.skip and f"{self.root}/{path}" == self.skip:
                            continue
                        order.append(path)  # what is below may change with no trace here
                    if was is not None and was[0] == sig and (not was[4] or was[3]):
                        entries[name] = was  # the usual entry: unchanged since
                        continue
                    dirty = True
                    if is_dir:
                        entries[name] = (sig, DIR, "", "", False)
                    elif stat.S_ISREG(mode) or stat.S_ISLNK(mode):
                        entries[name] = self._content(folder, name, info, sig)
        except OSError:
            self.unreadable.append(folder or ".")
            return {}, True
        return entries, dirty or len(entries) != len(old)

    def _content(self, folder: str, name: str, info: os.stat_result, sig: Signature) -> Entry:
        """A changed (or racy) file's or link's entry: its content read and stored."""
        path = f"{self.root}/{folder}/{name}" if folder else f"{self.root}/{name}"
        racy = max(info.st_mtime_ns, info.st_ctime_ns) >= self.racy_after
        oid, why = self._read(path, info, sig)
        return (sig, _git_mode(info.st_mode), oid, why, racy)

    def _read(self, full: str, info: os.stat_result, sig: Signature) -> tuple[str, str]:
        self.reread += 1
        try:
            if stat.S_ISLNK(info.st_mode):
                return self.store.write("blob", os.fsencode(os.readlink(full))), ""
            why = self._over_budget(info.st_size)
            if why:
                return _stand_in(sig), why
            fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                oid = self.store.write_file(fd, info.st_size)
            finally:
                os.close(fd)
        except OSError:
            return _stand_in(sig), UNREADABLE
        if oid is None:
            return _stand_in(sig), UNREADABLE  # it shrank while read
        self.read += info.st_size
        return oid, ""

    def _over_budget(self, size: int) -> str:
        if size > self.budget.max_file:
            return TOO_BIG
        if self.read + size > self.budget.max_bytes:
            return OVER_BUDGET
        if time.monotonic() > self.budget.deadline:
            return TOO_SLOW
        return ""

    def _folder(self, entries: dict[str, Entry]) -> Folder:
        """A folder whose entries changed: its tree written, its modes and sizes summed."""
        modes: dict[str, int] = {}
        left_out: dict[str, str] = {}
        files = size = 0
        for name, (sig, git_mode, _, why, _) in entries.items():
            exact = stat.S_IMODE(sig[2])
            if git_mode == DIR:
                if exact != 0o755:
                    modes[name] = exact
                continue
            if git_mode != LINK:
                files += 1
                size += sig[1]
                if exact != default_mode(exact):
                    modes[name] = exact
            if why:
                left_out[name] = why
        body = _tree_body([(n, e[1], e[2]) for n, e in entries.items()])
        return Folder(entries, self.store.write("tree", body), modes, left_out, files, size)

    def _survey(self, done: dict[str, Folder]) -> Survey:
        modes: dict[str, int] = {}
        left_out = dict.fromkeys(self.unreadable, UNREADABLE)
        files = size = 0
        for folder, found in done.items():
            prefix = f"{folder}/" if folder else ""
            modes.update((prefix + n, m) for n, m in found.modes.items())
            left_out.update((prefix + n, w) for n, w in found.left_out.items())
            files += found.files
            size += found.size
        return Survey(
            done[""].tree, modes, files, size, dict(sorted(left_out.items())), self.read,
            self.reread,
        )  # fmt: skip


def _git_mode(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return LINK
    return EXEC if mode & stat.S_IXUSR else FILE


def _tree_body(entries: list[tuple[str, str, str]]) -> bytes:
    """A git tree object's body: entries in git's order (a folder sorts as `name/`)."""
    named = [(os.fsencode(n), m, o) for n, m, o in entries]
    named.sort(key=lambda e: e[0] + b"/" if e[1] == DIR else e[0])
    return b"".join(m.encode() + b" " + n + b"\0" + bytes.fromhex(o) for n, m, o in named)


def _stand_in(sig: Signature) -> str:
    """An id for content not kept: it differs whenever the file's signature does."""
    return hashlib.sha1(f"ducklm not kept {sig}".encode(), usedforsecurity=False).hexdigest()


def default_mode(mode: int) -> int:
    """The mode git gives a file back: 0755 when its owner may run it, else 0644."""
    return 0o755 if mode & stat.S_IXUSR else 0o644
