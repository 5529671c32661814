"""Commands that run code they are handed: shells, interpreters, `eval` and `source`.

Code given as a readable string (`bash -c 'ls'`, `eval ls`, a here-document fed to a
shell) is classified like any command line; code the policy cannot read asks, and code
that comes from a download (`bash <(curl ...)`, `curl ... | sh`) is dangerous.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ducklm.tools.commands.calls import Ctx
from ducklm.tools.commands.findings import DOWNLOAD_RUN, INLINE_CODE, Findings
from ducklm.tools.commands.options import flag_matches, split_options
from ducklm.tools.commands.verdict import CLASS_REASONS
from ducklm.tools.commands.words import Redirect, Word

ROOT_SHELL = "{name} starts a root shell"
STDIN_CODE = "{name} runs code it reads from its input"
STARTUP_FILES = "{name} {option} reads profile or rc files, which run code the policy cannot read"
ALWAYS_READS = "{name} reads its rc files at every start, which run code the policy cannot read"
# Login and interactive shells read profile and rc files (`~/.bash_profile`, `~/.bashrc`,
# `$ENV`), which an earlier command may have written; zsh and fish read theirs always,
# unless told not to.
_STARTUP_LETTERS = frozenset("li")
_STARTUP_LONG = ("--login", "--rcfile", "--init-file", "--interactive")
_ALWAYS_READS = {"zsh": ("-f", "--no-rcs"), "fish": ("-N", "--no-config")}
_CODE_FLAGS = frozenset({"-c", "-e", "-E", "--eval", "-p", "--print", "-r", "-m"})
_STDIN_OPS = ("<<", "<<-", "<<<", "<")

CodeRunner = Callable[[str, Word, Ctx], None]
"""Classifies shell code given as a string, on behalf of the named command."""


def joined(words: list[Word]) -> Word:
    """Words joined by spaces, as `eval` and `watch` hand them to the shell."""
    text = " ".join(w.text for w in words)
    params = tuple(p for w in words for p in w.params)
    inner = tuple(n for w in words for n in w.inner)
    return Word(text, text, params, any(w.substituted for w in words), False, inner)


@dataclass(frozen=True)
class CodeCommands:
    """Classifies commands that run code, handing readable code back to `run_code`."""

    found: Findings
    run_code: CodeRunner

    def evaluate(self, name: str, args: list[Word], ctx: Ctx) -> None:
        """`eval` runs its joined arguments; `source` and `.` run a file."""
        self.found.add("system", INLINE_CODE.format(name=name), ask=True)
        if name == "eval":
            self.run_code(name, joined(args), ctx)
            return
        for word in args:
            if self.found.downloads_in(word):
                self.found.opaque_code(name, word)
            self.found.secret(word)

    def shell(self, name: str, args: list[Word], ctx: Ctx) -> None:
        """A shell: runs `-c` code, a script file, or what it reads from its input."""
        found = self.found
        i, inline = 0, False
        while i < len(args) and args[i].text[:1] in ("-", "+") and args[i].text not in ("-", "--"):
            text = args[i].text
            inline = inline or (text[:1] == "-" and not text.startswith("--") and "c" in text[1:])
            i += 2 if text in ("-o", "+o", "-O", "+O") else 1
        rest = args[i + (1 if i < len(args) and args[i].text == "--" else 0) :]
        if any(a.text in found.rules.read_only_flags.get(name, ()) for a in args):
            return
        startup = _startup_files(name, args[:i])
        if startup is not None:
            found.add("system", startup, ask=True)
        floor = found.index.class_of(name)
        if floor is not None and floor != "read_only":
            found.add(floor, CLASS_REASONS[floor].format(name=name))
        if inline and rest:
            self.run_code(name, rest[0], ctx)
        elif name == "su" or (not rest and ctx.sudo and _stdin_source(ctx) is None):
            found.add("dangerous" if ctx.sudo else "system", ROOT_SHELL.format(name=name), ask=True)
        elif rest and rest[0].text != "-":
            found.opaque_code(name, rest[0])
            found.secret(rest[0])
        else:
            self._stdin(name, ctx, shell=True)

    def interpreter(self, name: str, args: list[Word], ctx: Ctx) -> None:
        """A language interpreter: inline code and scripts cannot be read, so it asks."""
        found = self.found
        opts, positionals, _ = split_options(args, found.rules.value_options.get(name, ()))
        read_only_flags = found.rules.read_only_flags.get(name, ())
        if any(flag_matches(o, f) for o in opts for f in read_only_flags):
            return
        code = next((w for w in args if found.downloads_in(w)), None)
        if code is not None:
            found.opaque_code(name, code)
        elif any(o.name in _CODE_FLAGS for o in opts) or (
            positionals and positionals[0].text != "-"
        ):
            found.add("system", INLINE_CODE.format(name=name), ask=True)
        else:
            self._stdin(name, ctx, shell=False)
        for word in positionals:
            found.secret(word)

    def _stdin(self, name: str, ctx: Ctx, *, shell: bool) -> None:
        """An interpreter that reads code from stdin: a here-document, a file or a pipe."""
        found = self.found
        source = _stdin_source(ctx)
        if shell and source is not None and source.op != "<":
            body = source.body or ""
            self.run_code(name, source.target or Word(body, body), ctx)
            return
        target = source.target if source is not None else None
        if target is not None and (found.downloads_in(target) or found.places.is_socket(target)):
            found.add("dangerous", DOWNLOAD_RUN.format(name=name))
        found.add("system", STDIN_CODE.format(name=name), ask=True)
        if source is None and any(stage > 0 for _, stage in ctx.pipes):
            found.readers.append((name, ctx.pipes))


def _startup_files(name: str, options: list[Word]) -> str | None:
    """Why a shell started with these options reads profile or rc files, or None."""
    for word in options:
        text = word.text
        short = text[:1] == "-" and not text.startswith("--")
        if (short and _STARTUP_LETTERS & set(text[1:])) or text.startswith(_STARTUP_LONG):
            return STARTUP_FILES.format(name=name, option=text)
    quiet = _ALWAYS_READS.get(name)
    if quiet is not None and not any(w.text in quiet for w in options):
        return ALWAYS_READS.format(name=name)
    return None


def _stdin_source(ctx: Ctx) -> Redirect | None:
    return next((r for r in ctx.redirects if r.op in _STDIN_OPS), None)
