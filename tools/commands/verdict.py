"""The classes a command can fall in, the actions they map to, and the verdict."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

CommandClass = Literal[
    "read_only", "workspace_write", "network", "system", "destructive", "dangerous"
]
CLASSES: tuple[CommandClass, ...] = get_args(CommandClass)
Action = Literal["allow", "ask", "deny"]
RANK: dict[CommandClass, int] = {name: rank for rank, name in enumerate(CLASSES)}
"""How risky each class is: higher is riskier; the riskiest finding decides."""

CLASS_REASONS: dict[CommandClass, str] = {
    "read_only": "{name} only reads",
    "workspace_write": "{name} writes files",
    "network": "{name} uses the network",
    "system": "{name} can change the system or run any code",
    "destructive": "{name} deletes files",
    "dangerous": "{name} can wreck the machine",
}


@dataclass(frozen=True)
class CommandVerdict:
    """What to do with one shell command before it runs."""

    action: Action
    command_class: CommandClass
    """The class of the riskiest part."""
    reasons: tuple[str, ...]
    """One short reason per risky part, riskiest first; empty when all only read."""
    normalized: str
    """Canonical text of the whole command: allow-forever rules match it exactly."""
    network: bool = False
    """Some part needs the network (the sandbox must allow it)."""
    sudo: bool = False
    """Some part runs through sudo (needs the password flow)."""
    secrets: bool = False
    """Some part reads secrets (~/.ssh, /etc/shadow, .env, *.pem ...)."""
    replaces: tuple[str, ...] = ()
    """Workspace files it overwrites if they exist (`>`, tee, cp/mv onto, sort -o...):
    whether they do is known only on disk, so `tools.policy` looks (the overwrite rule)."""
    edits_in_place: bool = False
    """Some part rewrites existing files in place (`sed -i`, patch, git checkout, black)."""
    writes_git: bool = False
    """Some part writes a git repository's control folder (`git commit`, `> .git/config`):
    it asks, and approved, the sandbox leaves the `.git` folders writable for it."""
