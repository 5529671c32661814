"""Git objects written straight into the shadow repository's object store.

A snapshot is a tree built from DuckLM's own walk of the workspace (`survey.py`), not
from a git index: an index refuses every path with a `.git` part and has no place for
an empty folder, and a snapshot keeps both (a nested repository's refs and objects,
`mkdir -p a/b`). The format is git's loose object (`zlib("<type> <size>" NUL body)`
under `objects/<2 hex>/<38 hex>`, named by its SHA-1), so git reads, diffs and lists
these trees and blobs like its own. Blocking: run off the event loop.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import zlib
from pathlib import Path

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
CHUNK = 1 << 20
LEVEL = 1  # a snapshot is taken twice a step: speed over size
CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC


class ObjectStore:
    """The shadow repository's loose objects; remembers what it wrote or found."""

    def __init__(self, repo: Path) -> None:
        self.objects = str(repo / "objects")  # str, not Path: a third of the time per object
        self._present: set[str] = set()
        self._fans: set[str] = set()

    def write(self, kind: str, body: bytes) -> str:
        """Store one object (a tree, a link's blob, a small file); its id."""
        data = f"{kind} {len(body)}\0".encode() + body
        oid = hashlib.sha1(data, usedforsecurity=False).hexdigest()
        if not self._has(oid):
            tmp = self._tmp()
            fd = os.open(tmp, CREATE, 0o400)
            try:
                os.write(fd, zlib.compress(data, LEVEL))
            finally:
                os.close(fd)
            self._place(tmp, oid)
        return oid

    def write_file(self, fd: int, size: int) -> str | None:
        """Store the first `size` bytes of the open file `fd` as a blob; its id.

        `None` when the file held fewer bytes than `size` (it changed while read).
        """
        if size <= CHUNK:  # most files: read whole, written only when new
            data = os.read(fd, size)
            return self.write("blob", data) if len(data) == size else None
        digest = hashlib.sha1(f"blob {size}\0".encode(), usedforsecurity=False)
        squeeze = zlib.compressobj(LEVEL)
        tmp = self._tmp()
        try:
            with open(os.open(tmp, CREATE, 0o400), "wb") as out:
                out.write(squeeze.compress(f"blob {size}\0".encode()))
                left = size
                while left:
                    chunk = os.read(fd, min(CHUNK, left))
                    if not chunk:
                        return None
                    left -= len(chunk)
                    digest.update(chunk)
                    out.write(squeeze.compress(chunk))
                out.write(squeeze.flush())
            oid = digest.hexdigest()
            if not self._has(oid):
                self._place(tmp, oid)
            return oid
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)

    def _has(self, oid: str) -> bool:
        if oid in self._present:
            return True
        if os.path.exists(f"{self.objects}/{oid[:2]}/{oid[2:]}"):
            self._present.add(oid)
            return True
        return False

    def _tmp(self) -> str:
        return f"{self.objects}/tmp_obj_ducklm_{secrets.token_hex(8)}"

    def _place(self, tmp: str, oid: str) -> None:
        fan = f"{self.objects}/{oid[:2]}"
        if fan not in self._fans:
            with contextlib.suppress(FileExistsError):
                os.mkdir(fan, 0o700)
            self._fans.add(fan)
        os.rename(tmp, f"{fan}/{oid[2:]}")
        self._present.add(oid)
