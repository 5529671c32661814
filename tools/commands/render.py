"""The canonical text of a parsed command, which allow-forever rules match exactly.

Words are single-spaced and quoted the one way `shlex.quote` does, operators are kept,
so two spellings of one command get one text and two commands never share one.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

import bashlex

from ducklm.tools.commands.quotes import unquote
from ducklm.tools.commands.words import GLOB_CHARS

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


def render_normalized(original: str, quoted: frozenset[int], trees: list[Any]) -> str:
    """The canonical text of the bashlex `trees` parsed from `original`.

    Args:
        original: The command as written; words are cut from it by position.
        quoted: Positions of here-documents whose delimiter was quoted (`<<'EOF'`).
        trees: What bashlex returned for the (preprocessed) command.
    """
    return _Renderer(original, quoted).render_all(trees)


class _Renderer:
    """Renders parse trees; collects here-document bodies to append at the end."""

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
