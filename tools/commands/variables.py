"""Variables a command sets, by any form, and names that bash evaluates as code.

Programs obey variables (`PAGER`, `LESSOPEN`, `BASH_ENV`, `PS4`, `HOME`, `GIT_DIR` ...),
and no list of them is complete. A prefix (`X=v cmd`, `env X=v cmd`) shows the one
command it reaches, so it is checked against `dangerous_env`. Every other form reaches
every later command, and most hide the value (`for X in`, `read X`, `printf -v X`,
`mapfile X`, `getopts o X`): setting an environment-style name (no lowercase letter)
that way asks, and so does exporting any name (`export`, `declare -x`, `set -a`).
Lowercase names are the shell's own (`for f in *.py`) and run at once.

A name that is not a plain identifier (or one with a number for a subscript) asks, as
do `declare -i` / `-n` and `let`: see `arithmetic`. `mapfile -C` runs a callback.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from itertools import pairwise

from ducklm.tools.commands.arithmetic import ARITHMETIC, SUBSCRIPT, assigned_name, plain_name
from ducklm.tools.commands.findings import Findings
from ducklm.tools.commands.getopt import OptionSpec, Parsed, parse_options
from ducklm.tools.commands.options import Opt
from ducklm.tools.commands.words import Word

DANGEROUS_ENV = "{name}= changes which code runs"
SETS_ENVIRONMENT = "{how} sets {name}, a variable the commands after it may obey"
EXPORTS = "{how} puts {name} in the environment of every command after it"
EXPORTS_ALL = "set {option} puts every variable set after it in the environment"
UNREAD_NAME = "{how}: the variable name {name} is known only when it runs"
ATTRIBUTE = "{how} {option} makes later assignments {what}"
CALLBACK = "{how} -C runs a command for every few lines it reads"

_DECLARE = OptionSpec(short="aAfFgiIlnprtux", stop=True)
_SPECS: dict[str, OptionSpec] = {
    "for": OptionSpec(stop=True),
    "export": OptionSpec(short="fnp", stop=True),
    "declare": _DECLARE,
    "typeset": _DECLARE,
    "local": _DECLARE,
    "readonly": OptionSpec(short="aAfp", stop=True),
    "read": OptionSpec(short="ersa:d:i:n:N:p:t:u:", stop=True),
    "mapfile": OptionSpec(short="d:u:n:O:tC:c:s:", stop=True),
    "readarray": OptionSpec(short="d:u:n:O:tC:c:s:", stop=True),
    "printf": OptionSpec(short="v:", stop=True),
    "getopts": OptionSpec(stop=True),
    "unset": OptionSpec(short="fnv", stop=True),
    "wait": OptionSpec(short="fnp:", stop=True),
}
SETTERS = frozenset({*_SPECS, "set", "let"})
"""Builtins (and the `for` loop, as the parse reports it) that set variables by name."""

# what each attribute does to later assignments: both can run code or reach any variable
_ATTRIBUTES = {"-i": "arithmetic, which can run commands", "-n": "set the variable it names"}
_LISTING = frozenset({"export", "declare", "typeset", "local", "readonly", "unset"})
_NAME_OPTIONS = {"read": "-a", "printf": "-v", "wait": "-p"}
_SET_EXPORTS = frozenset({"allexport", "keyword"})


def environment_style(name: str) -> bool:
    """Whether `name` looks like an environment variable: letters, none lowercase."""
    return name.upper() == name and any(c.isalpha() for c in name)


@dataclass(frozen=True)
class Variables:
    """Classifies what sets variables: assignments, `for`, and the builtins that do."""

    found: Findings

    def assignment(self, word: Word, *, how: str, prefix: bool, exported: bool = False) -> None:
        """A `NAME=value` (or a bare `NAME`) set by `how`; `prefix`: for one command only."""
        name = _variable(word)
        if name is None:
            self._unreadable(how, word)
            return
        found = self.found
        if any(fnmatchcase(name, pattern) for pattern in found.rules.dangerous_env):
            found.add("system", DANGEROUS_ENV.format(name=name), ask=True)
        elif exported:
            found.add("system", EXPORTS.format(how=how, name=name), ask=True)
        elif not prefix and environment_style(name):
            found.add("system", SETS_ENVIRONMENT.format(how=how, name=name), ask=True)
        if not prefix and name == "HOME":
            found.places.home = None
        if not prefix and name == "PWD":
            found.places.cwd = None

    def builtin(self, name: str, args: list[Word]) -> None:
        """A builtin of `SETTERS` with its arguments (for `for`: the loop's variable)."""
        if name == "let":
            self.found.add("system", ARITHMETIC.format(name="let"), ask=True)
            return
        if name == "set":
            self._set(args)
            return
        if name in ("declare", "typeset", "local"):
            args = [w for w in args if not (w.text[:1] == "+" and w.text[1:].isalpha())]
        parsed = parse_options(name, _SPECS[name], args)
        for problem in parsed.problems:
            self.found.add("system", problem, ask=True)
        self._options(name, parsed.opts)
        given = {o.name for o in parsed.opts}
        if name in _LISTING and given & {"-f", "-F", "-p"}:
            return  # functions, or printing: no variable is set
        exported = (name == "export" and "-n" not in given) or "-x" in given
        for word in _named(name, parsed):
            self.assignment(word, how=name, prefix=False, exported=exported)

    def _options(self, name: str, opts: list[Opt]) -> None:
        for opt in opts:
            what = _ATTRIBUTES.get(opt.name)
            if what is not None and name in ("declare", "typeset", "local"):
                reason = ATTRIBUTE.format(how=name, option=opt.name, what=what)
                self.found.add("system", reason, ask=True)
            if opt.name == "-C" and name in ("mapfile", "readarray"):
                self.found.add("system", CALLBACK.format(how=name), ask=True)

    def _set(self, args: list[Word]) -> None:
        """`set -a` / `set -k` / `set -o allexport`: later assignments reach every command."""
        i = 0
        while i < len(args) and args[i].text[:1] in ("-", "+") and args[i].text not in ("-", "--"):
            text = args[i].text
            if text[0] == "-" and ("a" in text or "k" in text):
                self.found.add("system", EXPORTS_ALL.format(option=text), ask=True)
            if "o" in text and i + 1 < len(args):
                i += 1
                if text[0] == "-" and args[i].text in _SET_EXPORTS:
                    option = f"-o {args[i].text}"
                    self.found.add("system", EXPORTS_ALL.format(option=option), ask=True)
            i += 1

    def _unreadable(self, how: str, word: Word) -> None:
        shown = word.source
        reason = SUBSCRIPT if "[" in word.text else UNREAD_NAME
        self.found.add("system", reason.format(how=how, name=shown), ask=True)


def _variable(word: Word) -> str | None:
    """The variable `NAME` or `NAME=value` sets; None when it cannot be read as written."""
    if "=" in word.text:
        return assigned_name(word)
    return word.text.partition("[")[0] if plain_name(word) else None


def _named(name: str, parsed: Parsed) -> list[Word]:
    """The words of a parsed builtin that name the variables it sets."""
    option = _NAME_OPTIONS.get(name)
    values = [o.value for o in parsed.opts if o.name == option and o.value]
    words = parsed.positionals
    if name == "getopts":
        return words[1:2]
    if name in ("mapfile", "readarray", "for"):
        return words[:1]
    if name in ("printf", "wait"):
        return values
    return [*values, *words]


def tested_names(found: Findings, args: tuple[Word, ...]) -> None:
    """`test -v NAME` / `[ -R NAME ]`: a subscript in NAME is arithmetic."""
    for option, word in pairwise(args):
        if option.text in ("-v", "-R") and word.text != "]" and not plain_name(word):
            reason = SUBSCRIPT if "[" in word.text else UNREAD_NAME
            found.add("system", reason.format(how="test", name=word.source), ask=True)
