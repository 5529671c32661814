"""Options of a command line: which words are options, their values, and flag matching."""

from __future__ import annotations

from dataclasses import dataclass

from ducklm.tools.commands.words import Word


@dataclass(frozen=True)
class Opt:
    """One option of a command line, with its value when it takes one."""

    name: str
    """The option itself: `-o` for `-ofile`, `--output` for `--output=file`."""
    value: Word | None = None


def split_options(
    words: tuple[Word, ...] | list[Word], value_options: tuple[str, ...], *, stop: bool = False
) -> tuple[list[Opt], list[Word], list[Word]]:
    """Options, positionals, and (with `stop`) the words from the first positional on.

    GNU tools take options after positionals too, so without `stop` all are collected.
    """
    opts: list[Opt] = []
    positionals: list[Word] = []
    i = 0
    while i < len(words):
        text = words[i].text
        if text == "--":
            rest = list(words[i + 1 :])
            return (opts, [], rest) if stop else (opts, [*positionals, *rest], [])
        if not text.startswith("-") or text == "-":
            if stop:
                return opts, [], list(words[i:])
            positionals.append(words[i])
            i += 1
        else:
            opt, i = next_option(words, i, value_options)
            opts.append(opt)
    return opts, positionals, []


def next_option(
    words: tuple[Word, ...] | list[Word], i: int, value_options: tuple[str, ...]
) -> tuple[Opt, int]:
    """The option at `words[i]` and the index after it and its value."""
    if words[i].text in value_options:
        return Opt(words[i].text, words[i + 1] if i + 1 < len(words) else None), i + 2
    return _attached(words[i], value_options), i + 1


def _attached(word: Word, value_options: tuple[str, ...]) -> Opt:
    text = word.text
    name, eq, value = text.partition("=")
    if eq and name.startswith("--"):
        return Opt(name, value_word(word, value))
    short = text[:2]
    if not text.startswith("--") and len(text) > 2 and short in value_options:
        return Opt(short, value_word(word, text[2:]))
    return Opt(name if eq else text)


def value_word(word: Word, value: str) -> Word:
    """The part `value` of `word` (`--output=x`, `-ox`) as a word of its own."""
    # `--output=~/x`: tools may expand the ~ themselves, so assume they do
    return Word(
        value, word.source, word.params, word.substituted, value.startswith("~"), word.inner
    )


def flag_matches(opt: Opt, flag: str) -> bool:
    """Whether `opt` is `flag`: `-x` also in bundles (`-rx`), `--long` also abbreviated."""
    name = opt.name
    if flag.startswith("--"):
        return len(name) > 2 and name.startswith("--") and flag.startswith(name)
    if len(flag) == 2 and opt.value is None and not name.startswith("--"):
        return flag[1] in name[1:]
    return name == flag


def names_option(opt: Opt, name: str) -> bool:
    """Whether `opt` is the option `name`; a long one also abbreviated (`--out`, `--output`).

    For tools without an option table: an abbreviation that fits several options is
    taken as each of them, which can only ask more.
    """
    if opt.name == name:
        return True
    long = name.startswith("--") and opt.name.startswith("--") and len(opt.name) > 2
    return long and name.startswith(opt.name)
