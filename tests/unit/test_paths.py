"""Adversarial paths through the real file tools, with proof on disk.

Every case builds a small world around a workspace: an outside folder with a secret, and
links of every kind. A refused case must leave the outside untouched.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from ducklm.tools.errors import ToolError
from ducklm.tools.files import _list, _read, write_text
from ducklm.tools.policy import PolicyEnv, assess
from ducklm.tools.workspace import PathError, open_parent, resolve_in_workspace


@dataclass
class World:
    ws: Path
    outside: Path


@pytest.fixture
def world(tmp_path: Path) -> World:
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    (ws / "docs").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET")
    (ws / "docs" / "a.md").write_text("inside")
    (tmp_path / "ws-evil").mkdir()  # a sibling sharing the workspace's name as prefix
    (tmp_path / "ws-evil" / "x.txt").write_text("sibling")
    os.symlink(outside / "secret.txt", ws / "link-to-secret")
    os.symlink(outside, ws / "link-to-outside-dir")
    os.symlink(outside / "nothing-yet.txt", ws / "dangling-out")
    os.symlink(ws / "docs" / "a.md", ws / "link-inside")
    return World(ws, outside)


REFUSED_READS = [
    "../outside/secret.txt",
    "docs/../../outside/secret.txt",
    "docs/../a.md",  # '..' is refused even when it would stay inside
    "/etc/passwd",
    "/proc/self/root/etc/passwd",
    "~/.bashrc",
    "~root/.ssh/id_rsa",
    "link-to-secret",
    "link-to-outside-dir/secret.txt",
    "../ws-evil/x.txt",
    "",
    "   ",
    "docs/a.md\x00.png",
    "a/" * 600,
]


@pytest.mark.parametrize("path", REFUSED_READS)
def test_reads_that_are_refused(world: World, path: str) -> None:
    with pytest.raises(ToolError):
        _read(world.ws, path)


REFUSED_WRITES = [
    "../outside/new.txt",
    "link-to-outside-dir/new.txt",
    "dangling-out",  # a dangling link leading out: writing would create the outside file
    "/tmp/ducklm-escape.txt",
    "~/escape.txt",
    "docs/../../outside/secret.txt",
]


@pytest.mark.parametrize("path", REFUSED_WRITES)
def test_writes_that_are_refused_leave_the_outside_untouched(world: World, path: str) -> None:
    before = sorted(p.name for p in world.outside.iterdir())
    with pytest.raises(ToolError):
        write_text(world.ws, path, "pwned", overwrite=True)
    assert sorted(p.name for p in world.outside.iterdir()) == before
    assert (world.outside / "secret.txt").read_text() == "TOP SECRET"
    assert not Path("/tmp/ducklm-escape.txt").exists()


def test_links_inside_the_workspace_work(world: World) -> None:
    assert _read(world.ws, "link-inside") == "inside"
    assert _read(world.ws, "docs/a.md") == "inside"


def test_a_folder_swapped_for_a_link_after_the_check_is_not_followed(world: World) -> None:
    """TOCTOU: the check passes, then `docs` becomes a link out; the open must fail."""
    target = resolve_in_workspace(world.ws, "docs/a.md")
    (world.ws / "docs").rename(world.ws / "docs-old")
    os.symlink(world.outside, world.ws / "docs")
    with pytest.raises(PathError, match="changed while"), open_parent(world.ws, target):
        pass


def test_a_file_swapped_for_a_link_after_the_check_is_not_read(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_resolve = resolve_in_workspace

    def swap_after_check(workspace: Path, path: str) -> Path:
        checked = real_resolve(workspace, path)
        (world.ws / "docs" / "a.md").unlink()
        os.symlink(world.outside / "secret.txt", world.ws / "docs" / "a.md")
        return checked

    monkeypatch.setattr("ducklm.tools.files.resolve_in_workspace", swap_after_check)
    with pytest.raises(ToolError) as refused:
        _read(world.ws, "docs/a.md")
    assert "TOP SECRET" not in str(refused.value)


def test_writes_are_atomic_and_keep_the_mode(world: World) -> None:
    script = world.ws / "run.sh"
    script.write_text("echo old")
    script.chmod(0o755)
    write_text(world.ws, "run.sh", "echo new", overwrite=True)
    assert script.read_text() == "echo new"
    assert script.stat().st_mode & 0o777 == 0o755
    assert [p.name for p in world.ws.iterdir() if p.name.endswith(".tmp")] == []


def test_a_failed_write_keeps_the_original(world: World) -> None:
    with pytest.raises(ToolError, match="the limit is"):
        write_text(world.ws, "docs/a.md", "x" * 2_000_000, overwrite=True)
    assert (world.ws / "docs" / "a.md").read_text() == "inside"


def test_list_dir_refuses_links_out(world: World) -> None:
    with pytest.raises(ToolError):
        _list(world.ws, "link-to-outside-dir")


@pytest.mark.parametrize(
    ("path", "overwrite", "action", "rule_key"),
    [
        ("notes.txt", False, "allow", None),
        ("docs/a.md", True, "ask", "overwrite:docs/a.md"),
        (".git/hooks/pre-commit", False, "ask", "write:.git/hooks/pre-commit"),
        (".git/config", True, "ask", "write:.git/config"),
        ("data/ducklm.sqlite", False, "ask", "write:data/ducklm.sqlite"),
    ],
)
def test_write_policy(
    world: World, path: str, overwrite: bool, action: str, rule_key: str | None
) -> None:
    env = PolicyEnv(workspace=world.ws, protected=((world.ws / "data").resolve(),))
    verdict = assess("file_write", {"path": path, "content": "x", "overwrite": overwrite}, env)
    assert (verdict.action, verdict.rule_key) == (action, rule_key)
