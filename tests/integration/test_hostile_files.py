"""No file fails a turn: symlink loops, a 1,100-deep tree, a name that is not UTF-8, a FIFO,
a socket and a device file.

The scripted model calls every file tool on each, then two shell commands; every call
ends with a result or a plain tool error that the model reads in its next request and the
person sees in the events, and the turn completes (it used to end with "DuckLM hit an
internal error").
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import socket
import stat
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ducklm.runtime.facade import DuckLM
from ducklm.tools.errors import ToolError
from ducklm.tools.files import file_read, file_write, list_dir
from tests.support.scripted_llm import ScriptedLLM, call, reply

QUIET = {"critic": False, "memory": False}
DEPTH = 1_100
ODD_NAME = b"caf\xe9.txt"  # Latin-1, not UTF-8


def _plant(ws: Path, *, deep: bool = True) -> bool:
    """The hostile files; whether a device file could be made (root only)."""
    os.symlink("self", ws / "self")
    os.symlink("pair_b", ws / "pair_a")
    os.symlink("pair_a", ws / "pair_b")
    if deep:  # seconds to make and take down on a loaded disk: only where it is searched
        _deep_tree(ws / "deep", DEPTH, b"needle in the deep\n")
    with open(os.path.join(os.fsencode(ws), ODD_NAME), "wb") as fh:
        fh.write(b"needle with an odd name\n")
    os.mkfifo(ws / "fifo")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(ws / "sock"))
    with contextlib.suppress(PermissionError):
        os.mknod(ws / "null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        return True
    return False


@pytest.fixture
async def planted(workspace: Path) -> AsyncIterator[Path]:
    """The workspace with the hostile files; the deep tree is taken down after the test."""
    await asyncio.to_thread(_plant, workspace)
    yield workspace
    await asyncio.to_thread(_peel, workspace / "deep")  # a worker thread: it blocks


def _peel(root: Path) -> None:
    """Remove the deep tree: `shutil.rmtree` (and pytest's clean-up of old temp folders)
    recurse once a level, past Python's limit; coreutils' `rm` does not."""
    subprocess.run(["rm", "-rf", "--", str(root)], check=True)


def _deep_tree(root: Path, depth: int, content: bytes) -> None:
    """`root/d/d/.../d/needle.txt`, made one folder at a time (pathlib's mkdir recurses)."""
    root.mkdir()
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=folder)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
            os.close(folder)
            folder = child
        file = os.open("needle.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=folder)
        os.write(file, content)
        os.close(file)
    finally:
        os.close(folder)


CALLS = [
    call("file_read", path="self"),
    call("file_read", path="pair_a"),
    call("file_read", path="self/inner.txt"),
    call("file_read", path="fifo"),
    call("file_read", path="sock"),
    call("file_read", path="null"),
    call("file_write", path="self/x.txt", content="x"),
    call("file_write", path="pair_b/x.txt", content="x"),
    call("file_write", path="fifo", content="x"),
    call("list_dir", path="."),
    call("list_dir", path="self"),
    call("list_dir", path="deep/" + "d/" * 400),
    call("search_files", query="needle"),
]


async def test_no_file_fails_a_turn(duck: DuckLM, llm: ScriptedLLM, planted: Path) -> None:
    shell = [call("shell_exec", command="ls -la"), call("shell_exec", command="cat sock null")]
    llm.script(reply(tool_calls=[*CALLS, *shell]), reply("Looked around."))
    result = await duck.run("look at every file here", thread_id="t", **QUIET)

    assert result.status == "completed", result
    finished = [e for e in result.events if e["type"] == "tool_call_finished"]
    assert len(finished) == len(CALLS) + 2
    args = {e["call_id"]: e["args"] for e in result.events if e["type"] == "tool_call_started"}
    outputs = {(e["tool"], str(args[e["call_id"]])): e for e in finished}
    for spec in [*CALLS, *shell]:
        event = outputs[(spec.name, str(spec.args))]
        assert event["status"] in ("success", "error"), event
        assert "internal error" not in event["output"]
    errors = [e["output"] for e in finished if e["status"] == "error"]
    assert any("loop of symbolic links" in text for text in errors), errors
    assert any("not a regular file" in text for text in errors), errors
    listing = outputs[("list_dir", str({"path": "."}))]["output"]
    assert "caf\\xe9.txt" in listing and "fifo  (fifo, not read)" in listing
    found = outputs[("search_files", str({"query": "needle"}))]["output"]
    assert "needle.txt:1: needle in the deep" in found  # 1,100 folders down
    assert "caf\\xe9.txt:1: needle with an odd name" in found
    # the model read every result in its next request
    sent = repr(llm.requests[-1])
    assert "loop of symbolic links" in sent and "caf\\\\xe9.txt" in sent


@pytest.mark.parametrize("name", ["self", "pair_a"])
async def test_a_link_loop_is_a_plain_error_for_each_tool(workspace: Path, name: str) -> None:
    await asyncio.to_thread(functools.partial(_plant, workspace, deep=False))
    for tool, args in (
        (file_read, {"path": name}),
        (file_write, {"path": f"{name}/x", "content": "x"}),
        (list_dir, {"path": name}),
    ):
        with pytest.raises(ToolError, match="loop of symbolic links"):
            await tool.ainvoke({**args, "workspace": workspace})
