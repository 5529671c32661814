"""Proof on disk: every entry of a folder, compared exactly before and after."""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path

Entry = tuple[str, int, str]


def tree_of(root: Path) -> dict[str, Entry]:
    """Every entry below `root` (its `.git` left out): kind, exact mode, content digest
    (or a link's target)."""
    seen = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*dirs, *files]:
            path = Path(folder, name)
            info = path.lstat()
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                seen[rel] = ("link", 0, os.readlink(path))
            elif path.is_dir():
                seen[rel] = ("dir", info.st_mode & 0o7777, "")
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                seen[rel] = ("file", info.st_mode & 0o7777, digest)
    return seen


async def snapshot(root: Path) -> dict[str, Entry]:
    """`tree_of(root)`, off the event loop."""
    return await asyncio.to_thread(tree_of, root)
