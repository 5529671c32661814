"""Options read the way the program reads them: GNU getopt_long, from a table.

What the policy sees must be what the program does: `sed --expr='1e id'` is
`sed --expression`, `sort --out=x` is `sort --output`, `sed -ni.bak` is `-n -i.bak`,
mawk's `-W exec` is `--exec`, and after `--` nothing is an option. An option the
table does not have, or an abbreviation that fits more than one, is a `problem`:
the program would refuse it or do something the table cannot tell, so the call asks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ducklm.tools.commands.options import Opt, value_word
from ducklm.tools.commands.words import Word

UNKNOWN_OPTION = "{name}: option {option} is not known to the policy"
AMBIGUOUS_OPTION = "{name}: option {option} is ambiguous ({choices})"


@dataclass(frozen=True)
class OptionSpec:
    """How one program reads its options.

    `short` is getopt's optstring (`"nf:i::"`: `-n` a flag, `-f` takes a value, `-i`
    an attached optional one); `long` names the long options, space-separated, with
    `=` when they take a value and `?` when it is optional (`"file= in-place?"`).
    """

    short: str = ""
    long: str = ""
    writes: tuple[str, ...] = ()
    """Options whose value names a file the program writes (replacing it)."""
    risky: dict[str, str] = field(default_factory=dict)
    """Options that run code, write or change the system: option -> why it asks."""
    stop: bool = False
    """Options end at the first positional (awk's program, POSIX programs)."""
    numbers: bool = False
    """`-5` is an option (`head -5`, `tail -5`, `fold -80`)."""
    abbrev: bool = True
    """Long options may be abbreviated (getopt_long); git's own options may not."""
    w_long: bool = False
    """`-W name[=value]` means `--name[=value]` (awk)."""

    def short_kind(self, letter: str) -> str | None:
        """The kind of `-letter`: flag, value or optional; None when it is not an option."""
        at = self.short.find(letter)
        if letter == ":" or at < 0:
            return None
        if self.short[at + 1 : at + 3] == "::":
            return "optional"
        return "value" if self.short[at + 1 : at + 2] == ":" else "flag"

    @property
    def long_kinds(self) -> dict[str, str]:
        """Each long option's name (no dashes) and its kind, as `short_kind`."""
        kinds = {}
        for item in self.long.split():
            kind = {"=": "value", "?": "optional"}.get(item[-1], "flag")
            kinds[item.rstrip("=?")] = kind
        return kinds


@dataclass(frozen=True)
class Parsed:
    """A command line's options (canonical names), positionals, and problems."""

    opts: list[Opt]
    positionals: list[Word]
    problems: list[str]


def parse_options(name: str, spec: OptionSpec, words: list[Word] | tuple[Word, ...]) -> Parsed:
    """Read `words` as the program `name` with options `spec` would."""
    state = _State(name, spec, list(words))
    while state.i < len(state.words):
        text = state.words[state.i].text
        if text == "--":
            state.positionals.extend(state.words[state.i + 1 :])
            break
        if text.startswith("--"):
            state.long(text[2:])
        elif text.startswith("-") and text != "-":
            state.short(text)
        elif spec.stop:
            state.positionals.extend(state.words[state.i :])
            break
        else:
            state.positionals.append(state.words[state.i])
            state.i += 1
    return Parsed(state.opts, state.positionals, state.problems)


@dataclass
class _State:
    name: str
    spec: OptionSpec
    words: list[Word]
    i: int = 0
    opts: list[Opt] = field(default_factory=list)
    positionals: list[Word] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def long(self, body: str, spelled: str | None = None) -> None:
        """`--name`, `--name=value` or `--name value`; `spelled` is the word as written."""
        word = self.words[self.i]
        self.i += 1
        spelled = spelled or word.text
        given, eq, value = body.partition("=")
        full = self._resolve(given, spelled.partition("=")[0])
        if full is None:
            return
        kind = self.spec.long_kinds[full]
        if eq:
            self.opts.append(Opt(f"--{full}", value_word(word, value)))
        elif kind == "value":
            self.opts.append(Opt(f"--{full}", self._next_word()))
        else:
            self.opts.append(Opt(f"--{full}"))

    def short(self, text: str) -> None:
        """A bundle of short options, the last possibly with its value (`-nfprog`)."""
        word = self.words[self.i]
        if self.spec.numbers and text[1:].isdigit():
            self.opts.append(Opt(text))
            self.i += 1
            return
        for at in range(1, len(text)):
            letter = text[at]
            kind = self.spec.short_kind(letter)
            if letter == "W" and self.spec.w_long:
                self._w_option(word, text[at + 1 :])
                return
            if kind is None:
                self.problems.append(_unknown(self.name, f"-{letter}"))
                self.i += 1
                return
            rest = text[at + 1 :]
            if kind == "flag":
                self.opts.append(Opt(f"-{letter}"))
                continue
            self.i += 1
            if rest or kind == "optional":
                self.opts.append(Opt(f"-{letter}", value_word(word, rest) if rest else None))
            else:
                self.opts.append(Opt(f"-{letter}", self._next_word()))
            return
        self.i += 1

    def _w_option(self, word: Word, attached: str) -> None:
        """The `-W name[=value]` of awk, `-Wname`, or `-W name value` for a value option."""
        if attached:
            self.long(attached, f"-W {attached}")
            return
        self.i += 1
        if self.i >= len(self.words):
            return
        self.long(self.words[self.i].text, f"-W {self.words[self.i].text}")

    def _resolve(self, given: str, spelled: str) -> str | None:
        kinds = self.spec.long_kinds
        if given in kinds:
            return given
        matches = [n for n in kinds if n.startswith(given)] if self.spec.abbrev and given else []
        if len(matches) == 1:
            return matches[0]
        if matches:
            choices = ", ".join(f"--{m}" for m in matches)
            reason = AMBIGUOUS_OPTION.format(name=self.name, option=spelled, choices=choices)
            self.problems.append(reason)
        else:
            self.problems.append(_unknown(self.name, spelled))
        return None

    def _next_word(self) -> Word | None:
        """The word at the index, as the value of the option before it; steps past it."""
        if self.i >= len(self.words):
            return None
        self.i += 1
        return self.words[self.i - 1]


def _unknown(name: str, option: str) -> str:
    return UNKNOWN_OPTION.format(name=name, option=option)
