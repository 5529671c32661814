"""The walk over a parsed command: every simple command, through wrappers and nested code.

Assignments and redirections are checked, wrappers (`env`, `sudo`, `xargs` ...) are
peeled off to reach the command they run, and code handed over as a string is parsed
and walked in turn, up to `MAX_DEPTH` levels. The working folder follows `cd`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePosixPath

from ducklm.tools.commands.argument_rules import TOOL_RULES, find_exec_commands, tool_args
from ducklm.tools.commands.calls import Ctx, classify_call, split_call
from ducklm.tools.commands.code import CodeCommands
from ducklm.tools.commands.findings import DOWNLOAD_RUN, Findings
from ducklm.tools.commands.parse import CommandParseError, parse_command
from ducklm.tools.commands.paths import Places
from ducklm.tools.commands.rules import RuleIndex
from ducklm.tools.commands.variables import SETTERS, Variables
from ducklm.tools.commands.verdict import CommandClass
from ducklm.tools.commands.words import GLOB_CHARS, ParsedCommand, Pipes, SimpleCommand, Word
from ducklm.tools.commands.wrappers import Wrappers

MAX_DEPTH = 6

UNKNOWN_PROGRAM = "runs {name}, a program the policy does not know"
NAME_EXPANDS = "the command name comes from an expansion: {name}"
FORK_BOMB = "fork bomb: {name} starts copies of itself"
TOO_DEEP = "commands are nested too deeply to analyse"


class Analysis(Findings):
    """The findings of one `classify` call; keeps the working folder as `cd` moves it."""

    def __init__(self, index: RuleIndex, workspace: PurePosixPath, home: PurePosixPath) -> None:
        super().__init__(index, Places(index.rules, workspace, home, workspace))
        self._code_commands = CodeCommands(self, self.code)
        self._variables = Variables(self)
        self._wrappers = Wrappers(self, self.code, self._variables)

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
            unwrapped = self._wrappers.unwrap(name, wrapper, words[1:], ctx)
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
        prefix = bool(command.words)
        for assignment in command.assignments:
            self._variables.assignment(assignment, how="an assignment", prefix=prefix)
        for redirect in command.redirects:
            self.redirect(redirect)
        if command.words:
            self.argv(list(command.words), ctx, functions)

    # -- command names ----------------------------------------------------------------

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

    # -- commands ---------------------------------------------------------------------

    def _command(self, name: str, args: list[Word], ctx: Ctx) -> None:
        if name in self.rules.shells:
            self._code_commands.shell(name, args, ctx)
        elif name in self.rules.interpreters:
            self._code_commands.interpreter(name, args, ctx)
        elif name in ("cd", "pushd", "popd"):
            self.places.change_folder(name, args)
        elif name in SETTERS:
            self._variables.builtin(name, args)
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
