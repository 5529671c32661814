"""The media MCP results brought (images, audio, blobs), read back for the person.

`content.py` saves each under `<data dir>/mcp/media/` as `<24 hex of its sha256>.<ext>`,
the extension from its MIME type. The web chat shows them from there, by that name
only: a name of any other shape, a link, or anything but a regular file is refused, so
no request reaches a file outside the folder.
"""

from __future__ import annotations

import asyncio
import mimetypes
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

FOLDER = "media"
NAME = re.compile(r"[0-9a-f]{24}\.[A-Za-z0-9]{1,16}")
"""What `content.py` names a saved file: nothing else is ever read."""
SHOWN_INLINE = ("image/", "audio/", "video/")
"""Types a browser may show in the page; the rest is offered as a download."""
MAX_BYTES = 64 * 1024 * 1024
NOT_A_NAME = "{name!r} is not the name of a saved MCP media file"
NOT_FOUND = "no saved MCP media file {name!r}"
TOO_LARGE = "the MCP media file {name!r} is over {limit} bytes"


@dataclass(frozen=True)
class Media:
    """One saved file: its bytes and the MIME type it was saved under."""

    name: str
    mime_type: str
    data: bytes

    @property
    def inline(self) -> bool:
        """Whether the page may show it (an image, audio or video)."""
        return self.mime_type.startswith(SHOWN_INLINE)


def media_folder(mcp_dir: Path) -> Path:
    """Where the MCP servers' media are saved, under DuckLM's `mcp` folder."""
    return mcp_dir / FOLDER


async def read_media(folder: Path, name: str) -> Media:
    """The saved file `name` of `folder`.

    Raises:
        ValueError: `name` is not a saved file's name (a path, `..`, another shape).
        LookupError: No such file, or not a regular file (a link, a folder).
    """
    if not NAME.fullmatch(name):
        raise ValueError(NOT_A_NAME.format(name=name[:80]))
    data = await asyncio.to_thread(_read, folder / name, name)
    mime = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return Media(name=name, mime_type=mime, data=data)


def _read(path: Path, name: str) -> bytes:
    """The bytes of the regular file `path`, not following a link. Blocking."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:  # missing, or a link (ELOOP)
        raise LookupError(NOT_FOUND.format(name=name)) from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise LookupError(NOT_FOUND.format(name=name))
        if info.st_size > MAX_BYTES:
            raise LookupError(TOO_LARGE.format(name=name, limit=MAX_BYTES))
        return file.read()
