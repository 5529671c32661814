"""DuckLM's files are the person's alone: the data dir 0700, the files in it 0600.

The data dir holds every conversation, the audit log, memories and the API token. On a
shared machine another local user must not read them, so the folder is created (and an
older, looser one tightened) owner-only, and the files DuckLM creates there start 0600.
SQLite creates its `-wal` and `-shm` files with the database file's own mode, so creating
the database file 0600 first covers them too. All of it is blocking: call through
`asyncio.to_thread`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ducklm.config.data_dir import DataDir

DIR_MODE = 0o700
FILE_MODE = 0o600


def make_private_dir(path: Path) -> Path:
    """Create `path` (and its parents) and make it owner-only; return it."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    _tighten(path, DIR_MODE)
    return path


def create_private_file(path: Path) -> Path:
    """Create `path` empty and owner-only if missing, else make it owner-only; return it."""
    make_private_dir(path.parent)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    except FileExistsError:
        _tighten(path, FILE_MODE)
    return path


def replace_private_file(path: Path, text: str) -> None:
    """Write `text` to `path` whole: a 0600 file beside it, renamed over the old one.

    A reader sees the old content or the new, never half of it; the file is owner-only
    from its first byte (it is created so, not tightened after).
    """
    make_private_dir(path.parent)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.unlink(missing_ok=True)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    partial.replace(path)


def secure_data_dir(data_dir: Path) -> Path:
    """Make the data dir owner-only, and the files an older DuckLM left there too.

    Only DuckLM's own names are touched: a data dir may be a folder that holds other
    things (the person's own files keep their modes).
    """
    make_private_dir(data_dir)
    # Prefixes: SQLite adds `-wal` and `-shm`, the log rotates to `.1`, `.2`, ...
    own = tuple(path.name for path in DataDir(data_dir).entries())
    for entry in data_dir.iterdir():
        if entry.is_symlink() or not entry.name.startswith(own):
            continue
        _tighten(entry, DIR_MODE if entry.is_dir() else FILE_MODE)
    return data_dir


def _tighten(path: Path, mode: int) -> None:
    info = path.stat()
    # Only DuckLM's own files: a folder the person shares on purpose (owned by someone
    # else, e.g. a data dir on a group share) is theirs to set.
    if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) & ~mode:
        path.chmod(stat.S_IMODE(info.st_mode) & mode)
