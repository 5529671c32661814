"""Every kind of writer a shell command can be is recorded and undone, whatever its class.

The undo snapshot runs around every `shell_exec` (`tools/policy.py:may_change_workspace`):
a command's class is a guess from its words, and a writer classed `read_only` once
emptied a file with nothing recorded. Each writer runs through the graph, the real
sandbox and the real undo: once as the policy classes it (approved through
`DuckLM.answer` where it asks), once classed `read_only` with no question, as a
classifier that missed it would. Either way its `tool_call_finished` names the files it
changed (the tool card's Revert line), and undo puts every byte and mode back and
removes what it created.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import tarfile
from pathlib import Path
from typing import Any

import pytest

from ducklm.runtime.facade import DuckLM
from ducklm.tools.hitl import Approve, Decisions, Reject
from ducklm.tools.policy import PolicyEnv, Verdict, assess
from tests.support.disk import snapshot
from tests.support.scripted_llm import ScriptedLLM, call, reply

PRECIOUS = "keep me\nkeep this too\n"

# Each writer: its command, and what its change record says it changed.
WRITERS: dict[str, tuple[str, dict[str, str]]] = {
    "redirect": (
        "echo overwritten > precious.txt && echo new > created.txt",
        {"precious.txt": "modified", "created.txt": "added"},
    ),
    "sort -o": ("sort -o precious.txt /dev/null", {"precious.txt": "modified"}),
    "xxd -r": ("xxd -r -p in.hex precious.txt", {"precious.txt": "modified"}),
    "tar -x": ("tar -xf a.tar", {"precious.txt": "modified", "unpacked/deep.txt": "added"}),
    "cp -t": ("cp -t dest precious.txt", {"dest/precious.txt": "modified"}),
    # The sandbox keeps the workspace's `.git` read-only, so git's own index would stop
    # the checkout; with its index elsewhere it rewrites the file, uncommitted work lost.
    "git checkout": (
        "GIT_INDEX_FILE=/tmp/checkout.idx git checkout HEAD -- tracked.txt",
        {"tracked.txt": "modified"},
    ),
    "sed -i": ("sed -i s/keep/lost/ precious.txt", {"precious.txt": "modified"}),
    "python3 -c": (
        "python3 -c \"open('precious.txt', 'w').close(); open('made.py', 'w').write('x = 1')\"",
        {"precious.txt": "modified", "made.py": "added"},
    ),
}


def _seed_files(ws: Path) -> None:
    (ws / "precious.txt").write_text(PRECIOUS)
    (ws / "precious.txt").chmod(0o640)  # tar -x puts the archive's mode instead
    (ws / "in.hex").write_text(b"from xxd\n".hex())
    (ws / "dest").mkdir()
    (ws / "dest" / "precious.txt").write_text("the older copy\n")
    (ws / "tracked.txt").write_text("committed\n")
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        for name, text in (("precious.txt", "from the archive\n"), ("unpacked/deep.txt", "x\n")):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(text), 0o644
            tar.addfile(info, io.BytesIO(text.encode()))
    (ws / "a.tar").write_bytes(archive.getvalue())


async def _git(ws: Path, *args: str) -> None:
    ident = ("-c", "user.name=Test", "-c", "user.email=test@localhost")
    proc = await asyncio.create_subprocess_exec("git", *ident, *args, cwd=ws)
    assert await proc.wait() == 0, args


@pytest.fixture
async def seeded(workspace: Path) -> Path:
    """A workspace that is a git repository, with a file for every writer to hit."""
    await asyncio.to_thread(_seed_files, workspace)
    await _git(workspace, "init", "-q")
    await _git(workspace, "add", "tracked.txt")
    await _git(workspace, "commit", "-q", "-m", "tracked")
    await asyncio.to_thread((workspace / "tracked.txt").write_text, "uncommitted work\n")
    return workspace


@pytest.fixture(params=["as classed", "classed read_only"])
def classed(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The policy as it is, or one that calls every shell command a read that runs unasked."""
    if request.param == "classed read_only":

        def missed(name: str, args: dict[str, Any], env: PolicyEnv) -> Verdict:
            verdict = assess(name, args, env)
            if name != "shell_exec":
                return verdict
            return dataclasses.replace(
                verdict, action="allow", reason="read only command", rule_key=None,
                command_class="read_only",
            )  # fmt: skip

        monkeypatch.setattr("ducklm.turn.tool_step.plan.assess", missed)
    return str(request.param)


async def run_command(duck: DuckLM, llm: ScriptedLLM, command: str) -> list[dict[str, Any]]:
    """One turn that runs `command`, every question approved; its events."""
    llm.script(reply(tool_calls=[call("shell_exec", command=command)]), reply("Done."))
    events = [
        e async for e in duck.stream("change things", thread_id="t1", critic=False, memory=False)
    ]
    while events[-1]["status"] == "interrupted":
        (asked,) = [e for e in events if e["type"] == "approval_requested"][-1:]
        count = len(asked["request"]["action_requests"])
        answer = Decisions(decisions=[Approve()] * count)
        events += [e async for e in duck.answer("t1", answer, critic=False, memory=False)]
    assert events[-1]["status"] == "completed", events[-1]
    return events


@pytest.mark.parametrize("writer", list(WRITERS))
async def test_a_writer_is_recorded_and_undone(
    duck: DuckLM, llm: ScriptedLLM, seeded: Path, classed: str, writer: str
) -> None:
    command, changes = WRITERS[writer]
    before = await snapshot(seeded)
    events = await run_command(duck, llm, command)

    (finished,) = [e for e in events if e["type"] == "tool_call_finished"]
    assert finished["status"] == "success", finished["output"]
    if classed == "classed read_only":
        assert finished["command_class"] == "read_only"
        assert not [e for e in events if e["type"] == "approval_requested"]
    assert {c["path"]: c["change"] for c in finished["changed_files"]} == changes
    assert finished["changed_count"] == len(changes) and finished["undo_id"]
    assert await snapshot(seeded) != before

    undone = await duck.undo("t1")
    assert await snapshot(seeded) == before, "every byte and mode back, created files gone"
    assert [c.meta["call_id"] for c in undone.plan.changes] == [finished["call_id"]]


async def test_a_rejected_command_gets_no_checkpoint(
    duck: DuckLM, llm: ScriptedLLM, seeded: Path
) -> None:
    llm.script(reply(tool_calls=[call("shell_exec", command="rm precious.txt")]), reply("Ok."))
    events = [e async for e in duck.stream("tidy", thread_id="t1", critic=False, memory=False)]
    assert events[-1]["status"] == "interrupted"  # rm asks
    answer = Decisions(decisions=[Reject(message="no")])
    events += [e async for e in duck.answer("t1", answer, critic=False, memory=False)]
    assert events[-1]["status"] == "completed"
    assert not [e for e in events if e["type"] == "workspace_checkpoint"]
    assert await asyncio.to_thread((seeded / "precious.txt").read_text) == PRECIOUS
