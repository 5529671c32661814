"""A file-tool call that blocks in the kernel for real, and letting it go.

The file tools open with O_NONBLOCK so that a FIFO never blocks them. A test takes that
flag out of `ducklm.tools.files._READ_FLAGS` (the one seam, `BLOCKING_READ`): opening a
FIFO for reading then waits in the kernel for a writer, as a call on a hung file system
waits. `release` opens the FIFO for writing once, which lets every blocked reader go.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ducklm.tools import file_threads, files

BLOCKING_READ = files._READ_FLAGS & ~os.O_NONBLOCK


def release(*paths: Path) -> None:
    """Let every reader blocked on the FIFOs `paths` go, and wait for their threads. Blocking."""
    for path in paths:
        with contextlib.suppress(OSError):  # ENXIO: no reader is waiting
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    for thread in list(file_threads._threads):
        thread.join(timeout=5)
        assert not thread.is_alive(), f"{thread.name} still blocked"
