"""Parse a shell command as bash does, into the simple commands it would run.

Splitting on whitespace (`shlex.split`) folds `ls` and `rm -rf x` on two lines into one
argv; bashlex builds bash's own parse tree, so every command inside pipelines, lists, subshells,
groups, substitutions, compound commands and functions is found. Text bashlex leaves
unexpanded (a here-document body, `${x:-$(cmd)}`) is parsed on its own and reported as
hidden, so the policy asks instead of trusting it. Nothing here touches the filesystem.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import bashlex

from ducklm.tools.commands.arithmetic import ARITHMETIC, parameter_code
from ducklm.tools.commands.quotes import unquote
from ducklm.tools.commands.render import render_normalized
from ducklm.tools.commands.words import ParsedCommand, Pipes, Redirect, SimpleCommand, Word

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
_COMMENT = re.compile(r"#[^\n]*")


class CommandParseError(ValueError):
    """bashlex could not read the command; the message says why, for a person."""


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
        normalized=render_normalized(command, walker.quoted, trees),
        functions=frozenset(walker.functions),
        fork_bombs=tuple(walker.fork_bombs),
        hidden=tuple(walker.hidden),
    )


def _preprocess(command: str) -> tuple[str, frozenset[int]]:
    """Rewrite what bashlex cannot read, keeping every character at its position."""
    quoted: set[int] = set()

    def unquote_delimiter(match: re.Match[str]) -> str:
        quoted.add(match.start())
        dash, space, delim = match.group(1), match.group(2), match.group(4) or match.group(5)
        return f"<<{dash}{space}{delim}".ljust(len(match.group()))

    text = _QUOTED_HEREDOC.sub(unquote_delimiter, command)
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

    def visit(self, node: Any, pipes: Pipes) -> None:
        kind = node.kind
        if kind == "command":
            self._command(node, pipes)
        elif kind == "pipeline":
            self._pipeline(node, pipes)
        elif kind == "compound":
            if self.text.startswith("((", node.pos[0]):
                self.hidden.append(ARITHMETIC.format(name="((...))"))  # bashlex: two subshells
            for part in node.list:
                self.visit(part, pipes)
            self._redirect_only(getattr(node, "redirects", None) or (), pipes)
        elif kind == "function":
            self._function(node, pipes)
        elif kind in ("list", "if", "for", "while", "until"):
            if kind == "for":
                self._loop_variable(node, pipes)
            for part in node.parts:
                self.visit(part, pipes)
        elif kind == "word":
            self._word(node, pipes)  # for-loop items: their substitutions run
        elif kind not in ("reservedword", "operator", "pipe"):
            raise CommandParseError(NOT_PARSED.format(why=kind))

    def _pipeline(self, node: Any, pipes: Pipes) -> None:
        pipeline, stage = self._pipelines, 0
        self._pipelines += 1
        for part in node.parts:
            if part.kind == "pipe":
                stage += 1
            else:
                self.visit(part, (*pipes, (pipeline, stage)))

    def _command(self, node: Any, pipes: Pipes) -> None:
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

    def _loop_variable(self, node: Any, pipes: Pipes) -> None:
        """`for NAME in ...` sets NAME: reported as the simple command `for NAME`."""
        name = node.parts[1] if len(node.parts) > 1 else None
        if name is not None and name.kind == "word":
            words = (Word("for", "for"), self._word(name, pipes))
            self.commands.append(SimpleCommand(words, (), (), pipes))

    def _redirect_only(self, nodes: Any, pipes: Pipes) -> None:
        redirects = tuple(self._redirect(node, pipes) for node in nodes)
        if redirects:
            self.commands.append(SimpleCommand((), (), redirects, pipes))

    def _function(self, node: Any, pipes: Pipes) -> None:
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

    def _word(self, node: Any, pipes: Pipes) -> Word:
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
                elif isinstance(value, str) and (reason := parameter_code(value)):
                    self.hidden.append(reason)
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

    def _redirect(self, node: Any, pipes: Pipes) -> Redirect:
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

    def _hidden(self, text: str, reason: str, pipes: Pipes) -> None:
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
