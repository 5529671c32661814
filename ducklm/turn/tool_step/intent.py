"""Whether a destructive call is one the request asked for.

"Rename draft.txt to final.txt" became `rm -r draft.txt final.txt` on the bundled model,
and its card said only "rm deletes draft.txt": the person approved a deletion they took
for the rename. A call the command policy classes destructive, for a request with no
word for destroying anything (delete, remove, clean, reset, overwrite, ...), says so
first on its card.

Then "Delete old.log" became `file_write` over old.log, and the rename `file_write` over
draft.txt (issue 44): an overwrite standing in for another operation. So every card also
compares the call with the file operation the request names, as the shortcut rules read
it (`ducklm.turn.file_requests`): a call that replaces or deletes content the request
did not ask to (an overwrite for a delete, a rename, a move, a copy or an append; a
delete for anything but a delete; a move for a copy; a replaced file the request never
named) says so in plain words first, and the card's default is not to approve.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any

from ducklm.tools.policy import Verdict
from ducklm.turn.file_requests import Mentioned, mentioned_operation

DESTROYING = re.compile(
    r"\b(?:delet|remov|eras|wip|rm\b|rmdir|clean|clear|purg|discard|drop|trash|unlink"
    r"|uninstall|prun|reset|destroy|get rid|empty|overwrit|replac|kill|revert|undo|shred"
    r"|truncat|format)",
    re.I,
)
"""Words of a request that asks to destroy something (stems: "deleting", "removed")."""
MISMATCH = (
    "Does not match the request: this {what}, and the request did not ask to delete or "
    "discard anything."
)


def request_mismatch(request: str, name: str, verdict: Verdict) -> str:
    """The card's warning when `verdict` is destructive and `request` asked for no such thing."""
    if verdict.command_class != "destructive" or DESTROYING.search(request):
        return ""
    what = "command destroys data" if name == "shell_exec" else "call destroys data"
    return MISMATCH.format(what=what)


NOT_ASKED = "Does not match the request: {this}, but the request asked to {asked}."
UNNAMED = "Does not match the request: {this}, a file the request did not name."
OVERWRITES = "this replaces everything in {path}"
DELETES = "this deletes {path}"
MOVES_AWAY = "this moves {path} away"
ASKED = {
    "delete": "delete {source}",
    "rename": "rename {source} to {target}",
    "move": "move {source} to {target}",
    "copy": "copy {source} to {target}, keeping it",
    "append": "add to the end of {source}, keeping what it holds",
}


def card_warning(request: str, name: str, args: dict[str, Any], verdict: Verdict) -> str:
    """What a card says first when the call is not what `request` asked for ("" if it is)."""
    return operation_mismatch(request, name, args, verdict) or request_mismatch(
        request, name, verdict
    )


EDITING = re.compile(
    r"\b(?:fix|edit|chang|updat|modif|refactor|rewrit|writ|implement|correct|improv|insert"
    r"|put|replac|overwrit|format|rephras|translat|convert)",
    re.I,
)
"""Words of a request that asks to change a file's content (stems: "fixing", "wrote")."""


def operation_mismatch(request: str, name: str, args: dict[str, Any], verdict: Verdict) -> str:
    """The warning when the call destroys or replaces content the request did not name."""
    asked = mentioned_operation(request)
    ops = asked.operations
    if asked.exact is None and EDITING.search(request):
        # A request to change content ("Fix the bug in calc.py: add(1, 2) gives -1") asks
        # for the write that makes the change; a word in it ("add", "move the helper")
        # names no file operation. Read whole by a rule, a request is compared as read.
        ops = frozenset()
    path = str(args.get("path") or args.get("source") or "")
    for replaced in verdict.replaced:
        this = OVERWRITES.format(path=replaced)
        if ops and not (name != "file_write" and _is_target(asked, replaced)):
            return NOT_ASKED.format(this=this, asked=_asked(asked))
        unnamed = asked.names and not asked.names_path(replaced)
        if not ops and unnamed and not DESTROYING.search(request):
            return UNNAMED.format(this=this)
    if name == "file_delete" and path:
        if ops and "delete" not in ops:
            return NOT_ASKED.format(this=DELETES.format(path=path), asked=_asked(asked))
        if "delete" in ops and asked.names and not asked.names_path(path):
            return UNNAMED.format(this=DELETES.format(path=path))
    if name == "file_move" and "copy" in ops and not ops & {"move", "rename", "delete"}:
        return NOT_ASKED.format(this=MOVES_AWAY.format(path=path), asked=_asked(asked))
    return ""


def _is_target(asked: Mentioned, path: str) -> bool:
    """Whether `path` is where the request asked to rename, move or copy something to."""
    if not asked.operations & {"rename", "move", "copy"}:
        return False
    if asked.exact is not None:
        target = asked.exact.target
        return bool(target) and Mentioned(asked.operations, frozenset({target})).names_path(path)
    return asked.names_path(path)


def _asked(asked: Mentioned) -> str:
    """What the request asked for, in the card's words."""
    if asked.exact is not None:
        found = asked.exact
        return ASKED[found.operation].format(source=found.source, target=found.target)
    words = " or ".join(sorted(asked.operations))
    names = ", ".join(sorted(asked.names)[:3])
    return f"{words} {names}".strip() if names else f"{words} a file"
