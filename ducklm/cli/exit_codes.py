"""The `ducklm` command's exit codes, defined once for every subcommand.

0 the command did what it was asked; `EXIT_FAILED` it tried and failed; `EXIT_USAGE` the
command itself was wrong (bad settings, bad arguments, nothing to act on);
`EXIT_INTERRUPTED` it was stopped by Ctrl-C or SIGTERM (as a shell reports Ctrl-C). A run's own
outcome (completed, waiting for a decision, failed) maps through
`ducklm.cli.console.EXIT_CODES`.
"""

from __future__ import annotations

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_USAGE"]
