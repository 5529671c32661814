"""The everyday set of issue 44 on the bundled model (`small_model.py --set everyday`).

`everyday_set.yaml`: 84 requests in words of their own, every tool and file operation,
30 needing no tool; half held out. Each turn runs with the critic and the memory policy
behind the answer (their reviews are counted), every question approved as a hurried
person would (up to three a turn), over a workspace generated afresh. A request to
remember is asked back in a new conversation. Figures per half, beside the rules alone
(no model: which requests the rules answer or call for by themselves, and rightly):

- right tool (requests that need one; a file operation by its outcome), correct answer;
- the right operation for each delete, rename, move, copy and append (the files after);
- content destroyed that the request did not name (any file it does not mention changed);
- calculations right, remembered facts back in a new conversation, DuckLM on itself;
- no tool on requests needing none, turns ending with an answer or one question,
  reviews that completed (critic and memory policy: no failure event), median seconds.

Targets (issue 44, held-out half): correct >= 80% of tool-needing, arithmetic >= 90%,
every operation right, nothing destroyed, every turn ends well, remembered >= 9 of 10,
reviews >= 90%.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from _common import at_least, table
from small_model import Turn, _holds, facts, reset

from ducklm.runtime.facade import DuckLM
from ducklm.turn.answer_rules import answer_rule
from ducklm.turn.shortcuts import NO_TOOL, find_shortcut
from ducklm.turn.tool_cues import needs_no_tool

SET_FILE = Path(__file__).with_name("everyday_set.yaml")
OPERATIONS = ("delete", "rename", "move", "copy", "append")
TOOLS = frozenset(
    {"file_read", "file_write", "list_dir", "search_files", "shell_exec", "search_conversations"}
)
APPROVALS = 3
TURN_LIMIT_S = 600


@dataclass
class Everyday:
    """One request of the everyday set."""

    text: str
    kind: str
    tool: str
    split: str
    ok: set[str]
    expect: list[Any]
    wrote: dict[str, str]
    gone: list[str] = field(default_factory=list)
    has: dict[str, list[str]] = field(default_factory=dict)
    recall: str = ""

    @property
    def needs_tool(self) -> bool:
        return self.tool != "none"

    @property
    def judged(self) -> bool:
        return bool(self.expect or self.wrote or self.gone or self.has)


@dataclass
class Outcome:
    """What one request came to, judged."""

    item: Everyday
    turn: Turn
    correct: bool = False
    destroyed: list[str] = field(default_factory=list)
    review_ok: bool | None = None
    back: Turn | None = None

    @property
    def first_tool(self) -> str | None:
        return self.turn.first_tool

    @property
    def right(self) -> bool:
        if self.item.tool == "op":
            return self.correct
        if self.item.needs_tool:
            return self.first_tool in self.item.ok
        return self.first_tool is None


def load() -> tuple[dict[str, str], list[Everyday]]:
    data = yaml.safe_load(SET_FILE.read_text(encoding="utf-8"))
    items = [
        Everyday(
            r["text"],
            r["kind"],
            r["tool"],
            r["split"],
            {r["tool"], *r.get("ok", [])},
            r.get("expect", []),
            r.get("wrote", {}),
            r.get("gone", []),
            r.get("has", {}),
            r.get("recall", ""),
        )
        for r in data["requests"]
    ]
    return data["workspace"], items


async def drive(duck: DuckLM, text: str, thread: str, *, reviews: bool) -> Turn:
    """One request, its questions approved; the turn's events."""
    turn = Turn(item=None)  # type: ignore[arg-type]  # judged here, not by small_model
    began = time.perf_counter()

    async def go() -> None:
        async for event in duck.stream(text, thread_id=thread, critic=reviews, memory=reviews):
            turn.events.append(event)
        for _ in range(APPROVALS):
            done = turn.events[-1] if turn.events else {}
            if done.get("status") != "interrupted":
                return
            asked = [e for e in turn.events if e["type"] == "approval_requested"][-1]
            count = len(asked["request"].get("action_requests") or [1])
            decisions = [{"type": "approve"}] * count
            async for event in duck.resume(thread, decisions, critic=reviews, memory=reviews):
                turn.events.append(event)

    try:
        await asyncio.wait_for(go(), TURN_LIMIT_S)
    except TimeoutError:
        turn.events.append({"type": "done", "status": "timed out"})  # type: ignore[typeddict-item]
    turn.seconds = time.perf_counter() - began
    return turn


def judge(item: Everyday, answer: str, workspace: Path, files: dict[str, str], known: Any) -> bool:
    for wanted in item.expect:
        options = wanted if isinstance(wanted, list) else [wanted]
        options = [o for opt in options for o in known.get(opt, [opt])]
        if not any(_holds(answer, o) for o in options):
            return False
    for name, text in item.wrote.items():
        path = workspace / name
        if not path.is_file() or text.lower() not in path.read_text(encoding="utf-8").lower():
            return False
    if any((workspace / name).exists() for name in item.gone):
        return False
    for name, texts in item.has.items():
        path = workspace / name
        if not path.is_file():
            return False
        body = path.read_text(encoding="utf-8").lower()
        if not all(t.lower() in body for t in texts):
            return False
    return bool(answer.strip()) or bool(item.wrote or item.gone or item.has)


def destroyed(item: Everyday, workspace: Path, files: dict[str, str]) -> list[str]:
    """The workspace's files the request does not name whose content is gone or changed."""
    lost = []
    for name, text in files.items():
        if name in item.text or name.rsplit("/", 1)[-1] in item.text:
            continue
        path = workspace / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            lost.append(name)
    return lost


def review_ok(events: list[Any]) -> bool:
    failed = {"memory_policy_failed"}
    return not any(
        e["type"] in failed
        or (e["type"] == "error" and e.get("stage") in ("critic", "memory_policy"))
        for e in events
    )


async def run_one(
    duck: DuckLM, item: Everyday, files: dict[str, str], workspace: Path, known: Any
) -> Outcome:
    await asyncio.to_thread(reset, workspace, files)
    thread = f"everyday-{uuid.uuid4().hex[:8]}"
    turn = await drive(duck, item.text, thread, reviews=True)
    outcome = Outcome(item, turn)
    outcome.review_ok = review_ok(await duck.reviewed(thread))
    outcome.destroyed = await asyncio.to_thread(destroyed, item, workspace, files)
    answer = turn.answer
    if item.recall:
        back = await drive(duck, item.recall, f"{thread}-back", reviews=False)
        outcome.back, answer = back, back.answer
    outcome.correct = await asyncio.to_thread(judge, item, answer, workspace, files, known)
    return outcome


async def run_half(
    duck: DuckLM, items: list[Everyday], files: dict[str, str], workspace: Path
) -> list[Outcome]:
    known = await asyncio.to_thread(facts)
    done = []
    for item in items:
        outcome = await run_one(duck, item, files, workspace, known)
        done.append(outcome)
        mark = "ok " if outcome.right else "BAD"
        good = "right" if outcome.correct else ("-" if not item.judged else "WRONG")
        lost = f" DESTROYED {outcome.destroyed}" if outcome.destroyed else ""
        review = "" if outcome.review_ok else " review failed"
        print(
            f"  {mark} {item.kind:13} {outcome.first_tool or '-':20} {good:5} "
            f"{outcome.turn.seconds:5.1f} s  {item.text}{lost}{review}",
            flush=True,
        )
        if item.judged and not outcome.correct:
            said = outcome.back.answer if outcome.back else outcome.turn.answer
            print(f"      answer: {said[:160]!r}")
    return done


def _share(hits: int, of: int) -> str:
    return f"{hits}/{of} ({100 * hits / of:.0f}%)" if of else "-"


def report(name: str, done: list[Outcome]) -> dict[str, str]:
    def of(kinds: tuple[str, ...] | None = None, *, tool: bool | None = None) -> list[Outcome]:
        return [
            o
            for o in done
            if (kinds is None or o.item.kind in kinds)
            and (tool is None or o.item.needs_tool == tool)
        ]

    tool, none = of(tool=True), of(tool=False)
    judged_tool = [o for o in tool if o.item.judged]
    ops, calc = of(OPERATIONS), of(("arithmetic",))
    kept, about, know = of(("remember",)), of(("self",)), of(("knowledge",))
    reviewed = [o for o in done if o.review_ok is not None]
    ended = [o for o in done if o.turn.ended_well]
    figures = {
        "right tool (ops by outcome)": _share(sum(o.right for o in tool), len(tool)),
        "correct answer (tool)": _share(sum(o.correct for o in judged_tool), len(judged_tool)),
        "right operation (delete ... append)": _share(sum(o.correct for o in ops), len(ops)),
        "turns destroying unnamed content": str(sum(bool(o.destroyed) for o in done)),
        "arithmetic right": _share(sum(o.correct for o in calc), len(calc)),
        "remembered, back in a new conversation": _share(sum(o.correct for o in kept), len(kept)),
        "about DuckLM right": _share(sum(o.correct for o in about), len(about)),
        "knowledge right": _share(
            sum(o.correct for o in know if o.item.judged), sum(o.item.judged for o in know)
        ),
        "no tool (needs none)": _share(sum(o.right for o in none), len(none)),
        "ended with an answer or one question": _share(len(ended), len(done)),
        "reviews completed": _share(sum(bool(o.review_ok) for o in reviewed), len(reviewed)),
        "median s": f"{sorted(o.turn.seconds for o in done)[len(done) // 2]:.1f}" if done else "-",
    }
    print(f"\n-- {name}: {len(tool)} need a tool, {len(none)} need none --")
    table(["figure", "value"], list(figures.items()))
    for label, outcomes, target in (
        ("correct (tool)", judged_tool, 80),
        ("arithmetic", calc, 90),
        ("operations", ops, 100),
        ("remembered", kept, 90),
    ):
        if outcomes:
            share = 100 * sum(o.correct for o in outcomes) / len(outcomes)
            at_least(f"{name}: {label}", share, target, "%")
    if reviewed:
        share = 100 * sum(bool(o.review_ok) for o in reviewed) / len(reviewed)
        at_least(f"{name}: reviews", share, 90, "%")
    return figures


def rules_alone(items: list[Everyday]) -> None:
    """Per half: what the rules decide with no model, and how often rightly."""
    rows = []
    for split in ("test", "train"):
        chosen = [i for i in items if i.split == split]
        counts: Counter[str] = Counter()
        for item in chosen:
            rule = answer_rule(item.text)
            call = find_shortcut(item.text, TOOLS | frozenset(_op_tools()))
            sure = bool(rule) or call is not None or needs_no_tool(item.text, TOOLS)
            picked = "none" if rule or (call is None and sure) else (call.tool if call else None)
            counts["sure"] += sure
            if item.tool == "op":
                counts["right"] += call is not None and call.tool not in ("file_write", NO_TOOL)
            else:
                counts["right"] += picked in (item.ok if item.needs_tool else {"none"})
            counts["answered by rule"] += bool(rule)
        rows.append(
            (split, len(chosen), counts["sure"], counts["right"], counts["answered by rule"])
        )
    print("\n-- the rules alone (no model) --")
    table(["half", "n", "rules sure", "rules right", "answered by a rule"], rows)


def _op_tools() -> list[str]:
    """The file-operation tools the registry offers (issue 44 item 1 adds them)."""
    from ducklm.tools.registry import default_tools

    return [n for n in default_tools().names if n not in TOOLS]


async def bench(settings: Any, split: str, limit: int | None, kinds: list[str] | None) -> None:
    files, items = load()
    items = [i for i in items if not kinds or i.kind in kinds]
    rules_alone(items)
    workspace = settings.workspace
    async with DuckLM.open(settings) as duck:
        for half in ["test", "train"] if split == "both" else [split]:
            chosen = [i for i in items if i.split == half][:limit]
            print(f"\n== everyday set, {half} half ==", flush=True)
            report(f"{half} half", await run_half(duck, chosen, files, workspace))
