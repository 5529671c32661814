"""Which shell commands run at once, which ask a person first, and which never run.

A command is parsed as bash (`command_parse`), every simple command in it is classified
with the rules of `config/permissions.yaml` (`command_analysis`), and the riskiest part
decides the class, which maps to an action (`command_findings`). Unknown commands, code
the policy cannot read and anything that does not parse ask: the policy fails closed,
and `classify` never raises.

Allow-forever rules are exact matches on `CommandVerdict.normalized`, the canonical
text of the whole command: allowing `git status` never allows `git status && rm -rf x`.

Decisions the rules file cannot express: paths are resolved lexically (no I/O, symlinks
not followed; the sandbox confines what a link could reach); `/tmp` counts as
workspace because each sandbox gets a fresh one; writes into `.git` are `system`
because hooks and config there run code, also outside the sandbox later; `less`,
`more` and `man` are read-only because their `!cmd` escapes need keys typed at a
terminal, which the model never has (their flags and variables that run commands are
caught by rules). Reading a secret is `read_only` but always asks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath

from ducklm.tools.commands.analysis import TOO_DEEP
from ducklm.tools.commands.analysis import Analysis as _Analysis
from ducklm.tools.commands.calls import Ctx
from ducklm.tools.commands.findings import Finding, combine
from ducklm.tools.commands.parse import CommandParseError, parse_command
from ducklm.tools.commands.rules import (
    PermissionRules,
    PolicyError,
    RuleIndex,
    check_examples,
    read_permission_rules,
)
from ducklm.tools.commands.verdict import CLASSES, Action, CommandClass, CommandVerdict

# the public API: what other code imports from here, wherever it is defined
__all__ = [
    "ANALYSIS_FAILED",
    "CLASSES",
    "EMPTY",
    "TOO_DEEP",
    "Action",
    "CommandClass",
    "CommandPolicy",
    "CommandVerdict",
    "PermissionRules",
    "PolicyError",
    "default_permissions_path",
    "load_command_policy",
]

EMPTY = "the command is empty"
ANALYSIS_FAILED = "the policy could not analyse this command"


@dataclass(frozen=True, eq=False)
class CommandPolicy(RuleIndex):
    """The loaded rules; `classify` never raises.

    Its only I/O is reading the git config of the repository a git command works in
    (`git_repo`), a few small files: call it off the event loop, as `tools.policy` does.
    """

    def __repr__(self) -> str:
        return f"CommandPolicy({len(self.known)} names, {len(self.rules.examples)} examples)"

    @property
    def secret_names(self) -> tuple[str, ...]:
        """The secret globs that name a file anywhere (`.env`, `*.pem`), not a path.

        The sandbox shows files with these names empty in the workspace; the ones with
        a folder (`~/.ssh/*`, `/etc/shadow`) lie outside its view anyway.
        """
        return tuple(p for p in self.rules.secret_paths if "/" not in p and not p.startswith("~"))

    def classify(
        self, command: str, *, workspace: Path, home: Path | None = None, sandboxed: bool = True
    ) -> CommandVerdict:
        """The verdict for running `command` in `workspace`. Never raises.

        Args:
            command: The command line, as bash would read it.
            workspace: The folder the command runs in; writes inside it are the cheap kind.
            home: The home folder `~` expands to; the process's own when `None`.
            sandboxed: Whether a sandbox confines the command; without one, workspace
                writes and network use ask too.
        """
        try:
            return self._classify(command, workspace, home or Path.home(), sandboxed)
        except Exception:  # an analysis bug must ask, never break the run
            return CommandVerdict("ask", "system", (ANALYSIS_FAILED,), command.strip())

    def _classify(
        self, command: str, workspace: Path, home: Path, sandboxed: bool
    ) -> CommandVerdict:
        if not command.strip():
            return CommandVerdict("deny", "read_only", (EMPTY,), "")
        try:
            parsed = parse_command(command)
        except CommandParseError as exc:
            failed = [Finding("system", str(exc), ask=True)]
            return combine(self.rules, failed, command.strip(), sandboxed)
        analysis = _Analysis(self, _posix(workspace), _posix(home))
        analysis.run(parsed, Ctx())
        return combine(self.rules, analysis.found, parsed.normalized, sandboxed)


def default_permissions_path() -> Path:
    """The permissions file packaged with DuckLM (`config/permissions.yaml`)."""
    return Path(str(resources.files("ducklm.config").joinpath("permissions.yaml")))


def load_command_policy(path: Path | None = None) -> CommandPolicy:
    """Read and validate the permissions file, then check every example in it.

    This reads a file: call it off the event loop.

    Raises:
        PolicyError: The file cannot be read, does not validate (the message says
            where), lists a name twice, or an example gets a different verdict.
    """
    path = path or default_permissions_path()
    policy = CommandPolicy(read_permission_rules(path))
    check_examples(policy, path)
    return policy


def _posix(path: Path) -> PurePosixPath:
    return PurePosixPath(os.path.abspath(path))
