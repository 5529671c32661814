"""Undo: every change DuckLM makes in a workspace can be rolled back.

Before the first call of a tool step that may change the workspace, the state of the
workspace is recorded in a shadow git repository in the data dir (never the
workspace's own `.git`); after each such call, what it changed. `ducklm undo`, the
API, the library and the web chat restore files from those records (`service`).
"""

from ducklm.undo.errors import UndoError, UndoRefused
from ducklm.undo.service import UndoPlan, UndoResult, WorkspaceUndo

__all__ = ["UndoError", "UndoPlan", "UndoRefused", "UndoResult", "WorkspaceUndo"]
