"""Parse a shell command as bash does, into the simple commands it would run.

Splitting on whitespace (`shlex.split`) folds `ls` and `rm -rf x` on two lines into one
argv; bashlex builds bash's own parse tree, so every command inside pipelines, lists, subshells,
groups, substitutions, compound commands and functions is found. Text bashlex leaves
unexpanded (a here-document body, `${x:-$(cmd)}`) is parsed on its own and reported as
hidden, so the policy asks instead of trusting it. Nothing here touches the filesystem.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import bashlex

MAX_COMMAND_CHARS = 100_000
MAX_HIDDEN_DEPTH = 4

TOO_LONG = "the command is too long to analyse"
NUL_BYTE = "the command contains a NUL byte"
NOT_PARSED = "bash syntax the policy cannot read: {why}"
UNREAD_TAIL = "bash syntax the policy cannot read after position {pos}"
HIDDEN_HEREDOC = "a here-document runs commands inside its text"
HIDDEN_PARAMETER = "a ${...} expansion runs a command inside it"

_SUBSTITUTIONS = ("$(", "`", "<(", ">(")
# bashlex fails on quoted here-document delimiters (<<'EOF'); they are rewritten to an
# unquoted delimiter of the same length so every position still maps to the original.
_QUOTED_HEREDOC = re.compile(r"<<(-?)([ \t]*)(?:(['\"])([^'\"\s]+)\3|\\(\w+))")
# bashlex does not know the `time` keyword; it changes nothing, so it is blanked out.
_TIME_KEYWORD = re.compile(
    r"(?:^|(?<=[;&|({\n!])|(?<=\bdo)|(?<=\bthen)|(?<=\belse))\s*\btime(?:\s+-p)?(?=\s)"
)
_ANSI_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|.)")
_ESCAPES = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip
_COMMENT = re.compile(r"#[^\n]*")
_HOME_OR_PWD = re.compile(r"\$(?:\{(?:HOME|PWD)\}|(?:HOME|PWD)(?!\w))")
GLOB_CHARS = "*?[{"
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


class CommandParseError(ValueError):
    """bashlex could not read the command; the message says why, for a person."""


@dataclass(frozen=True)
class Word:
    """One word of a command, after bash's quote removal."""

    text: str
    """The word as the command receives it (exact only when `literal`)."""
    source: str
    """The word as written."""
    params: tuple[str, ...] = ()
    """Variables it expands (`$HOME` -> "HOME"); "?" for ones that cannot be named."""
    substituted: bool = False
    """It contains a command or process substitution, so its value is unknown."""
    tilde: bool = False
    """It starts with an unquoted `~`, which bash expands to a home folder."""
    inner: tuple[str, ...] = ()
    """Names of the commands its substitutions run (to spot `bash <(curl ...)`)."""

    @property
    def literal(self) -> bool:
        """Whether `text` is exactly what the command receives."""
        return not (self.params or self.substituted)


@dataclass(frozen=True)
class Redirect:
    """One redirection: `>`, `>>`, `<`, `2>&1`, `<<EOF` ..."""

    op: str
    target: Word | None
    """The file; None when a descriptor is duplicated or closed (`2>&1`, `>&-`)."""
    body: str | None = None
    """The text of a here-document."""


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command somewhere in the parse tree."""

    words: tuple[Word, ...]
    assignments: tuple[Word, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    pipes: tuple[tuple[int, int], ...] = ()
    """(pipeline id, stage) of every pipeline it sits in, outermost first."""


@dataclass(frozen=True)
class ParsedCommand:
    """Everything a command would run, and its canonical text."""

    commands: tuple[SimpleCommand, ...]
    normalized: str
    functions: frozenset[str]
    fork_bombs: tuple[str, ...]
    """Functions that start themselves in a pipeline or in the background."""
    hidden: tuple[str, ...]
    """Reasons some code could not be read with certainty."""


def parse_command(command: str) -> ParsedCommand:
    """Parse `command` as bash would.

    Raises:
        CommandParseError: It is too long, or bashlex cannot read all of it.
    """
    if len(command) > MAX_COMMAND_CHARS:
        raise CommandParseError(TOO_LONG)
    if "\x00" in command:
        raise CommandParseError(NUL_BYTE)  # bash would cut the command there
    walker = _Walker(command, depth=0)
    trees = walker.parse()
    for tree in trees:
        walker.visit(tree, ())
    return ParsedCommand(
        commands=tuple(walker.commands),
        normalized=_Renderer(command, walker.quoted).render_all(trees),
        functions=frozenset(walker.functions),
        fork_bombs=tuple(walker.fork_bombs),
        hidden=tuple(walker.hidden),
    )


def _preprocess(command: str) -> tuple[str, frozenset[int]]:
    """Rewrite what bashlex cannot read, keeping every character at its position."""
    quoted: set[int] = set()

    def unquote(match: re.Match[str]) -> str:
        quoted.add(match.start())
        dash, space, delim = match.group(1), match.group(2), match.group(4) or match.group(5)
        return f"<<{dash}{space}{delim}".ljust(len(match.group()))

    text = _QUOTED_HEREDOC.sub(unquote, command)
    text = _TIME_KEYWORD.sub(lambda m: re.sub(r"\S", " ", m.group()), text)
    return text, frozenset(quoted)


def _nodes(tree: Any) -> Iterator[Any]:
    """Every node under `tree`, itself included."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for key in ("parts", "list", "redirects"):
            stack.extend(getattr(node, key, None) or ())
        for key in ("command", "output", "heredoc"):
            child = getattr(node, key, None)
            if isinstance(child, bashlex.ast.node):
                stack.append(child)


class _Walker:
    """Collects the simple commands of one parse, in the order bash runs them."""

    def __init__(self, original: str, depth: int) -> None:
        self.original = original
        self.text, self.quoted = _preprocess(original)
        self.depth = depth
        self.commands: list[SimpleCommand] = []
        self.functions: set[str] = set()
        self.fork_bombs: list[str] = []
        self.hidden: list[str] = []
        self._pipelines = 0

    def parse(self) -> list[Any]:
        try:
            trees: list[Any] = bashlex.parse(self.text)
        except Exception as exc:  # bashlex raises many kinds; all mean "cannot read"
            raise CommandParseError(NOT_PARSED.format(why=str(exc) or type(exc).__name__)) from None
        self._check_coverage(trees)
        return trees

    def _check_coverage(self, trees: list[Any]) -> None:
        # bashlex.parse stops silently at a part it returns no node for: make sure
        # nothing but blanks and comments is left between and after the trees.
        pos = 0
        for tree in [*trees, None]:
            start = len(self.text) if tree is None else tree.pos[0]
            if _COMMENT.sub("", self.text[pos:start]).strip(" \t\n;"):
                raise CommandParseError(UNREAD_TAIL.format(pos=pos))
            if tree is not None:
                pos = max([pos, *(n.pos[1] for n in _nodes(tree) if hasattr(n, "pos"))])

    def visit(self, node: Any, pipes: tuple[tuple[int, int], ...]) -> None:
        kind = node.kind
        if kind == "command":
            self._command(node, pipes)
        elif kind == "pipeline":
            pipeline, stage = self._pipelines, 0
            self._pipelines += 1
            for part in node.parts:
                if part.kind == "pipe":
                    stage += 1
                else:
                    self.visit(part, (*pipes, (pipeline, stage)))
        elif kind == "compound":
            for part in node.list:
                self.visit(part, pipes)
            self._redirect_only(getattr(node, "redirects", None) or (), pipes)
        elif kind == "function":
            self._function(node, pipes)
        elif kind in ("list", "if", "for", "while", "until"):
            for part in node.parts:
                self.visit(part, pipes)
        elif kind == "word":
            self._word(node, pipes)  # for-loop items: their substitutions run
        elif kind not in ("reservedword", "operator", "pipe"):
            raise CommandParseError(NOT_PARSED.format(why=kind))

    def _command(self, node: Any, pipes: tuple[tuple[int, int], ...]) -> None:
        words: list[Word] = []
        assignments: list[Word] = []
        redirects: list[Redirect] = []
        for part in node.parts:
            if part.kind == "redirect":
                redirects.append(self._redirect(part, pipes))
            elif part.kind == "assignment" and not words:
                assignments.append(self._word(part, pipes))
            elif part.kind in ("word", "assignment"):
                words.append(self._word(part, pipes))
        self.commands.append(
            SimpleCommand(tuple(words), tuple(assignments), tuple(redirects), pipes)
        )

    def _redirect_only(self, nodes: Any, pipes: tuple[tuple[int, int], ...]) -> None:
        redirects = tuple(self._redirect(node, pipes) for node in nodes)
        if redirects:
            self.commands.append(SimpleCommand((), (), redirects, pipes))

    def _function(self, node: Any, pipes: tuple[tuple[int, int], ...]) -> None:
        name = node.name.word
        self.functions.add(name)
        start = len(self.commands)
        for part in node.parts:
            if part is not node.name:
                self.visit(part, pipes)
        calls = [c for c in self.commands[start:] if c.words and c.words[0].text == name]
        background = any(n.kind == "operator" and n.op == "&" for n in _nodes(node))
        if calls and (background or any(len(c.pipes) > len(pipes) for c in calls)):
            self.fork_bombs.append(name)

    def _word(self, node: Any, pipes: tuple[tuple[int, int], ...]) -> Word:
        source = self.original[node.pos[0] : node.pos[1]]
        params: list[str] = []
        substituted = tilde = False
        inner: list[str] = []
        for part in node.parts:
            if part.kind == "parameter":
                value = getattr(part, "value", None)
                if not value:
                    continue  # bashlex's misreading of $'...' and $"..." quoting
                params.append(value if isinstance(value, str) and value.isidentifier() else "?")
                if isinstance(value, str) and any(s in value for s in _SUBSTITUTIONS):
                    self._hidden(value, HIDDEN_PARAMETER, pipes)
            elif part.kind == "tilde":
                tilde = tilde or part.pos[0] == node.pos[0]
            elif part.kind in ("commandsubstitution", "processsubstitution"):
                substituted = True
                start = len(self.commands)
                self.visit(part.command, pipes)
                inner += [c.words[0].text for c in self.commands[start:] if c.words]
        text = unquote(source)
        if text is None:
            text, params = str(node.word), [*params, "?"]
        return Word(text, source, tuple(params), substituted, tilde, tuple(inner))

    def _redirect(self, node: Any, pipes: tuple[tuple[int, int], ...]) -> Redirect:
        if node.type in ("<<", "<<-"):
            raw = self.original[node.heredoc.pos[0] : node.heredoc.pos[1]]
            body = raw.rsplit("\n", 1)[0] if "\n" in raw else ""
            if node.pos[0] not in self.quoted and ("$(" in body or "`" in body):
                self._hidden(body, HIDDEN_HEREDOC, pipes)
            return Redirect(node.type, None, body)
        output = node.output
        if isinstance(output, bashlex.ast.node):
            return Redirect(node.type, self._word(output, pipes))
        return Redirect(node.type, None)

    def _hidden(self, text: str, reason: str, pipes: tuple[tuple[int, int], ...]) -> None:
        """Record code bashlex leaves unexpanded, and the commands it runs if readable."""
        self.hidden.append(reason)
        if self.depth >= MAX_HIDDEN_DEPTH:
            return
        start = min(i for s in _SUBSTITUTIONS if (i := text.find(s)) >= 0)
        inner = _Walker('echo "' + text[start:].replace('"', '\\"') + '"', self.depth + 1)
        try:
            for tree in inner.parse():
                inner.visit(tree, pipes)
        except CommandParseError:
            return  # the hidden reason already makes the verdict ask
        self.commands += inner.commands
        self.functions |= inner.functions
        self.fork_bombs += inner.fork_bombs
        self.hidden += inner.hidden


def unquote(source: str) -> str | None:
    """Bash's quote removal on one word as written; None if a quote is left open.

    bashlex gets mixed quoting wrong (`'a'"b"` comes back as `a'"b"`), which would let
    `> ''"/etc/passwd"` pass for a workspace file, so words are unquoted here.
    Expansions (`$x`) are kept as written.
    """
    out: list[str] = []
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c == "\\":
            out.append(source[i + 1 : i + 2].replace("\n", ""))
            i += 2
        elif c == "'" or source.startswith("$'", i):
            start = i + 1 if c == "'" else i + 2
            end = _skip_delimited(source, start, "'") if c == "$" else source.find("'", start) + 1
            body = source[start : end - 1] if end > 0 else None
            text = body if c == "'" or body is None else _ansi_unescape(body)
            if text is None:
                return None
            out.append(text)
            i = end
        elif c == '"' or source.startswith('$"', i):
            i = _unquote_double(source, i + (1 if c == '"' else 2), out)
            if i < 0:
                return None
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _unquote_double(source: str, i: int, out: list[str]) -> int:
    """Append the text of a double-quoted part from `i`; the index after it, or -1."""
    while i < len(source):
        c = source[i]
        if c == '"':
            return i + 1
        if c == "\\" and source[i + 1 : i + 2] in ("$", "`", '"', "\\", "\n"):
            out.append(source[i + 1].replace("\n", ""))
            i += 2
        else:
            out.append(c)
            i += 1
    return -1


def _ansi_unescape(body: str) -> str | None:
    def one(match: re.Match[str]) -> str:
        esc = match.group(1)
        if esc[0] in "xuU" and len(esc) > 1:
            return chr(int(esc[1:], 16))
        if esc[0] in "01234567":
            return chr(int(esc, 8) & 0xFF)
        if esc in _ESCAPES:
            return _ESCAPES[esc]
        if esc == "c":
            raise ValueError(esc)  # control characters: too rare to be worth decoding
        return "\\" + esc

    try:
        return _ANSI_ESCAPE.sub(one, body)
    except ValueError:
        return None


class _Renderer:
    """The canonical text of a parse: words single-spaced and quoted, operators kept."""

    def __init__(self, original: str, quoted: frozenset[int]) -> None:
        self.original = original
        self.quoted = quoted
        self.bodies: list[str] = []

    def render_all(self, trees: list[Any]) -> str:
        out = ""
        for tree in trees:
            text = self.render(tree)
            out = (
                text
                if not out
                else f"{out} {text}"
                if out.endswith(("&", ";"))
                else f"{out}; {text}"
            )
        return "".join([out, *("\n" + body for body in self.bodies)])

    def render(self, node: Any) -> str:
        kind = node.kind
        if kind in ("word", "assignment"):
            text = self._word(node)
        elif kind == "redirect":
            text = self._redirect(node)
        elif kind == "list":
            text = self._list(node.parts)
        elif kind in ("reservedword", "operator", "pipe"):
            text = str(getattr(node, "word", None) or getattr(node, "op", None) or node.pipe)
        elif kind == "function":
            text = f"{self.render(node.name)}() {self.render(node.body)}"
        else:
            parts = node.list if kind == "compound" else node.parts
            parts = [*parts, *(getattr(node, "redirects", None) or ())]
            text = " ".join(self.render(p) for p in parts)
        return text

    def _list(self, parts: list[Any]) -> str:
        out = ""
        for part in parts:
            if part.kind == "operator":
                out += ";" if part.op in (";", "\n") else f" {part.op}"
            else:
                out += f" {self.render(part)}" if out else self.render(part)
        return out

    def _word(self, node: Any) -> str:
        source = self.original[node.pos[0] : node.pos[1]]
        if node.parts or any(c in source for c in f"$\\{GLOB_CHARS}"):
            # as written: `$(x)` must not match `'$(x)'`, nor `*.o` match `'*.o'`, and
            # bashlex drops backslashes bash keeps ("a\b")
            return source
        word = unquote(source)
        if word is None:
            return source
        if node.kind == "assignment":
            name, _, value = word.partition("=")
            return f"{name}={shlex.quote(value)}"
        if _ASSIGNMENT.match(word):
            # a quoted 'A=b' is a command name, not an assignment: keep them apart
            return "'" + word.replace("'", "'\"'\"'") + "'"
        return shlex.quote(word)

    def _redirect(self, node: Any) -> str:
        fd = "" if node.input is None else str(node.input)
        if node.type in ("<<", "<<-"):
            raw = self.original[node.heredoc.pos[0] : node.heredoc.pos[1]]
            self.bodies.append(raw)
            delim = node.output.word
            return f"{fd}{node.type}" + (f"'{delim}'" if node.pos[0] in self.quoted else delim)
        output = node.output
        target = self._word(output) if isinstance(output, bashlex.ast.node) else str(output)
        return f"{fd}{node.type}{target}"


_SED_SKIP = " \t\n;{}!0123456789$,~+"
_SED_TO_EOL = "aicrR#"  # text, file names and comments run to the end of the line
_SED_LABEL = "btT:"  # labels end at ";" or a newline
_SED_PLAIN = "dDgGhHlLnNpPqQxz=Fv"


def sed_script_is_risky(script: str) -> bool:
    """Whether a sed script can write files or run commands (`w`, `W`, `e`, `s///w`).

    Anything this small scanner cannot follow counts as risky.
    """
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in _SED_SKIP:
            i += 1
        elif c in "/\\":  # a regex address: /re/ or \%re%
            i = _skip_delimited(script, i + 1, "/") if c == "/" else _sed_custom(script, i)
        elif c in "sy":
            end = _skip_delimited(
                script, _skip_delimited(script, i + 2, script[i + 1 : i + 2]), script[i + 1 : i + 2]
            )
            if end < 0:
                return True
            i = _until(script, end, ";\n}")
            if c == "s" and any(flag in script[end:i] for flag in "we"):
                return True
        elif c in _SED_TO_EOL or c in _SED_LABEL:
            i = _until(script, i + 1, "\n" if c in _SED_TO_EOL else ";\n")
        elif c in _SED_PLAIN:
            i += 1
        else:
            return True  # w, W, e, or something not understood
        if i < 0:
            return True
    return False


def _sed_custom(script: str, i: int) -> int:
    return _skip_delimited(script, i + 2, script[i + 1 : i + 2])


def _skip_delimited(text: str, i: int, delim: str) -> int:
    """The index after the next unescaped `delim` from `i`; -1 if there is none."""
    if i < 0 or not delim or delim in "\\\n":
        return -1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == delim:
            return i + 1
        else:
            i += 1
    return -1


def _until(text: str, i: int, stops: str) -> int:
    while i < len(text) and text[i] not in stops:
        i += 1
    return i


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
        return Opt(name, _value_word(word, value))
    short = text[:2]
    if not text.startswith("--") and len(text) > 2 and short in value_options:
        return Opt(short, _value_word(word, text[2:]))
    return Opt(name if eq else text)


def _value_word(word: Word, value: str) -> Word:
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


def expand_path(
    word: Word, cwd: PurePosixPath | None, home: PurePosixPath | None
) -> PurePosixPath | None:
    """Where a word points as a path, expanding `~`, `$HOME` and `$PWD`; None if unknown."""
    text = word.text
    if word.substituted:
        return None
    if word.params:
        if not set(word.params) <= {"HOME", "PWD"} or home is None or cwd is None:
            return None
        text = _HOME_OR_PWD.sub(lambda m: str(home if "HOME" in m.group() else cwd), text)
    if word.tilde:
        head, sep, tail = text.partition("/")
        user = head[1:]
        base = home if not user else PurePosixPath("/root" if user == "root" else f"/home/{user}")
        if base is None or user in ("+", "-"):
            return None
        text = f"{base}{sep}{tail}"
    if not text.startswith("/"):
        if cwd is None:
            return None
        text = f"{cwd}/{text}"
    normal = posixpath.normpath(text)
    return PurePosixPath("/" + normal.lstrip("/"))


def fixed_prefix(path: PurePosixPath) -> PurePosixPath:
    """The part of a path before its first glob or brace (`/etc/*.conf` -> `/etc`)."""
    parts: list[str] = []
    for part in path.parts:
        if any(c in part for c in GLOB_CHARS):
            break
        parts.append(part)
    return PurePosixPath(*parts) if parts else PurePosixPath("/")


def is_within(path: PurePosixPath, root: PurePosixPath) -> bool:
    """Whether `path` is `root` or below it (lexically)."""
    return path == root or root in path.parents
