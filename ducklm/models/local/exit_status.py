"""How the local model server ended, and what to tell a person about it.

The server runs detached, so no later DuckLM process can wait for it and see its exit
status. `ducklm.models.local.supervisor` runs it as a child instead, waits for it, and leaves
`<data dir>/llama.exit.json` (0600) behind; this module reads that record and words it.
Pure apart from `read_ending` (a file read).
"""

from __future__ import annotations

import json
import signal
import time
from dataclasses import dataclass
from pathlib import Path

RESTART_HINT = "then start it again: `ducklm llama start`"
SIGNAL_ADVICE = {
    "SIGILL": "the llama.cpp build does not fit this CPU (illegal instruction); rebuild it "
    "portably: `scripts/install-llama.sh .venv/bin/python` (portable by default), see README",
    "SIGSEGV": "llama.cpp crashed (segmentation fault): see `ducklm llama logs`; try again, "
    "and if it recurs try another model file (DUCK_LLAMA_MODEL) or rebuild llama.cpp "
    "(`scripts/install-llama.sh .venv/bin/python`)",
    "SIGBUS": "llama.cpp crashed (bus error), often a model file that changed or a full "
    "disk under it: check DUCK_LLAMA_MODEL and free space",
    "SIGKILL": "something killed it, most often the kernel's out-of-memory killer: free "
    "memory, or use a smaller model or context (DUCK_LLAMA_MODEL, DUCK_CTX_SIZE)",
    "SIGABRT": "llama.cpp aborted (a failed check or allocation): its last words are at the "
    "end of `ducklm llama logs`",
}
EXIT_ADVICE = (
    "it exited with code {code}: the end of `ducklm llama logs` says why (a bad model file "
    "or option, or the port in use)"
)
UNKNOWN_ADVICE = "it ended without a record of how: see `ducklm llama logs`"


@dataclass(frozen=True)
class Ending:
    """How one supervised server ended (the JSON of `llama.exit.json`)."""

    pid: int
    """The supervisor's pid: the one `llama.pid` records."""
    server_pid: int | None
    """The server process itself (None: it never started)."""
    exit_code: int | None
    """Its exit code, or None when a signal ended it."""
    signal: str | None
    """The signal that ended it (`SIGILL`), or None."""
    ended_at: float
    """When, as a Unix time."""
    requested: bool
    """A stop signal reached the supervisor first (`ducklm llama stop`): not a crash."""

    @property
    def signal_name(self) -> str | None:
        """The signal, also when a shell in between reported it as exit code 128 + n."""
        if self.signal is not None or self.exit_code is None or self.exit_code <= 128:
            return self.signal
        try:
            return signal.Signals(self.exit_code - 128).name
        except ValueError:
            return None

    @property
    def crashed(self) -> bool:
        """Whether it ended on its own other than cleanly."""
        return not self.requested and self.exit_code != 0

    def label(self) -> str:
        """`crashed (SIGILL)`, `crashed (exit code 1)`, `stopped`, `exited (code 0)`."""
        if self.requested:
            return "stopped"
        if (name := self.signal_name) is not None:
            return f"crashed ({name})"
        if self.exit_code is None:
            return "crashed (how is unknown)"
        return f"crashed (exit code {self.exit_code})" if self.crashed else "exited (code 0)"

    def when(self) -> str:
        """`ended_at` in local time."""
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.ended_at))

    def advice(self) -> str:
        """What to do about it, one sentence that ends with starting the server again."""
        return f"{self.remedy()}; {RESTART_HINT}"

    def remedy(self) -> str:
        """What to do about its cause, without starting it again (DuckLM may be doing that)."""
        name = self.signal_name
        if name in SIGNAL_ADVICE:
            return SIGNAL_ADVICE[name]
        if name is not None:
            return f"it was killed by {name}: see `ducklm llama logs`"
        if self.exit_code is None:
            return UNKNOWN_ADVICE
        return EXIT_ADVICE.format(code=self.exit_code)

    def message(self) -> str:
        """What a failed run says: which crash, when, and what to do."""
        return f"The local model server {self.label()} at {self.when()}: {self.advice()}."

    def message_restarting(self) -> str:
        """What a failed run says while DuckLM restarts the server: no command to run."""
        return (
            f"The local model server {self.label()} at {self.when()}; DuckLM restarts it by "
            f"itself: send your message again in a moment. If it keeps crashing: {self.remedy()}."
        )


def unrecorded(pid: int, *, at: float) -> Ending:
    """The ending of a recorded server that is gone without an exit record.

    A server started before the supervisor existed, or a supervisor that was killed.
    """
    return Ending(pid, None, None, None, at, requested=False)


def read_ending(path: Path) -> Ending | None:
    """The exit record at `path`, or None when there is none or it is unreadable. Blocking."""
    try:
        return Ending(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None
