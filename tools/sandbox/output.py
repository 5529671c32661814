"""Bounded capture of a command's output: the head, a rolling tail and a byte count.

A command can print without end (`yes`, `cat /dev/urandom | base64`); the capture keeps
at most `budget` bytes whatever the flood, so memory stays flat while the total is
still known.
"""

from __future__ import annotations

CUT_MARKER = "\n[... {cut} bytes cut ...]\n"


class OutputCapture:
    """Keeps the first and last `budget // 2` bytes fed to it and counts the rest."""

    def __init__(self, budget: int) -> None:
        """Start empty.

        Args:
            budget: The most bytes kept; half for the head, half for the tail.
        """
        self._head_size = max(budget, 0) // 2
        self._tail_size = max(budget, 0) - self._head_size
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0
        """Every byte fed so far, kept or not."""

    def feed(self, chunk: bytes) -> None:
        """Add the next piece of output."""
        self.total += len(chunk)
        room = self._head_size - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if not chunk or self._tail_size == 0:
            return
        self._tail += chunk[-self._tail_size :]
        # Trim in place so the tail never holds more than one chunk beyond its size.
        excess = len(self._tail) - self._tail_size
        if excess > 0:
            del self._tail[:excess]

    @property
    def truncated(self) -> bool:
        """Whether some bytes were dropped between the head and the tail."""
        return self.total > len(self._head) + len(self._tail)

    def text(self) -> str:
        """The kept output as UTF-8 text, the cut marked with the number of bytes dropped."""
        head = self._head.decode("utf-8", errors="replace")
        tail = self._tail.decode("utf-8", errors="replace")
        if not self.truncated:
            return head + tail
        cut = self.total - len(self._head) - len(self._tail)
        return head + CUT_MARKER.format(cut=cut) + tail
