"""A stand-in `sudo`: this machine has none (and tests run as root).

It reads the password from stdin, records only whether it matched, and on a match runs
the command: proof that the password arrived on stdin and nowhere else.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PASSWORD = "hunter2-mallard-7f3a"


def install_fake_sudo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put the fake `sudo` first on PATH; returns its log (a `match`/`mismatch` line per use).

    PATH reaches DuckLM's shell tool in this process (library and served app alike).
    """
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    log = tmp_path / "sudo.log"
    script = bin_dir / "sudo"
    script.write_text(
        "#!/bin/sh\n"
        "IFS= read -r pw\n"
        f'if [ "$pw" = "{PASSWORD}" ]; then echo match >> {log}; else echo mismatch >> {log};'
        " echo 'sudo: wrong password' >&2; exit 1; fi\n"
        'while [ "$1" = "-S" ] || [ "$1" = "-p" ]; do [ "$1" = "-p" ] && shift; shift; done\n'
        'exec "$@"\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return log
