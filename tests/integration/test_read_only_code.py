"""Code hidden in a "read-only" command waits for the person, in a real turn (issue 41.3).

The scripted model calls `shell_exec` with commands the policy once ran unasked: an
abbreviated `env --split-string`, a subscript that `test -v` evaluates, a `PS4` set by
`read`, a `mapfile` callback. The turn stops at the questions and nothing ran; approved,
each payload runs, which shows it was real and that the question alone held it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from ducklm.runtime.facade import DuckLM
from tests.support.scripted_llm import ScriptedLLM, call, reply

QUIET = {"critic": False, "memory": False}
HIDDEN = {
    "abbreviated": "printf 'touch abbreviated\\n' > x.sh; env --sp='sh x.sh'",
    "subscript": "test -v 'a[$(touch subscript)]'",
    "variable": "read -r PS4 <<< '$(touch variable)'; set -x; true",
    "callback": "mapfile -C 'touch callback;:' -c 1 a <<< x",
}
"""Each command, by the file its payload creates."""


async def _ran(workspace: Path) -> set[str]:
    return {name for name in HIDDEN if await asyncio.to_thread((workspace / name).exists)}


async def test_hidden_code_asks_and_runs_only_when_approved(
    duck: DuckLM, llm: ScriptedLLM, workspace: Path
) -> None:
    calls = [call("shell_exec", command=command) for command in HIDDEN.values()]
    llm.script(reply(tool_calls=calls), reply("Done."))
    result = await duck.run("look at the project", thread_id="t", **QUIET)
    assert result.status == "interrupted"
    (pending,) = result.pending
    asked = pending["request"]["action_requests"]
    assert [(q["name"], q["args"]["command"]) for q in asked] == [
        ("shell_exec", command) for command in HIDDEN.values()
    ]
    assert await _ran(workspace) == set(), "a hidden program ran before the person answered"

    result = await duck.resume_run("t", [{"type": "approve"}] * len(asked), **QUIET)
    assert result.status == "completed"
    assert await _ran(workspace) == set(HIDDEN), "approved, each command runs as written"


async def test_an_ordinary_loop_still_runs_unasked(
    duck: DuckLM, llm: ScriptedLLM, workspace: Path
) -> None:
    await asyncio.to_thread((workspace / "a.txt").write_text, "one\ntwo\n")
    command = 'for f in *.txt; do wc -l "$f"; done; read -r first < a.txt; echo "$first"'
    llm.script(reply(tool_calls=[call("shell_exec", command=command)]), reply("Two lines."))
    result = await duck.run("count the lines", thread_id="t", **QUIET)
    assert result.status == "completed" and not result.pending
    (finished,) = [e for e in result.events if e["type"] == "tool_call_finished"]
    assert finished["approved_by"] == "policy"
    assert "2 a.txt" in finished["output"] and "one" in finished["output"]
