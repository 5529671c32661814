"""Which folders a run may work in: the ones the person chose, never the request's pick.

A request may name a workspace (`/v1/chat`, `/v1/conversations`, `/v1/memory`, an Agent
Protocol run's `input` or state update, the library's `DuckLM.stream`). It is accepted
only when, after `~`, `..` and every symlink are resolved, it is `DUCK_WORKSPACE`, one
of `DUCK_WORKSPACES`, or a folder inside one of them. A folder that does not exist is
refused (make it first), except the default workspace itself, which `DuckLM.open`
creates. Relative paths are refused: a server's working directory means nothing to its
clients.

The accepted folder is returned as the allowed root, as configured, joined with the
resolved rest, so the same folder always gets the same name (memories are scoped by it).
The tools resolve the workspace again before each call.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from ducklm.config.settings import Settings

NOT_ALLOWED = (
    "workspace {path!r} is not allowed: a run may only work in DUCK_WORKSPACE, a folder "
    "listed in DUCK_WORKSPACES, or a folder inside one of them; add it to "
    "DUCK_WORKSPACES to allow it"
)
NOT_ABSOLUTE = (
    "workspace {path!r} is not an absolute path: name DUCK_WORKSPACE, a folder in "
    "DUCK_WORKSPACES, or a folder inside one of them"
)
NOT_A_FOLDER = (
    "workspace {path!r} is not an existing folder inside DUCK_WORKSPACE or DUCK_WORKSPACES: "
    "create it first"
)
UNUSABLE = "workspace {path!r} is not a usable path (allowed folders are set by DUCK_WORKSPACES)"


class WorkspaceError(ValueError):
    """A requested workspace is not one the person allowed; the message says how to allow it."""


async def resolve_workspace(settings: Settings, requested: str | None) -> Path:
    """The workspace a run may use for `requested` (the default one when it is empty).

    Resolving asks the file system, so it runs off the event loop.

    Args:
        settings: Where the allowed folders come from (`workspace`, `workspaces`).
        requested: The folder a request names; `None` or blank: the default workspace.

    Raises:
        WorkspaceError: The folder is not allowed, not absolute, or not an existing folder.
    """
    if requested is None or not requested.strip():
        return settings.workspace
    return await asyncio.to_thread(check_workspace, settings, requested)


async def requested_workspace(settings: Settings, requested: str | None) -> str | None:
    """Like `resolve_workspace`, but `None` when nothing was named (the thread keeps its own).

    Raises:
        WorkspaceError: As `resolve_workspace`.
    """
    if requested is None or not requested.strip():
        return None
    return str(await resolve_workspace(settings, requested))


def check_workspace(settings: Settings, requested: str) -> Path:
    """`resolve_workspace` for a named folder. Blocking: it reads the file system.

    Raises:
        WorkspaceError: As `resolve_workspace`.
    """
    try:
        path = Path(requested).expanduser()
        absolute = path.is_absolute()
        real = path.resolve() if absolute else path
        chosen = _inside_allowed(settings, real) if absolute else None
        # Anything but the default workspace must already be there: creating folders on
        # a request's word is how a typo becomes a stray folder somewhere allowed.
        exists = chosen is not None and (chosen == settings.workspace or real.is_dir())
    except (OSError, RuntimeError, ValueError) as exc:  # too long, a loop, a NUL byte
        raise WorkspaceError(UNUSABLE.format(path=_shown(requested))) from exc
    if not absolute:
        raise WorkspaceError(NOT_ABSOLUTE.format(path=_shown(requested)))
    if chosen is None:
        raise WorkspaceError(NOT_ALLOWED.format(path=_shown(requested)))
    if not exists:
        raise WorkspaceError(NOT_A_FOLDER.format(path=_shown(requested)))
    return chosen


def allowed_roots(settings: Settings) -> list[Path]:
    """The folders the person allowed: the default workspace first, then `workspaces`."""
    return [settings.workspace, *settings.workspaces]


def _inside_allowed(settings: Settings, real: Path) -> Path | None:
    for root in allowed_roots(settings):
        real_root = root.resolve()
        if real.is_relative_to(real_root):
            return root / real.relative_to(real_root)
    return None


def _shown(requested: str) -> str:
    # Echo enough of the path to recognise it, not a whole oversized request.
    return requested if len(requested) <= 200 else requested[:200] + "..."
