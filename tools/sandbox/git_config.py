"""The git settings every sandboxed command gets, so repository config cannot start programs.

A workspace's `.git/config` may set `core.fsmonitor` or `core.pager` to any command,
and `git status` would run it. Settings given on git's command line beat the
repository's, and `GIT_CONFIG_COUNT` / `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n`
(git 2.31+) are that level, for every git the command starts. The system and global
files are dropped too (inside the sandbox HOME is a fresh /tmp, which a command could
fill with a `.gitconfig`).

Settings whose names the repository chooses (filters, diff and merge drivers, `!`
aliases, includes) cannot be overridden this way, nor `diff.external` (an empty value
makes `git diff` fail): the command policy reads the config and asks for those
(`tools/commands/git_repo.py`).
"""

from __future__ import annotations

SAFE_SETTINGS: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.sshCommand", "ssh"),
    ("core.askPass", ""),
    # ":" is git's editor that changes nothing: `git commit` without -m stops at once
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("credential.helper", ""),  # an empty value drops every helper set before it
    ("gpg.program", "false"),
    ("gpg.openpgp.program", "false"),
    ("gpg.x509.program", "false"),
    ("gpg.ssh.program", "false"),
    ("interactive.diffFilter", "cat"),
    ("help.format", "man"),
    ("protocol.ext.allow", "never"),
    # a bare repository planted in the workspace is not picked up by `cd x && git log`
    ("safe.bareRepository", "explicit"),
)
"""Command-line-level settings: each beats the same key in the repository's config."""

FIXED_ENV: dict[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
}


def git_env() -> dict[str, str]:
    """The environment variables that give every git in a command `SAFE_SETTINGS`."""
    env = dict(FIXED_ENV, GIT_CONFIG_COUNT=str(len(SAFE_SETTINGS)))
    for i, (key, value) in enumerate(SAFE_SETTINGS):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env
