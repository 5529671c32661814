"""Draft and check the option tables of `ducklm/tools/commands/option_tables.py`.

The tables are curated (which options write files or run code is a judgement the
help text does not make), but the list of options and which take a value comes from
the programs themselves. On a machine with the programs installed:

    python scripts/option_tables.py check          # every table against `CMD --help`
    python scripts/option_tables.py draft sort     # a draft entry to paste and curate

`check` prints, per command, options the program lists that the table lacks (the
policy would ask for them: harmless but noisy) and options the table has that the
program does not list (hand-added ones, such as undocumented aliases, are fine).
It exits 1 when a table lacks an option the program documents.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

from ducklm.tools.commands.getopt import OptionSpec
from ducklm.tools.commands.option_tables import OPTION_SPECS

# `-o, --output=FILE`, `-i[SUFFIX], --in-place[=SUFFIX]`, `-e script`, `--debug`
_LEFT = re.compile(r"^\s{1,8}(-[^\s].*?)(?:\s{2,}|$)")
_ITEM = re.compile(r"^(--?)([A-Za-z0-9][\w-]*)(\[?=|\[|\s+|)(\S*)")


def help_options(command: str) -> tuple[dict[str, str], dict[str, str]]:
    """Short and long options `command --help` lists, each with its kind."""
    text = _help_text(command)
    shorts: dict[str, str] = {}
    longs: dict[str, str] = {}
    for line in text.splitlines():
        left = _LEFT.match(line)
        if left is None:
            continue
        items = [_ITEM.match(part.strip()) for part in left.group(1).split(", ")]
        found = [m for m in items if m is not None]
        # `-o, --output=FILE`: -o takes a value; `--color[=WHEN]`'s short is a flag
        takes = any(_kind(m) == "value" for m in found if m.group(1) == "--")
        for match in found:
            dashes, name, own = match.group(1), match.group(2), _kind(match)
            if dashes == "--":
                longs[name] = own
            elif len(name) == 1:
                shorts[name] = own if own != "flag" else ("value" if takes else "flag")
    return shorts, longs


def _kind(match: re.Match[str]) -> str:
    sep, value = match.group(3), match.group(4)
    if sep.startswith("["):
        return "optional"
    if sep == "=" or (sep.strip() == "" and sep and value and not value.startswith("-")):
        return "value"
    return "flag"


def _help_text(command: str) -> str:
    done = subprocess.run(
        [command, "--help"], capture_output=True, text=True, timeout=10, check=False
    )
    return done.stdout + done.stderr


def draft(command: str) -> str:
    """A table entry for `command` from its help text."""
    shorts, longs = help_options(command)
    mark = {"flag": "", "value": ":", "optional": "::"}
    short = "".join(letter + mark[kind] for letter, kind in sorted(shorts.items()))
    lmark = {"flag": "", "value": "=", "optional": "?"}
    long = " ".join(name + lmark[kind] for name, kind in longs.items())
    return f'    "{command}": OptionSpec(\n        short="{short}",\n        long="{long}",\n    ),'


def check(command: str, spec: OptionSpec) -> list[str]:
    """What the table of `command` lacks or has beyond its help text."""
    shorts, longs = help_options(command)
    problems = []
    missing = [f"-{s}" for s in shorts if spec.short_kind(s) is None]
    missing += [f"--{n}" for n in longs if n not in spec.long_kinds and n.islower()]
    if missing:
        problems.append(f"{command}: the table lacks {' '.join(missing)}")
    wrong = [f"--{n}" for n, k in longs.items() if spec.long_kinds.get(n, k) not in (k, "optional")]
    if wrong:
        problems.append(f"{command}: the table has another value kind for {' '.join(wrong)}")
    return problems


def main(argv: list[str]) -> int:
    """Run `check` or `draft`."""
    if argv[:1] == ["draft"]:
        for command in argv[1:]:
            print(draft(command))
        return 0
    failed = False
    for command, spec in sorted(OPTION_SPECS.items()):
        if shutil.which(command) is None or command in _NOT_GNU_HELP:
            continue
        for problem in check(command, spec):
            failed = failed or "lacks" in problem
            print(problem)
    return 1 if failed else 0


# their help is not in GNU's `-x, --long=VALUE` layout (or they have none)
_NOT_GNU_HELP = frozenset({"mawk", "awk", "nawk", "xxd", "hexdump", "bc", "less", "more"})

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
