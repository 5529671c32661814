"""uvicorn's httptools protocol as the door needs it (`server/connection.py`).

Its own module: it imports httptools, which only uvicorn's `standard` extra installs.
"""

from __future__ import annotations

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ducklm.server.connection import Deadlines
from ducklm.server.hosts import absolute_target


class HttpToolsDoor(Deadlines, HttpToolsProtocol):  # type: ignore[misc]  # the mixin's bases differ
    """uvicorn's httptools protocol with the deadlines, keeping an absolute target whole."""

    def on_headers_complete(self) -> None:
        """As uvicorn's, with `raw_path` the whole target when it is in absolute form.

        httptools keeps only its path, and the guard could not see the host it names.
        """
        super().on_headers_complete()
        target = self.url.partition(b"?")[0]
        if absolute_target(target) is not None:
            self.scope["raw_path"] = target
