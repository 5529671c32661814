"""Snapshot files: a test compares text with a file kept in the repo.

Set UPDATE_SNAPSHOTS=1 to rewrite the files after an intended change, then review
the diff like any other change.
"""

from __future__ import annotations

import os
from pathlib import Path

SNAPSHOTS = Path(__file__).parent.parent / "unit" / "snapshots"


def assert_snapshot(name: str, text: str) -> None:
    """Fail unless `text` equals the snapshot `name` (written when updating)."""
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no snapshot {path}; run with UPDATE_SNAPSHOTS=1 to create it"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from its snapshot"
