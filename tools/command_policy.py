"""Which shell commands run at once, which ask a person first, and which never run.

A command is parsed as bash (`command_parse`), every simple command in it is classified
with the rules of `config/permissions.yaml`, and the riskiest part decides the class,
which maps to an action. Unknown commands, code the policy cannot read and anything
that does not parse ask: the policy fails closed, and `classify` never raises.

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
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from functools import cached_property
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ducklm.tools.command_parse import (
    GLOB_CHARS,
    CommandParseError,
    Opt,
    ParsedCommand,
    Redirect,
    SimpleCommand,
    Word,
    expand_path,
    fixed_prefix,
    flag_matches,
    is_within,
    next_option,
    parse_command,
    sed_script_is_risky,
    split_options,
)

CommandClass = Literal[
    "read_only", "workspace_write", "network", "system", "destructive", "dangerous"
]
CLASSES: tuple[CommandClass, ...] = get_args(CommandClass)
Action = Literal["allow", "ask", "deny"]
WriteMode = Literal["all", "last", "after_first", "second"]
_RANK = {name: rank for rank, name in enumerate(CLASSES)}
_ROOT = PurePosixPath("/")

EXAMPLE_WORKSPACE = Path("/home/duck/ws")
EXAMPLE_HOME = Path("/home/duck")
MAX_DEPTH = 6

EMPTY = "the command is empty"
ANALYSIS_FAILED = "the policy could not analyse this command"
UNKNOWN = "{name} is not known to the policy"
UNKNOWN_PROGRAM = "runs {name}, a program the policy does not know"
NAME_EXPANDS = "the command name comes from an expansion: {name}"
CLASS_REASONS: dict[CommandClass, str] = {
    "read_only": "{name} only reads",
    "workspace_write": "{name} writes files",
    "network": "{name} uses the network",
    "system": "{name} can change the system or run any code",
    "destructive": "{name} deletes files",
    "dangerous": "{name} can wreck the machine",
}
WRITES = "{name} {verb} {path}"
WRITES_UNKNOWN = "{name} {verb} {path}, which is only known when it runs"
WRITES_GIT = "{name} {verb} {path}, inside .git where hooks and config run code"
RUNS_ELSEWHERE = "{name} works in {path}, outside the workspace"
SECRET = "reads secrets: {path}"
DANGEROUS_ENV = "{name}= changes which code runs"
SUDO = "{name} runs a command as root"
ROOT_SHELL = "{name} starts a root shell"
INLINE_CODE = "{name} runs code the policy cannot read"
STDIN_CODE = "{name} runs code it reads from its input"
DOWNLOAD_RUN = "runs code downloaded from the network with {name}"
FORK_BOMB = "fork bomb: {name} starts copies of itself"
TOO_DEEP = "commands are nested too deeply to analyse"
GIT_CONFIG = "git config can set commands git runs (core.pager, core.fsmonitor...)"
SED_SCRIPT = "the sed script writes files or runs commands"
AWK_PROGRAM = "the awk program can run commands or write files"
FROM_XARGS = "<arguments from xargs>"
_AWK_RISKY = ("system", "|", ">", "@load")
_CODE_FLAGS = frozenset({"-c", "-e", "-E", "--eval", "-p", "--print", "-r", "-m"})
_GIT_CONFIG_WRITES = ("--add", "--unset", "--unset-all", "--replace-all", "--rename-section",
                      "--remove-section", "--edit", "-e")  # fmt: skip
_TAR_MODES = {"x": "extract", "c": "create", "r": "create", "u": "create", "A": "create"}
_TAR_LONG_MODES = {"--extract": "extract", "--get": "extract", "--create": "create",
                   "--append": "create", "--update": "create", "--catenate": "create"}  # fmt: skip
_TAR_VALUE_LETTERS = "fCTXbKNgIFVL"
# builtins that set variables by name: `read PATH`, `printf -v PAGER ...`, `export X=1`
_VARIABLE_SETTERS = frozenset({"export", "declare", "typeset", "local", "readonly", "read",
                               "printf", "mapfile", "readarray", "getopts"})  # fmt: skip
_NAME_OR_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\+?=|$)")
SOCKET = "redirection opens a network connection: {path}"


class PolicyError(ValueError):
    """The permissions file is missing, invalid, or one of its examples fails."""


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
class CommandPolicy:
    """The loaded rules; `classify` is pure (no I/O) and never raises."""

    rules: PermissionRules

    def __repr__(self) -> str:
        return f"CommandPolicy({len(self.known)} names, {len(self.rules.examples)} examples)"

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
            return self._verdict(
                [_Finding("system", str(exc), ask=True)], command.strip(), sandboxed
            )
        analysis = _Analysis(self, _posix(workspace), _posix(home))
        analysis.run(parsed, _Ctx())
        return self._verdict(analysis.findings, parsed.normalized, sandboxed)

    def _verdict(
        self, findings: list[_Finding], normalized: str, sandboxed: bool
    ) -> CommandVerdict:
        ordered = sorted(findings, key=lambda f: -_RANK[f.cls])
        cls = ordered[0].cls if ordered else "read_only"
        action = self.rules.actions.model_dump()[cls]
        if not sandboxed:
            action = self.rules.unsandboxed_actions.model_dump()[cls] or action
        if action == "allow" and any(f.ask or f.secrets or f.sudo for f in findings):
            action = "ask"
        return CommandVerdict(
            action=action,
            command_class=cls,
            reasons=tuple(dict.fromkeys(f.reason for f in ordered)),
            normalized=normalized,
            network=any(f.network for f in findings),
            sudo=any(f.sudo for f in findings),
            secrets=any(f.secrets for f in findings),
        )


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
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise PolicyError(f"cannot read permissions file {path}: {exc}") from None
    try:
        rules = PermissionRules.model_validate(raw or {})
    except ValidationError as exc:
        details = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise PolicyError(f"invalid permissions file {path}: {details}") from None
    seen: dict[str, str] = {}
    for cls, names in rules.commands.items():
        for name in names:
            if name in seen:
                raise PolicyError(
                    f"permissions file {path}: {name!r} is in both {seen[name]} and {cls}"
                )
            seen[name] = cls
    policy = CommandPolicy(rules)
    _check_examples(policy, path)
    return policy


def _check_examples(policy: CommandPolicy, path: Path) -> None:
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


def _posix(path: Path) -> PurePosixPath:
    return PurePosixPath(os.path.abspath(path))


@dataclass(frozen=True)
class _Finding:
    cls: CommandClass
    reason: str
    ask: bool = False
    """Ask whatever the class maps to: code the policy cannot read."""
    network: bool = False
    sudo: bool = False
    secrets: bool = False


@dataclass(frozen=True)
class _Ctx:
    """Where a simple command runs, as far as its classification cares."""

    pipes: tuple[tuple[int, int], ...] = ()
    redirects: tuple[Redirect, ...] = ()
    sudo: bool = False
    root_shell: bool = False
    appended: bool = False
    """`xargs` adds arguments the policy cannot see."""
    depth: int = 0


@dataclass(frozen=True)
class _Call:
    """A command line split into its name, subcommand key, options and positionals."""

    name: str
    key: str
    """"git stash list", or the name for tools without subcommands."""
    args: tuple[Word, ...]
    own: tuple[Opt, ...]
    """The tool's own options (for git: those before the subcommand)."""
    options: tuple[Opt, ...]
    """The subcommand's options."""
    positionals: tuple[Word, ...]

    @property
    def all_options(self) -> tuple[Opt, ...]:
        return (*self.own, *self.options)


class _Analysis:
    """The findings of one `classify` call; keeps the working folder as `cd` moves it."""

    def __init__(
        self, policy: CommandPolicy, workspace: PurePosixPath, home: PurePosixPath
    ) -> None:
        self.policy = policy
        self.rules = policy.rules
        self.workspace = workspace
        self.home: PurePosixPath | None = home
        self.cwd: PurePosixPath | None = workspace
        self.findings: list[_Finding] = []
        self._readers: list[tuple[str, tuple[tuple[int, int], ...]]] = []
        self._downloads: list[tuple[tuple[int, int], ...]] = []
        self._extras: dict[str, Callable[[_Call, CommandClass], None]] = {
            "git": self._extra_git,
            "sed": self._extra_sed,
            "find": self._extra_find,
            "tar": self._extra_tar,
            "dd": self._extra_dd,
            **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), self._extra_awk),
        }

    def add(self, cls: CommandClass, reason: str, **flags: bool) -> None:
        self.findings.append(_Finding(cls, reason, **flags))

    def run(self, parsed: ParsedCommand, base: _Ctx) -> None:
        """Classify every simple command of one parse."""
        saved = self._readers, self._downloads
        self._readers, self._downloads = [], []
        for name in parsed.fork_bombs:
            self.add("dangerous", FORK_BOMB.format(name=name))
        for reason in parsed.hidden:
            self.add("system", reason, ask=True)
        for command in parsed.commands:
            self._simple(command, parsed.functions, base)
        for name, pipes in self._readers:
            if any(_upstream(download, pipes) for download in self._downloads):
                self.add("dangerous", DOWNLOAD_RUN.format(name=name))
        self._readers, self._downloads = saved

    def _simple(self, command: SimpleCommand, functions: frozenset[str], base: _Ctx) -> None:
        ctx = replace(base, pipes=command.pipes, redirects=command.redirects)
        for assignment in command.assignments:
            self._assignment(assignment, statement=not command.words)
        for redirect in command.redirects:
            self._redirect(redirect)
        if command.words:
            self._argv(list(command.words), ctx, functions)

    def _assignment(self, word: Word, *, statement: bool) -> None:
        name = word.text.partition("=")[0].rstrip("+")
        if any(fnmatchcase(name, pattern) for pattern in self.rules.dangerous_env):
            self.add("system", DANGEROUS_ENV.format(name=name), ask=True)
        if statement and name == "HOME":
            self.home = None
        if statement and name == "PWD":
            self.cwd = None

    def _redirect(self, redirect: Redirect) -> None:
        if redirect.target is None or redirect.op in ("<<<", "<&"):
            return
        if self._is_socket(redirect.target):
            self.add("network", SOCKET.format(path=redirect.target.text), network=True)
        elif redirect.op == "<":
            self._secret(redirect.target)
        else:
            self._write(redirect.target, "workspace_write", "redirection")

    # -- command names and wrappers ---------------------------------------------------

    def _argv(self, words: list[Word], ctx: _Ctx, functions: frozenset[str] = frozenset()) -> None:
        if ctx.depth > MAX_DEPTH:
            self.add("system", TOO_DEEP, ask=True)
            return
        while words:
            name = self._name(words[0])
            if name is None:
                return
            wrapper = self.rules.wrappers.get(name)
            if wrapper is None:
                if name in functions and not self._is_known(name):
                    return  # the function's body is classified where it is defined
                self._command(name, words[1:], ctx)
                return
            unwrapped = self._unwrap(name, wrapper, words[1:], ctx)
            if unwrapped is None:
                return
            words, ctx = unwrapped

    def _is_known(self, name: str) -> bool:
        rules = self.rules
        return (
            self.policy.class_of(name) is not None
            or name in rules.shells
            or name in rules.interpreters
            or name in self.policy.subcommand_tools
        )

    def _name(self, word: Word) -> str | None:
        """The command a word names, or None (with a finding) when it cannot be known."""
        text = word.text
        if not word.literal or (text != "[" and any(c in text for c in GLOB_CHARS)):
            cls: CommandClass = "dangerous" if self._downloads_in(word) else "system"
            self.add(cls, NAME_EXPANDS.format(name=word.source), ask=True)
            return None
        if "/" in text:
            folder, _, text = text.rpartition("/")
            if (folder or "/") not in self.rules.system_bin_dirs:
                self.add("system", UNKNOWN_PROGRAM.format(name=word.text), ask=True)
            if not text:
                return None
        head, dot, minor = text.rpartition(".")
        if dot and minor.isdigit() and head in self.rules.interpreters:
            text = head  # python3.11 -> python3
        return text

    def _unwrap(
        self, name: str, rule: WrapperRule, args: list[Word], ctx: _Ctx
    ) -> tuple[list[Word], _Ctx] | None:
        """The command a wrapper runs, or None when it runs none the policy can see."""
        if rule.floor != "read_only" or rule.sudo:
            reason = SUDO if rule.sudo else CLASS_REASONS[rule.floor]
            self.add(rule.floor, reason.format(name=name), sudo=rule.sudo)
        ctx = replace(ctx, sudo=ctx.sudo or rule.sudo, appended=ctx.appended or rule.appends)
        value_options = (*rule.value_options, *rule.code_options)
        i = 0
        while i < len(args) and args[i].text.startswith("-") and args[i].text != "-":
            if args[i].text == "--":
                i += 1
                break
            opt, i = next_option(args, i, value_options)
            if any(flag_matches(opt, f) for f in rule.lookup_options):
                return None
            if any(flag_matches(opt, f) for f in rule.shell_options):
                ctx = replace(ctx, root_shell=True)
            if opt.value is not None and opt.name in rule.code_options:
                self._code(name, opt.value, ctx)
                return None
            if opt.value is not None and opt.name in self.rules.write_options.get(name, ()):
                self._write(opt.value, "workspace_write", name)
            elif opt.value is not None:
                self._secret(opt.value)  # xargs -a FILE
        while rule.assignments and i < len(args) and "=" in args[i].text:
            self._assignment(args[i], statement=False)
            i += 1
        rest = args[i + rule.skip :]
        if not rest:
            if ctx.root_shell:
                self.add("dangerous", ROOT_SHELL.format(name=name), sudo=ctx.sudo)
            return None
        if rule.joins:
            self._code(name, _joined(rest), ctx)
            return None
        return rest, ctx

    def _code(self, name: str, code: Word, ctx: _Ctx) -> None:
        """Classify shell code given as a string (`bash -c`, `eval`, `watch`)."""
        if not code.literal:
            self._opaque_code(name, code)
            return
        if ctx.depth >= MAX_DEPTH:
            self.add("system", TOO_DEEP, ask=True)
            return
        try:
            parsed = parse_command(code.text) if code.text.strip() else None
        except CommandParseError as exc:
            self.add("system", f"{name}: {exc}", ask=True)
            return
        if parsed is not None:
            cwd = self.cwd
            self.run(parsed, _Ctx(sudo=ctx.sudo, depth=ctx.depth + 1))
            self.cwd = cwd  # a child shell's `cd` does not move this one

    def _is_socket(self, word: Word) -> bool:
        """Whether a path is bash's /dev/tcp or /dev/udp network pseudo-file."""
        path = expand_path(word, self.cwd, self.home)
        return path is not None and path.parts[1:3] in (("dev", "tcp"), ("dev", "udp"))

    def _opaque_code(self, name: str, code: Word) -> None:
        """Code the policy cannot read: dangerous when it comes from a download."""
        if self._downloads_in(code):
            self.add("dangerous", DOWNLOAD_RUN.format(name=name))
        else:
            self.add("system", INLINE_CODE.format(name=name), ask=True)

    def _downloads_in(self, word: Word) -> bool:
        return any(self.policy.class_of(name) == "network" for name in word.inner)

    # -- commands ---------------------------------------------------------------------

    def _command(self, name: str, args: list[Word], ctx: _Ctx) -> None:
        if name in self.rules.shells:
            self._shell(name, args, ctx)
        elif name in self.rules.interpreters:
            self._interpreter(name, args, ctx)
        elif name in ("cd", "pushd", "popd"):
            self._cd(name, args)
        elif name in _VARIABLE_SETTERS:
            for word in args:
                if _NAME_OR_ASSIGNMENT.match(word.text):
                    self._assignment(word, statement=True)
        elif name in ("source", ".", "eval"):
            self._eval(name, args, ctx)
        else:
            if name == "tar" and args and not args[0].text.startswith("-"):
                args = [replace(args[0], text="-" + args[0].text), *args[1:]]  # tar xzf
            call = self._call(name, args)
            cls = self._generic(call, ctx)
            extra = self._extras.get(name)
            if extra is not None:
                extra(call, cls)
            if name == "find":
                self._find_exec(call, ctx)

    def _call(self, name: str, args: list[Word]) -> _Call:
        value_options = self.rules.value_options
        if name not in self.policy.subcommand_tools:
            opts, positionals, _ = split_options(args, value_options.get(name, ()))
            return _Call(name, name, tuple(args), tuple(opts), (), tuple(positionals))
        own, _, rest = split_options(args, value_options.get(name, ()), stop=True)
        if not rest:
            return _Call(name, name, tuple(args), tuple(own), (), ())
        key, rest = f"{name} {rest[0].text}", rest[1:]
        if rest and f"{key} {rest[0].text}" in self.policy.known:
            key, rest = f"{key} {rest[0].text}", rest[1:]
        opts, positionals, _ = split_options(rest, value_options.get(key, ()))
        return _Call(name, key, tuple(args), tuple(own), tuple(opts), tuple(positionals))

    def _generic(self, call: _Call, ctx: _Ctx) -> CommandClass:
        """Classify a command by its lists, flag rules, written paths and secret reads."""
        known = self._rsync_class(call) or self._lookup(call)
        read_only = any(
            flag_matches(o, f)
            for key in {call.name, call.key}
            for f in self.rules.read_only_flags.get(key, ())
            for o in call.all_options
        )
        cls: CommandClass = "read_only" if read_only and known else known or "system"
        if known is None:
            self.add("system", UNKNOWN.format(name=call.key), ask=True)
        self._flag_rules(call)
        rules = self.rules
        network = not read_only and (
            cls == "network" or call.key in rules.needs_network or call.name in rules.needs_network
        )
        if network:
            self._downloads.append(ctx.pipes)
        targets = [] if read_only else self._targets(call, ctx)
        if known is not None and cls != "read_only" and (not targets or cls == "network"):
            self.add(cls, CLASS_REASONS[cls].format(name=call.key), network=network)
        elif network:
            self.add(cls, CLASS_REASONS["network"].format(name=call.key), network=True)
        self._writes(call, cls, targets)
        if cls in ("workspace_write", "destructive") and not targets:
            self._check_cwd(call.key)
        if call.name not in rules.content_blind:
            for word in (*call.positionals, *(o.value for o in call.all_options if o.value)):
                self._secret(word)
        return cls

    def _lookup(self, call: _Call) -> CommandClass | None:
        if call.key in self.rules.read_only_without_args and not call.positionals:
            return "read_only"
        return self.policy.class_of(call.key)

    def _rsync_class(self, call: _Call) -> CommandClass | None:
        if call.name != "rsync":
            return None
        return "network" if any(_remote(w.text) for w in call.positionals) else "workspace_write"

    def _flag_rules(self, call: _Call) -> None:
        texts = [w.text for w in call.args]
        scopes = [(call.name, call.own if call.key != call.name else call.all_options)]
        if call.key != call.name:
            scopes.append((call.key, call.options))
        for key, opts in scopes:
            for rule in self.policy.flag_rules.get(key, ()):
                if any(
                    any(fnmatchcase(t, f) for t in texts)
                    if "*" in f
                    else any(flag_matches(o, f) for o in opts)
                    for f in rule.flags
                ):
                    self.add(rule.class_, rule.reason, ask=rule.class_ != "read_only")

    def _targets(self, call: _Call, ctx: _Ctx) -> list[Word]:
        mode = self.rules.write_targets.get(call.key) or self.rules.write_targets.get(call.name)
        if mode is None:
            return []
        words = list(call.positionals)
        chosen = {"all": words, "last": words[-1:], "after_first": words[1:], "second": words[1:2]}
        extra = [Word(FROM_XARGS, FROM_XARGS, ("?",))] if ctx.appended else []
        remote_copy = call.name in ("scp", "rsync")
        return [w for w in chosen[mode] if not (remote_copy and _remote(w.text))] + extra

    def _writes(self, call: _Call, cls: CommandClass, targets: list[Word]) -> None:
        rules = self.rules
        opts = call.all_options
        recursive = any(
            flag_matches(o, f) for f in rules.recursive_flags.get(call.name, ()) for o in opts
        )
        write_cls = max(cls, "workspace_write", key=_RANK.__getitem__)
        for target in targets:
            self._write(target, write_cls, call.key, recursive=recursive)
        for key in {call.name, call.key}:
            for opt in opts:
                if opt.value is not None and opt.name in rules.write_options.get(key, ()):
                    self._write(opt.value, write_cls, call.key)

    # -- paths --------------------------------------------------------------------------

    def _write(
        self, word: Word, base: CommandClass, name: str, *, recursive: bool = False, verb: str = ""
    ) -> None:
        """Record a write to `word`, classed by where it lands."""
        if word.text == "-" and word.literal:
            return  # standard output
        place = self._place(word)
        verb = verb or ("deletes" if base == "destructive" else "writes to")
        shown = word.text if word.literal else word.source
        text = WRITES.format(name=name, verb=verb, path=shown)
        raised = max(base, "system", key=_RANK.__getitem__)
        if place in ("workspace", "scratch"):
            self.add(base, text)
        elif place == "git":
            self.add(raised, WRITES_GIT.format(name=name, verb=verb, path=shown))
        elif place == "protected":
            self.add("dangerous", text)
        elif place in ("critical", "outside"):
            deleting = base == "destructive" and (recursive or place == "critical")
            self.add(
                "dangerous" if deleting or (place == "critical" and recursive) else raised, text
            )
        elif place == "unknown":
            self.add(raised, WRITES_UNKNOWN.format(name=name, verb=verb, path=shown), ask=True)

    def _place(self, word: Word) -> str:
        """Where a path lands: harmless, protected, critical, workspace, git, scratch ..."""
        path = expand_path(word, self.cwd, self.home)
        if path is None:
            return "unknown"
        fixed = fixed_prefix(path)
        home = self.home or PurePosixPath("/nonexistent-home")
        rules = self.rules
        checks: tuple[tuple[str, Callable[[], bool]], ...] = (
            ("harmless", lambda: self._matches(path, rules.harmless_paths)),
            ("protected", lambda: self._matches(path, rules.protected_paths)),
            ("protected", lambda: self._matches(fixed, rules.protected_paths)),
            # /, top-level folders, home and its parents: even when the workspace is one
            ("critical", lambda: fixed.parent in (fixed, _ROOT) or is_within(home, fixed)),
            ("workspace", lambda: is_within(fixed, self.workspace)),
            (
                "scratch",
                lambda: any(is_within(fixed, PurePosixPath(p)) for p in rules.scratch_paths),
            ),
            ("critical", lambda: is_within(self.workspace, fixed)),
        )
        place = next((name for name, check in checks if check()), "outside")
        if place == "workspace" and ".git" in fixed.relative_to(self.workspace).parts:
            return "git"
        return place

    def _matches(self, path: PurePosixPath, patterns: tuple[str, ...]) -> bool:
        return any(fnmatchcase(str(path), self._expand(p)) for p in patterns)

    def _expand(self, pattern: str) -> str:
        if pattern.startswith("~"):
            return str(self.home or "/nonexistent-home") + pattern[1:]
        return pattern

    def _secret(self, word: Word) -> None:
        text = word.text.removeprefix("file://").removeprefix("@")
        path = expand_path(replace(word, text=text), self.cwd, self.home)
        if path is None:
            return
        fixed = fixed_prefix(path)
        home = self.home or PurePosixPath("/nonexistent-home")
        for pattern in map(self._expand, self.rules.secret_paths):
            # a glob matches a secret when the secret's name fits the glob
            target = path.name if "/" not in pattern else str(path)
            hit = fnmatchcase(target, pattern) or (fixed != path and fnmatchcase(pattern, target))
            if "/" in pattern and not hit:
                # reading a folder that holds secrets under home (`grep -r x ~`)
                anchor = fixed_prefix(PurePosixPath(pattern))
                hit = is_within(anchor, home) and fixed != anchor and is_within(anchor, fixed)
            if hit:
                self.add("read_only", SECRET.format(path=word.text), secrets=True)
                return

    # -- commands with their own logic -------------------------------------------------

    def _cd(self, name: str, args: list[Word]) -> None:
        targets = [w for w in args if not w.text.startswith("-") or w.text == "-"]
        if name == "popd" or (targets and targets[0].text == "-"):
            self.cwd = None
        elif not targets:
            self.cwd = self.home
        else:
            self.cwd = expand_path(targets[0], self.cwd, self.home)

    def _eval(self, name: str, args: list[Word], ctx: _Ctx) -> None:
        self.add("system", INLINE_CODE.format(name=name), ask=True)
        if name == "eval":
            self._code(name, _joined(args), ctx)
            return
        for word in args:
            if self._downloads_in(word):
                self._opaque_code(name, word)
            self._secret(word)

    def _shell(self, name: str, args: list[Word], ctx: _Ctx) -> None:
        i, inline = 0, False
        while i < len(args) and args[i].text[:1] in ("-", "+") and args[i].text not in ("-", "--"):
            text = args[i].text
            inline = inline or (text[:1] == "-" and not text.startswith("--") and "c" in text[1:])
            i += 2 if text in ("-o", "+o", "-O", "+O") else 1
        rest = args[i + (1 if i < len(args) and args[i].text == "--" else 0) :]
        if any(a.text in self.rules.read_only_flags.get(name, ()) for a in args):
            return
        floor = self.policy.class_of(name)
        if floor is not None and floor != "read_only":
            self.add(floor, CLASS_REASONS[floor].format(name=name))
        if inline and rest:
            self._code(name, rest[0], ctx)
        elif name == "su" or (not rest and ctx.sudo and self._stdin_code(ctx) is None):
            self.add("dangerous" if ctx.sudo else "system", ROOT_SHELL.format(name=name), ask=True)
        elif rest and rest[0].text != "-":
            self._opaque_code(name, rest[0])
            self._secret(rest[0])
        else:
            self._stdin(name, ctx, shell=True)

    def _stdin_code(self, ctx: _Ctx) -> Redirect | None:
        return next((r for r in ctx.redirects if r.op in ("<<", "<<-", "<<<", "<")), None)

    def _stdin(self, name: str, ctx: _Ctx, *, shell: bool) -> None:
        """An interpreter that reads code from stdin: a here-document, a file or a pipe."""
        source = self._stdin_code(ctx)
        if shell and source is not None and source.op != "<":
            body = source.body or ""
            self._code(name, source.target or Word(body, body), ctx)
            return
        target = source.target if source is not None else None
        if target is not None and (self._downloads_in(target) or self._is_socket(target)):
            self.add("dangerous", DOWNLOAD_RUN.format(name=name))
        self.add("system", STDIN_CODE.format(name=name), ask=True)
        if source is None and any(stage > 0 for _, stage in ctx.pipes):
            self._readers.append((name, ctx.pipes))

    def _interpreter(self, name: str, args: list[Word], ctx: _Ctx) -> None:
        opts, positionals, _ = split_options(args, self.rules.value_options.get(name, ()))
        if any(flag_matches(o, f) for o in opts for f in self.rules.read_only_flags.get(name, ())):
            return
        code = next((w for w in args if self._downloads_in(w)), None)
        if code is not None:
            self._opaque_code(name, code)
        elif any(o.name in _CODE_FLAGS for o in opts) or (
            positionals and positionals[0].text != "-"
        ):
            self.add("system", INLINE_CODE.format(name=name), ask=True)
        else:
            self._stdin(name, ctx, shell=False)
        for word in positionals:
            self._secret(word)

    def _extra_git(self, call: _Call, cls: CommandClass) -> None:
        if call.key == "git config":
            first = call.positionals[0].text if call.positionals else ""
            writes = any(o.name in _GIT_CONFIG_WRITES for o in call.options)
            if writes or first in ("set", "unset", "edit") or len(call.positionals) >= 2:
                self.add("system", GIT_CONFIG, ask=True)
        repo = next((o.value for o in call.own if o.name == "-C" and o.value), None)
        if repo is not None and _RANK[cls] >= _RANK["workspace_write"]:
            self._check_cwd(call.key, repo)

    def _check_cwd(self, name: str, folder: Word | None = None) -> None:
        """Check the folder a write with no named target lands in (the working folder)."""
        if self._place(folder or Word(".", ".")) not in ("workspace", "scratch"):
            shown = folder.text if folder else str(self.cwd or "an unknown folder")
            self.add("system", RUNS_ELSEWHERE.format(name=name, path=shown), ask=True)

    def _extra_sed(self, call: _Call, cls: CommandClass) -> None:
        opts = call.all_options
        scripts = [o.value for o in opts if o.name in ("-e", "--expression") and o.value]
        files = list(call.positionals)
        from_file = any(o.name in ("-f", "--file") for o in opts)
        if not scripts and files and not from_file:
            scripts, files = [files[0]], files[1:]
        if from_file or any(not s.literal or sed_script_is_risky(s.text) for s in scripts):
            self.add("system", SED_SCRIPT, ask=True)
        if any(flag_matches(o, f) for o in opts for f in ("-i", "--in-place")):
            for word in files:
                self._write(word, "workspace_write", "sed -i")

    def _extra_awk(self, call: _Call, cls: CommandClass) -> None:
        program = call.positionals[:1]
        from_file = any(o.name in ("-f", "--file", "-i", "--include") for o in call.own)
        if from_file or any(not p.literal or any(t in p.text for t in _AWK_RISKY) for p in program):
            self.add("system", AWK_PROGRAM, ask=True)

    def _find_starts(self, call: _Call) -> list[Word]:
        starts: list[Word] = []
        for word in call.args:
            if word.text[:1] in ("-", "(", "!"):
                break
            starts.append(word)
        return starts or [Word(".", ".")]

    def _extra_find(self, call: _Call, cls: CommandClass) -> None:
        if any(w.text == "-delete" for w in call.args):
            for start in self._find_starts(call):
                self._write(start, "destructive", "find -delete", recursive=True)

    def _find_exec(self, call: _Call, ctx: _Ctx) -> None:
        """Classify the command of `-exec CMD {} ;` once per start folder."""
        args = call.args
        for i, word in enumerate(args):
            if word.text not in ("-exec", "-execdir", "-ok", "-okdir"):
                continue
            end = next(
                (j for j in range(i + 1, len(args)) if args[j].text in (";", "+")), len(args)
            )
            for start in self._find_starts(call):
                found = replace(start, text=f"{start.text}/*", source=f"{start.source}/*")
                inner = [found if w.text == "{}" else w for w in args[i + 1 : end]]
                self._argv(inner, replace(ctx, depth=ctx.depth + 1))

    def _extra_tar(self, call: _Call, cls: CommandClass) -> None:
        mode, archive, folder = "", None, None
        args, i = call.args, 0
        while i < len(args):
            name, eq, value = args[i].text.partition("=")
            if name.startswith("--"):
                mode = _TAR_LONG_MODES.get(name, mode)
                if name in ("--file", "--directory") and not eq and i + 1 < len(args):
                    i += 1
                chosen = replace(args[i], text=value) if eq else args[i]
                archive = chosen if name == "--file" else archive
                folder = chosen if name == "--directory" else folder
            elif name.startswith("-"):
                for letter in args[i].text[1:]:
                    mode = _TAR_MODES.get(letter, mode)
                    if letter in _TAR_VALUE_LETTERS and i + 1 < len(args):
                        i += 1
                        archive = args[i] if letter == "f" else archive
                        folder = args[i] if letter == "C" else folder
            i += 1
        if mode == "extract":
            self._write(folder or Word(".", "."), "workspace_write", "tar -x")
        elif mode == "create" and archive is not None and archive.text != "-":
            self._write(archive, "workspace_write", "tar")

    def _extra_dd(self, call: _Call, cls: CommandClass) -> None:
        for word in call.positionals:
            key, eq, value = word.text.partition("=")
            if eq and key in ("of", "if"):
                target = replace(word, text=value, tilde=value.startswith("~"))
                if key == "of":
                    self._write(target, "destructive", "dd", verb="overwrites")
                else:
                    self._secret(target)


def _joined(words: list[Word]) -> Word:
    """Words joined by spaces, as `eval` and `watch` hand them to the shell."""
    text = " ".join(w.text for w in words)
    params = tuple(p for w in words for p in w.params)
    inner = tuple(n for w in words for n in w.inner)
    return Word(text, text, params, any(w.substituted for w in words), False, inner)


def _upstream(download: tuple[tuple[int, int], ...], reader: tuple[tuple[int, int], ...]) -> bool:
    """Whether the download runs in an earlier stage of a pipeline the reader is in."""
    return any(pid == rid and stage < rstage for pid, stage in download for rid, rstage in reader)


def _remote(text: str) -> bool:
    return "://" in text or ":" in text.split("/", 1)[0]
