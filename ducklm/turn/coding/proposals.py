"""What the coder proposes for one tool call: a change to write, or why there is none.

Proposals live in the graph state (`DuckState.code_proposals`, by tool call id) between
the coder node and the tool node, so a resumed run writes what the person approved. They
are frozen pydantic models: LangGraph's checkpoint serializer stores them as such, and
`as_proposal` reads the plain dicts of checkpoints written before they were typed (or a
serializer that hands unknown types back as dicts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

CoderOp = Literal["generate", "fix", "refactor"]

# The `code_proposed` event shows the diff, not both whole files.
SHOWN_FIELDS = frozenset(
    {"path", "op", "existed", "diff", "explanation", "syntax_ok", "syntax_error"}
)


class CodeProposal(BaseModel):
    """A change the coder proposes; nothing is written yet."""

    model_config = ConfigDict(frozen=True)

    op: CoderOp
    path: str
    """Relative to the workspace, `/`-separated, symlinks resolved: what to write."""
    existed: bool
    old_content: str
    """"" for a new file."""
    new_content: str
    explanation: str
    diff: str
    """Unified diff, `a/path` -> `b/path` (`/dev/null` for a new file); "" if unchanged."""
    syntax_ok: bool
    syntax_error: str | None
    """For a Python file that still does not compile: line and message. Do not write it."""
    attempts: int
    """Requests made to the coder role, repairs included."""

    @property
    def changed(self) -> bool:
        """Whether writing the proposal would change the file."""
        return bool(self.diff)

    @property
    def writable(self) -> bool:
        """Whether the tool would write it: it changes the file and its syntax is sound."""
        return self.changed and self.syntax_ok

    def event_fields(self) -> dict[str, Any]:
        """The fields of the `code_proposed` event."""
        return self.model_dump(mode="json", include=set(SHOWN_FIELDS))


class CoderFailure(BaseModel):
    """Why a coder call has no proposal; the tool refuses the call with `error`."""

    model_config = ConfigDict(frozen=True)

    error: str
    """Written for the action role (it becomes the call's tool error)."""
    path: str | None = None
    """The path the call named, when it named one."""

    @property
    def writable(self) -> bool:
        """Never: there is nothing to write."""
        return False

    def event_fields(self) -> dict[str, Any]:
        """The fields of the `code_proposed` event (no `path` when the call had none)."""
        return self.model_dump(mode="json", exclude_none=True)


Proposal = CodeProposal | CoderFailure


def as_proposal(value: Proposal | Mapping[str, Any]) -> Proposal:
    """`value` as a proposal; a plain dict (an old checkpoint) by its `error` key."""
    if isinstance(value, CodeProposal | CoderFailure):
        return value
    if value.get("error"):
        return CoderFailure.model_validate(value)
    return CodeProposal.model_validate(value)
