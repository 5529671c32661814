"""The rules of `permissions.yaml`: their pydantic models, lookups, and the loader.

The loader validates the file, refuses a name listed under two classes, and checks
every example in it against the policy, so a rules edit that changes a verdict fails
at load time instead of silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cached_property
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ducklm.config.yaml_files import load_yaml_model
from ducklm.tools.commands.verdict import Action, CommandClass, CommandVerdict

WriteMode = Literal["all", "last", "after_first", "second"]

EXAMPLE_WORKSPACE = Path("/home/duck/ws")
EXAMPLE_HOME = Path("/home/duck")


class PolicyError(ValueError):
    """The permissions file is missing, invalid, or one of its examples fails."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class WrapperRule(_Strict):
    """How to find the command a wrapper (`env`, `timeout`, `sudo` ...) runs."""

    value_options: tuple[str, ...] = ()
    skip: int = Field(default=0, ge=0)
    """Positionals before the command (`timeout 5 CMD`)."""
    assignments: bool = False
    """NAME=VALUE words may come before the command (`env`)."""
    code_options: tuple[str, ...] = ()
    """Options whose value is shell code (`env -S`, `flock -c`)."""
    joins: bool = False
    """The rest is joined and run by `sh -c` (`watch`)."""
    argv_options: tuple[str, ...] = ()
    """Options that run the rest as a command line instead (`watch -x`)."""
    appends: bool = False
    """More arguments arrive on stdin (`xargs`)."""
    lookup_options: tuple[str, ...] = ()
    """Options that only look the command up (`command -v`)."""
    shell_options: tuple[str, ...] = ()
    """Options that start a root shell (`sudo -s`)."""
    sudo: bool = False
    floor: CommandClass = "read_only"


class FlagRule(_Strict):
    """A flag that makes a tool write, run code, or do more damage."""

    command: str
    flags: tuple[str, ...]
    class_: CommandClass = Field(alias="class")
    reason: str


class Example(_Strict):
    """A command and the verdict it must get; checked when the file loads."""

    command: str
    class_: CommandClass = Field(alias="class")
    action: Action
    sandboxed: bool = True


class Actions(_Strict):
    """The action for each class."""

    read_only: Action
    workspace_write: Action
    network: Action
    system: Action
    destructive: Action
    dangerous: Action


class ActionOverrides(_Strict):
    """Actions that change when no sandbox is available."""

    read_only: Action | None = None
    workspace_write: Action | None = None
    network: Action | None = None
    system: Action | None = None
    destructive: Action | None = None
    dangerous: Action | None = None


class PermissionRules(_Strict):
    """The validated contents of `permissions.yaml`; its comments explain each key."""

    actions: Actions
    unsandboxed_actions: ActionOverrides = ActionOverrides()
    overwrite: Literal["ask", "allow"] = "ask"
    edits_in_place: tuple[str, ...] = ()
    commands: dict[CommandClass, tuple[str, ...]]
    needs_network: tuple[str, ...] = ()
    read_only_without_args: tuple[str, ...] = ()
    read_only_flags: dict[str, tuple[str, ...]] = {}
    flag_rules: tuple[FlagRule, ...] = ()
    value_options: dict[str, tuple[str, ...]] = {}
    write_targets: dict[str, WriteMode] = {}
    write_options: dict[str, tuple[str, ...]] = {}
    recursive_flags: dict[str, tuple[str, ...]] = {}
    wrappers: dict[str, WrapperRule] = {}
    shells: tuple[str, ...] = ()
    interpreters: tuple[str, ...] = ()
    dangerous_env: tuple[str, ...] = ()
    protected_paths: tuple[str, ...] = ()
    harmless_paths: tuple[str, ...] = ()
    scratch_paths: tuple[str, ...] = ()
    system_bin_dirs: tuple[str, ...] = ()
    secret_paths: tuple[str, ...] = ()
    content_blind: tuple[str, ...] = ()
    examples: tuple[Example, ...] = ()


@dataclass(frozen=True, eq=False)
class RuleIndex:
    """The rules, with the lookups classification makes for every command."""

    rules: PermissionRules

    @cached_property
    def known(self) -> dict[str, CommandClass]:
        """Every listed name ("rm", "git status") and its class."""
        return {name: cls for cls, names in self.rules.commands.items() for name in names}

    @cached_property
    def subcommand_tools(self) -> frozenset[str]:
        """Tools with "tool sub" entries: their subcommand must be listed."""
        return frozenset(name.split()[0] for name in self.known if " " in name)

    @cached_property
    def flag_rules(self) -> dict[str, tuple[FlagRule, ...]]:
        """Flag rules by the command they apply to."""
        found: dict[str, tuple[FlagRule, ...]] = {}
        for rule in self.rules.flag_rules:
            found[rule.command] = (*found.get(rule.command, ()), rule)
        return found

    def class_of(self, name: str) -> CommandClass | None:
        """The listed class of a name or "tool sub" key; None if unknown."""
        if name in self.known:
            return self.known[name]
        patterns = (n for n in self.known if "*" in n and fnmatchcase(name, n))
        return next((self.known[n] for n in patterns), None)


def read_permission_rules(path: Path) -> PermissionRules:
    """Read and validate a permissions file.

    This reads a file: call it off the event loop.

    Raises:
        PolicyError: The file cannot be read, does not validate (the message says
            where), or lists a name twice.
    """
    rules = load_yaml_model(path, PermissionRules, PolicyError, "permissions file")
    seen: dict[str, str] = {}
    for cls, names in rules.commands.items():
        for name in names:
            if name in seen:
                raise PolicyError(
                    f"permissions file {path}: {name!r} is in both {seen[name]} and {cls}"
                )
            seen[name] = cls
    return rules


class Classifier(Protocol):
    """What example checking needs: the rules and a way to classify a command."""

    @property
    def rules(self) -> PermissionRules:
        """The rules whose examples are checked."""
        ...

    def classify(
        self, command: str, *, workspace: Path, home: Path | None = None, sandboxed: bool = True
    ) -> CommandVerdict:
        """The verdict for running `command` in `workspace`."""
        ...


def check_examples(policy: Classifier, path: Path) -> None:
    """Classify every example of the rules and compare with the verdict it must get.

    Raises:
        PolicyError: Some examples get another class or action; all are listed.
    """
    failures = []
    for number, example in enumerate(policy.rules.examples, start=1):
        got = policy.classify(
            example.command,
            workspace=EXAMPLE_WORKSPACE,
            home=EXAMPLE_HOME,
            sandboxed=example.sandboxed,
        )
        if (got.command_class, got.action) != (example.class_, example.action):
            failures.append(
                f"example {number} {example.command!r}: expected {example.class_}/{example.action},"
                f" got {got.command_class}/{got.action} ({'; '.join(got.reasons) or 'no reasons'})"
            )
    if failures:
        raise PolicyError(f"permissions file {path}: " + " | ".join(failures))
