"""Where bash evaluates arithmetic, which runs the commands hidden in it.

A subscript (`a[...]`), a substring offset (`${x:...}`), `((...))`, `let` and the
values of `declare -i` variables are arithmetic, and bash's arithmetic expands the
command substitutions it meets, also inside the values of the variables it reads:
`test -v 'a[$(id)]'` runs `id`, and so does `i='a[$(id)]'; echo ${b[i]}`. The policy
cannot follow values, so only a plain number (or `@`/`*`) is read as a subscript or
an offset; anything else asks. `${!x}` (the variable named by `x`, subscript and all)
and `${x@P}` (`x` expanded as a prompt, `$(...)` included) ask for the same reason.
"""

from __future__ import annotations

import re

from ducklm.tools.commands.words import Word

SUBSCRIPT = "bash evaluates the subscript of {name} as arithmetic, which can run commands"
OFFSET = "bash evaluates the offset in ${{{value}}} as arithmetic, which can run commands"
INDIRECT = "${{{value}}} expands a variable named at run time, subscript and all"
PROMPT = "${{{value}}} expands the variable as a prompt, which runs its commands"
ARITHMETIC = "{name} evaluates arithmetic, which can run commands"

_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_PLAIN_INDEX = re.compile(r"\s*-?\d+\s*|[@*]")
_PLAIN_NAME = re.compile(rf"{_IDENTIFIER}(?:\[(?:\s*-?\d+\s*|[@*])\])?")
_ASSIGNED = re.compile(rf"({_IDENTIFIER})(\[[^\]]*\])?(\+?=)")
_PARAMETER = re.compile(rf"{_IDENTIFIER}|\d+|[-@*#?$!]")
# bashlex ends a parameter at its first `}`: `${x:-${a[i]}}` arrives as `x:-${a[i]`
_NESTED = re.compile(r"\$\{([^{}]*)\}?")
# `${!prefix*}`, `${!prefix@}` (names) and `${!a[@]}` (keys) are lists, not indirection
_NAME_LISTS = re.compile(rf"{_IDENTIFIER}[*@]|{_IDENTIFIER}\[[*@]\]")


def plain_name(word: Word) -> bool:
    """Whether `word` names a variable without arithmetic: `x`, `a[3]`, `a[@]`."""
    return word.literal and _PLAIN_NAME.fullmatch(word.text) is not None


def assigned_name(word: Word) -> str | None:
    """The variable a `NAME=value` argument sets, or None when the name cannot be read.

    None when the name is an expansion, or has a subscript that is not a plain number:
    `declare 'a[$(id)]=1'` sets `a[$(id)]`, and bash runs `id` to find which element.
    """
    match = _ASSIGNED.match(word.text)
    if match is None:
        return None
    index = match.group(2)
    if index is not None and _PLAIN_INDEX.fullmatch(index[1:-1]) is None:
        return None
    return match.group(1)


def parameter_code(value: str) -> str | None:
    """Why a `${...}` expansion (its text inside the braces) may run code, or None."""
    if value.startswith("!") and len(value) > 1:
        return None if _NAME_LISTS.fullmatch(value[1:]) else INDIRECT.format(value=value)
    body = value[1:] if value.startswith("#") and len(value) > 1 else value
    name = _PARAMETER.match(body)
    rest = body[name.end() :] if name else ""
    if rest.startswith("["):
        end = rest.find("]")
        if end < 0 or _PLAIN_INDEX.fullmatch(rest[1:end]) is None:
            return SUBSCRIPT.format(name="${" + value + "}")
        rest = rest[end + 1 :]
    return _operator_code(value, rest)


def _operator_code(value: str, rest: str) -> str | None:
    """Why what follows a parameter's name (`:1:2`, `@P`, `:-${a[i]}`) may run code."""
    substring = rest[:1] == ":" and rest[1:2] not in ("-", "=", "?", "+")
    if substring and any(_PLAIN_INDEX.fullmatch(p) is None for p in rest[1:].split(":")):
        return OFFSET.format(value=value)
    if rest == "@P":
        return PROMPT.format(value=value)
    if "$[" in rest:
        return ARITHMETIC.format(name="$[...]")
    return next(filter(None, map(parameter_code, _NESTED.findall(rest))), None)
