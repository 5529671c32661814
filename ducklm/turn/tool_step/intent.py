"""Whether a destructive call is one the request asked for.

"Rename draft.txt to final.txt" became `rm -r draft.txt final.txt` on the bundled model,
and its card said only "rm deletes draft.txt": the person approved a deletion they took
for the rename. A call the command policy classes destructive, for a request with no
word for destroying anything (delete, remove, clean, reset, overwrite, ...), says so
first on its card.

Pure: no I/O.
"""

from __future__ import annotations

import re

from ducklm.tools.policy import Verdict

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
