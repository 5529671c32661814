"""The walk over a parsed command: every simple command, through wrappers and nested code.

Assignments and redirections are checked, wrappers (`env`, `sudo`, `xargs` ...) are
peeled off to reach the command they run, and code handed over as a string is parsed
and walked in turn, up to `MAX_DEPTH` levels. The working folder follows `cd`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

from ducklm.tools.commands.argument_rules import TOOL_RULES, find_exec_commands, tool_args
from ducklm.tools.commands.calls import Ctx, classify_call, split_call
from ducklm.tools.commands.code import ROOT_SHELL, CodeCommands, joined
from ducklm.tools.commands.findings import DOWNLOAD_RUN, Findings
from ducklm.tools.commands.options import Opt, flag_matches, next_option
from ducklm.tools.commands.parse import CommandParseError, parse_command
from ducklm.tools.commands.paths import Places
from ducklm.tools.commands.rules import RuleIndex, WrapperRule
from ducklm.tools.commands.verdict import CLASS_REASONS, CommandClass
from ducklm.tools.commands.words import GLOB_CHARS, ParsedCommand, Pipes, SimpleCommand, Word

MAX_DEPTH = 6

UNKNOWN_PROGRAM = "runs {name}, a program the policy does not know"
NAME_EXPANDS = "the command name comes from an expansion: {name}"
DANGEROUS_ENV = "{name}= changes which code runs"
SUDO = "{name} runs a command as root"
FORK_BOMB = "fork bomb: {name} starts copies of itself"
TOO_DEEP = "commands are nested too deeply to analyse"
CLEARS_ENV = "{name} {option} drops the environment the sandbox gives commands (git's settings)"
# builtins that set variables by name: `read PATH`, `printf -v PAGER ...`, `export X=1`;
# `unset GIT_CONFIG_COUNT` takes away the sandbox's git settings
_VARIABLE_SETTERS = frozenset({"export", "declare", "typeset", "local", "readonly", "read",
                               "printf", "mapfile", "readarray", "getopts", "unset"})  # fmt: skip
_CLEARING = {"env": ("-i", "--ignore-environment", "-u", "--unset"), "exec": ("-c",)}
_NAME_OR_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\+?=|$)")


class Analysis(Findings):
    """The findings of one `classify` call; keeps the working folder as `cd` moves it."""

    def __init__(self, index: RuleIndex, workspace: PurePosixPath, home: PurePosixPath) -> None:
        super().__init__(index, Places(index.rules, workspace, home, workspace))
        self._code_commands = CodeCommands(self, self.code)

    def run(self, parsed: ParsedCommand, base: Ctx) -> None:
        """Classify every simple command of one parse."""
        saved = self.readers, self.downloads
        self.readers, self.downloads = [], []
        for name in parsed.fork_bombs:
            self.add("dangerous", FORK_BOMB.format(name=name))
        for reason in parsed.hidden:
            self.add("system", reason, ask=True)
        for command in parsed.commands:
            self._simple(command, parsed.functions, base)
        for name, pipes in self.readers:
            if any(_upstream(download, pipes) for download in self.downloads):
                self.add("dangerous", DOWNLOAD_RUN.format(name=name))
        self.readers, self.downloads = saved

    def argv(self, words: list[Word], ctx: Ctx, functions: frozenset[str] = frozenset()) -> None:
        """Classify a command line, through the wrappers in front of its command."""
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

    def code(self, name: str, code: Word, ctx: Ctx) -> None:
        """Classify shell code given as a string (`bash -c`, `eval`, `watch`)."""
        if not code.literal:
            self.opaque_code(name, code)
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
            cwd = self.places.cwd
            self.run(parsed, Ctx(sudo=ctx.sudo, depth=ctx.depth + 1))
            self.places.cwd = cwd  # a child shell's `cd` does not move this one

    def _simple(self, command: SimpleCommand, functions: frozenset[str], base: Ctx) -> None:
        ctx = replace(base, pipes=command.pipes, redirects=command.redirects)
        for assignment in command.assignments:
            self._assignment(assignment, statement=not command.words)
        for redirect in command.redirects:
            self.redirect(redirect)
        if command.words:
            self.argv(list(command.words), ctx, functions)

    def _assignment(self, word: Word, *, statement: bool) -> None:
        name = word.text.partition("=")[0].rstrip("+")
        if any(fnmatchcase(name, pattern) for pattern in self.rules.dangerous_env):
            self.add("system", DANGEROUS_ENV.format(name=name), ask=True)
        if statement and name == "HOME":
            self.places.home = None
        if statement and name == "PWD":
            self.places.cwd = None

    # -- command names and wrappers ---------------------------------------------------

    def _is_known(self, name: str) -> bool:
        rules = self.rules
        return (
            self.index.class_of(name) is not None
            or name in rules.shells
            or name in rules.interpreters
            or name in self.index.subcommand_tools
        )

    def _name(self, word: Word) -> str | None:
        """The command a word names, or None (with a finding) when it cannot be known."""
        text = word.text
        if not word.literal or (text != "[" and any(c in text for c in GLOB_CHARS)):
            cls: CommandClass = "dangerous" if self.downloads_in(word) else "system"
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
        self, name: str, rule: WrapperRule, args: list[Word], ctx: Ctx
    ) -> tuple[list[Word], Ctx] | None:
        """The command a wrapper runs, or None when it runs none the policy can see."""
        if rule.floor != "read_only" or rule.sudo:
            reason = SUDO if rule.sudo else CLASS_REASONS[rule.floor]
            self.add(rule.floor, reason.format(name=name), sudo=rule.sudo)
        ctx = replace(ctx, sudo=ctx.sudo or rule.sudo, appended=ctx.appended or rule.appends)
        options = self._wrapper_options(name, rule, args, ctx)
        if options is None:
            return None
        i, ctx = options
        while rule.assignments and i < len(args) and "=" in args[i].text:
            self._assignment(args[i], statement=False)
            i += 1
        rest = args[i + rule.skip :]
        if not rest:
            if ctx.root_shell:
                self.add("dangerous", ROOT_SHELL.format(name=name), sudo=ctx.sudo)
            return None
        if rule.joins:
            self.code(name, joined(rest), ctx)
            return None
        return rest, ctx

    def _wrapper_options(
        self, name: str, rule: WrapperRule, args: list[Word], ctx: Ctx
    ) -> tuple[int, Ctx] | None:
        """The index after a wrapper's options, or None when it runs no command after them."""
        value_options = (*rule.value_options, *rule.code_options)
        i = 0
        while i < len(args) and args[i].text.startswith("-") and args[i].text != "-":
            if args[i].text == "--":
                return i + 1, ctx
            opt, i = next_option(args, i, value_options)
            if any(flag_matches(opt, f) for f in _CLEARING.get(name, ())):
                self._clears_env(name, opt)
            if any(flag_matches(opt, f) for f in rule.lookup_options):
                return None
            if any(flag_matches(opt, f) for f in rule.shell_options):
                ctx = replace(ctx, root_shell=True)
            if opt.value is not None and opt.name in rule.code_options:
                self.code(name, opt.value, ctx)
                return None
            if opt.value is not None and opt.name in self.rules.write_options.get(name, ()):
                self.write(opt.value, "workspace_write", name)
            elif opt.value is not None:
                self.secret(opt.value)  # xargs -a FILE
        return i, ctx

    def _clears_env(self, name: str, opt: Opt) -> None:
        """`env -i`, `exec -c`, `env -u NAME`: the last only matters for a risky NAME."""
        if opt.value is None:
            self.add("system", CLEARS_ENV.format(name=name, option=opt.name), ask=True)
        else:
            self._assignment(replace(opt.value, text=opt.value.text + "="), statement=False)

    # -- commands ---------------------------------------------------------------------

    def _command(self, name: str, args: list[Word], ctx: Ctx) -> None:
        if name in self.rules.shells:
            self._code_commands.shell(name, args, ctx)
        elif name in self.rules.interpreters:
            self._code_commands.interpreter(name, args, ctx)
        elif name in ("cd", "pushd", "popd"):
            self.places.change_folder(name, args)
        elif name in _VARIABLE_SETTERS:
            for word in args:
                if _NAME_OR_ASSIGNMENT.match(word.text):
                    self._assignment(word, statement=True)
        elif name in ("source", ".", "eval"):
            self._code_commands.evaluate(name, args, ctx)
        else:
            self._tool(name, tool_args(name, args), ctx)

    def _tool(self, name: str, args: list[Word], ctx: Ctx) -> None:
        call = split_call(self.index, name, args)
        cls = classify_call(self, call, ctx)
        rule = TOOL_RULES.get(name)
        if rule is not None:
            rule(self, call, cls)
        if name == "find":
            for argv in find_exec_commands(call):
                self.argv(argv, replace(ctx, depth=ctx.depth + 1))


def _upstream(download: Pipes, reader: Pipes) -> bool:
    """Whether the download runs in an earlier stage of a pipeline the reader is in."""
    return any(pid == rid and stage < rstage for pid, stage in download for rid, rstage in reader)
