"""Runs the local model server as a child, and records how it ended. Standard library only.

The server is detached (it outlives the command that started it), so nothing else can
wait for it: when it died of SIGILL on its first completion, nothing could say so. This
process is what `llama.pid` records: it starts the server, forwards stop signals to it,
waits, writes `{pid, server_pid, exit_code, signal, ended_at, requested}` to the exit
file (0600, read by `ducklm.models.local.exit_status`), prints a last line to the
server's log, exits.

It is started as a script with `python -I` (see `command`), not `python -m ducklm...`:
importing the `ducklm` package loads LangGraph and the rest (2.6 s, tens of MB) into a
process that only waits. `-I` also keeps this file's folder off `sys.path`, where a
sibling module could shadow one of the standard library's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

# The signals `ducklm llama stop` (SIGTERM) or a person might send; SIGKILL cannot be
# caught, so `llama.stop` sends that one to the whole process group.
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
NOT_STARTED = 127  # what a shell reports for a program it could not run
SCRIPT = str(Path(__file__).resolve())  # at import: resolving reads the disk


def command(server_argv: list[str], exit_file: Path) -> list[str]:
    """The command line that runs `server_argv` under this supervisor."""
    return [sys.executable, "-I", SCRIPT, str(exit_file), *server_argv]


class _Forwarder:
    """Signal handler: passes a stop signal on to the server, or holds it until it runs."""

    def __init__(self) -> None:
        self.child: subprocess.Popen[bytes] | None = None
        self.received: int | None = None

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.received = signum
        if self.child is not None:
            self.child.send_signal(signum)


def main(args: list[str]) -> int:
    """Run `args[1:]`, wait, record its end in the file `args[0]`; exit as it did."""
    exit_file, server_argv = Path(args[0]), args[1:]
    forward = _Forwarder()
    for sig in FORWARDED:
        signal.signal(sig, forward)
    try:
        child = subprocess.Popen(server_argv)
    except OSError as exc:
        print(f"ducklm: cannot run {server_argv[0]}: {exc}", flush=True)
        _finish(exit_file, None, NOT_STARTED, requested=False)
        return NOT_STARTED
    forward.child = child
    if forward.received is not None:  # a stop that came while the server was being started
        child.send_signal(forward.received)
    code = child.wait()
    _finish(exit_file, child.pid, code, requested=forward.received is not None)
    return code if code >= 0 else 128 - code


def _finish(exit_file: Path, server_pid: int | None, code: int, *, requested: bool) -> None:
    name = signal.Signals(-code).name if code < 0 else None
    ending = {
        "pid": os.getpid(),
        "server_pid": server_pid,
        "exit_code": code if code >= 0 else None,
        "signal": name,
        "ended_at": time.time(),
        "requested": requested,
    }
    write_private(exit_file, json.dumps(ending))
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    print(f"=== {stamp} ducklm: the server {_how(code, requested)}", flush=True)


def _how(code: int, requested: bool) -> str:
    if requested:
        return "stopped on request"
    if code < 0:
        what = f"crashed: killed by {signal.Signals(-code).name} ({signal.strsignal(-code)})"
    elif code:
        what = f"crashed: exit code {code}"
    else:
        return "exited (code 0)"
    return f"{what}; `ducklm llama status` says what to do"


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` readable by its owner only, through a temporary file."""
    partial = path.with_name(path.name + ".tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # a leftover temporary file keeps its mode through os.open
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    partial.replace(path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
