"""File tools, workspace confinement and the approval policy, without a model."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from ducklm.tools.errors import ToolError
from ducklm.tools.files import FILE_EXISTS, _list, _read, _search, write_text
from ducklm.tools.policy import PolicyEnv, assess
from ducklm.tools.workspace import PathError, resolve_in_workspace


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("Duck facts\nducks quack\n")
    (root / "b.txt").write_text("no birds here\n")
    (tmp_path / "secret.txt").write_text("outside")
    return root


@pytest.mark.parametrize(
    "path",
    [
        "../secret.txt",
        "docs/../../secret.txt",
        "/etc/passwd",
        "~/.bashrc",
        "",
        "a\x00b",
        "x" * 5000,
    ],
)
def test_paths_outside_or_unusable_are_refused(ws: Path, path: str) -> None:
    with pytest.raises(PathError):
        resolve_in_workspace(ws, path)


def test_sibling_with_shared_prefix_is_outside(ws: Path) -> None:
    sibling = ws.parent / "ws-other"
    sibling.mkdir()
    with pytest.raises(PathError):
        resolve_in_workspace(ws, "../ws-other/x")


def test_symlink_leading_out_is_refused(ws: Path) -> None:
    os.symlink(ws.parent / "secret.txt", ws / "link.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        _read(ws, "link.txt")


def test_read_write_list_search(ws: Path) -> None:
    assert _read(ws, "docs/a.md") == "Duck facts\nducks quack\n"
    assert write_text(ws, "new/c.txt", "hello", overwrite=False) == "created new/c.txt (5 chars)"
    assert (ws / "new" / "c.txt").read_text() == "hello"
    with pytest.raises(ToolError) as exists:
        write_text(ws, "new/c.txt", "again", overwrite=False)
    assert str(exists.value) == FILE_EXISTS.format(path="new/c.txt")
    assert (ws / "new" / "c.txt").read_text() == "hello"
    assert write_text(ws, "new/c.txt", "again", overwrite=True).startswith("replaced")
    assert _list(ws, ".").splitlines()[:2] == ["docs/", "new/"]
    assert _search(ws, "DUCK", "**/*", case_sensitive=False).splitlines() == [
        "docs/a.md:1: Duck facts",
        "docs/a.md:2: ducks quack",
    ]
    assert _search(ws, "DUCK", "**/*", case_sensitive=True) == "no lines contain 'DUCK'"
    assert _search(ws, "birds", "*.md", case_sensitive=False) == "no lines contain 'birds'"
    with pytest.raises(ToolError, match="must stay inside"):
        _search(ws, "x", "../*", case_sensitive=False)


def test_no_temporary_file_is_left_behind(ws: Path) -> None:
    write_text(ws, "b.txt", "replaced", overwrite=True)
    assert sorted(p.name for p in ws.iterdir()) == ["b.txt", "docs"]


def test_policy(ws: Path) -> None:
    env = PolicyEnv(workspace=ws)
    assert assess("file_read", {"path": "b.txt"}, env).action == "allow"
    assert assess("file_write", {"path": "new.txt", "content": "x"}, env).action == "allow"
    overwrite = assess("file_write", {"path": "b.txt", "content": "x", "overwrite": True}, env)
    assert (overwrite.action, overwrite.rule_key) == ("ask", "overwrite:b.txt")
    same = assess("file_write", {"path": "./b.txt", "content": "y", "overwrite": True}, env)
    assert same.rule_key == overwrite.rule_key, "the rule is for the normalized path"
    assert assess("shell_exec", {"command": "ls"}, env).action == "ask", "no command policy"
    assert assess("some_new_tool", {}, env).action == "ask"


def _special_files(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(ws / "sock"))
    os.symlink("gone.txt", ws / "dangling")
    (ws / "hello.txt").write_text("hello there\n")


def _catching(errors: list[BaseException], fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except BaseException as exc:
        errors.append(exc)


def test_a_fifo_or_socket_is_never_opened_for_reading(ws: Path) -> None:
    """Opening a FIFO would wait for a writer: each call held a worker thread for good."""
    _special_files(ws)
    for name in ("pipe", "sock"):
        errors: list[BaseException] = []
        # On a daemon thread with a deadline: the old open waited for a writer forever.
        reader = threading.Thread(target=_catching, args=(errors, _read, ws, name), daemon=True)
        reader.start()
        reader.join(timeout=5)
        assert not reader.is_alive(), f"reading {name} blocked"
        [error] = errors
        assert isinstance(error, ToolError) and "not a regular file" in str(error)
    # The search passes them by and still finds what is there.
    assert _search(ws, "hello", "**/*", False) == "hello.txt:1: hello there"


def test_a_dangling_link_and_special_files_are_listed_as_what_they_are(ws: Path) -> None:
    _special_files(ws)
    listed = _list(ws, ".").splitlines()
    assert "dangling -> gone.txt  (link)" in listed
    assert "pipe  (fifo, not read)" in listed
    assert "sock  (socket, not read)" in listed
    assert "hello.txt  (12 bytes)" in listed
