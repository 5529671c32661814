"""How the CLI shows events to a person: the answer on stdout, everything else on stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # ducklm.kit.events imports LangGraph; the thin CLI prints without it
    from ducklm.kit.events import Event

EXIT_CODES = {"completed": 0, "interrupted": 3, "failed": 1}

DECISION_HINT = "ducklm resume {thread} --decision approve|reject|allow_forever|edit"
ELICIT_HINT = "ducklm resume {thread} --elicit accept|decline|cancel|'{{\"field\": value}}'"
PASSWORD_HINT = "ducklm password {thread}   (or --cancel)"
LINK_HINT = "ducklm resume {thread} --elicit accept|decline|cancel"
LINK_LINE = "  open it yourself if you agree (DuckLM does not open it): {url}"
DIM, PLAIN = "\x1b[2m", "\x1b[0m"
"""A terminal's dimmed text, and back: the model's reasoning is shown dimmed."""


class ConsolePrinter:
    """Prints one run's events as they come.

    Writes go straight to the terminal: a console write is the one blocking call a CLI
    must make, and buffering the answer would defeat streaming.
    """

    def __init__(self, *, as_json: bool) -> None:
        self.as_json = as_json
        self._mid_line = False
        self._thinking = False  # reasoning is being written on stderr, line not ended
        self._cut = ""  # why the answer was cut, said once it has been printed

    def show(self, item: Event) -> None:
        """Print `item`."""
        if self.as_json:
            print(json.dumps(item, default=str, ensure_ascii=False), flush=True)
            return
        handler = getattr(self, f"_on_{item['type']}", None)
        if handler is not None:
            handler(item)

    def _on_token(self, item: Event) -> None:
        self._end_thinking()
        sys.stdout.write(item["text"])
        sys.stdout.flush()
        self._mid_line = True

    def _on_answer_cut(self, item: Event) -> None:
        self._cut = item.get("note") or "stopped"

    def _on_message_sent(self, item: Event) -> None:
        # What a `/server:prompt` or `@server:uri` sent: the person sees what went.
        if item.get("prompt"):
            for message in item["messages"]:
                self._note(f"({item['prompt']} sent, as {message['role']}) {message['text']}")
        for found in item.get("attachments") or []:
            trust = " (untrusted: writes will ask)" if found["untrusted"] else ""
            self._note(f"(attached) @{found['server']}:{found['uri']}{trust}")

    def _on_reasoning(self, item: Event) -> None:
        # Pieces as they stream, one run of dimmed text on stderr, apart from the answer.
        if not self._thinking:
            self._end_answer_line()
            dim = DIM if sys.stderr.isatty() else ""
            sys.stderr.write(f"{dim}(thinking) ")
            self._thinking = True
        sys.stderr.write(item["text"])
        sys.stderr.flush()

    def _end_thinking(self) -> None:
        if self._thinking:
            sys.stderr.write((PLAIN if sys.stderr.isatty() else "") + "\n")
            sys.stderr.flush()
            self._thinking = False

    def _end_answer_line(self) -> None:
        if self._mid_line:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self._mid_line = False

    def _on_server_capability(self, item: Event) -> None:
        self._note(item["message"])

    def _on_tool_call_started(self, item: Event) -> None:
        self._note(f"-> {item['tool']}({_args(item['args'])})")

    def _on_tool_progress(self, item: Event) -> None:
        self._note(f"   {item['tool']}: {progress_words(item)}")

    def _on_tool_call_finished(self, item: Event) -> None:
        mark = {"success": "ok", "unknown": "outcome unknown"}.get(item["status"], "failed")
        first = (item.get("output") or "").strip().splitlines()[:1]
        self._note(f"<- {item['tool']} {mark}" + (f": {first[0][:120]}" if first else ""))
        changed = item.get("changed_files") or []
        if changed:
            names = ", ".join(c["path"] for c in changed[:5]) + (" ..." if len(changed) > 5 else "")
            undo = f"ducklm undo {item.get('thread_id', 'THREAD')} --to {item['call_id']}"
            self._note(f"   changed {len(changed)} file(s): {names} (to roll back: {undo})")

    def _on_route_decided(self, item: Event) -> None:
        chosen = [name for name in ("plan", "coder") if item.get(name)]
        if chosen:  # the everyday route (no plan, no coder) is not worth a line
            self._note(f"(route) {' + '.join(chosen)}: {item['reasons'][1 if item['plan'] else 2]}")

    def _on_plan_created(self, item: Event) -> None:
        title = "Plan (one step: the model's plan was unusable)" if item["fallback"] else "Plan"
        self._note(_plan_lines(title, item["plan"]))

    def _on_plan_revised(self, item: Event) -> None:
        self._note(_plan_lines(f"Plan revised ({item['reason'] or 'a step failed'})", item["plan"]))

    def _on_plan_step_started(self, item: Event) -> None:
        again = " (second attempt)" if item["attempt"] > 1 else ""
        self._note(f"[step {item['index']}/{item['total']}] {item['goal']}{again}")

    def _on_plan_step_finished(self, item: Event) -> None:
        mark = "done" if item["status"] == "done" else "failed"
        if item.get("retry"):
            mark += ", trying again"
        why = f" ({item['reason']})" if item.get("reason") and item["status"] != "done" else ""
        self._note(f"[step {item['step_id']} {mark}]{why} {item.get('result', '')[:120]}")

    def _on_code_proposed(self, item: Event) -> None:
        if item.get("error"):
            self._note(f"coder: {item['error']}")
            return
        lines = [f"coder: {item['path']}: {item.get('explanation', '')}"]
        if not item.get("syntax_ok", True):
            lines.append(f"  syntax error: {item.get('syntax_error')}")
        lines.append(item.get("diff", "").rstrip())
        self._note("\n".join(lines))

    def _on_action_decided(self, item: Event) -> None:
        if item["outcome"] == "answer" and self._mid_line:
            return  # the answer is streaming: a line here would split it, and it says as much
        repaired = " (repaired)" if item.get("repaired") else ""
        repaired += " (rule shortcut)" if item.get("shortcut") else ""
        if item["calls"]:
            calls = "; ".join(f"{c['tool']} {_compact(c['args'])}" for c in item["calls"])
            self._note(f"action: {calls}{repaired}")
        elif item["outcome"] == "unusable":
            self._note(f"action: no usable directive ({item.get('problem') or 'no reply'})")
        else:
            self._note(f"action: no tool ({item['outcome'].replace('_', ' ')}){repaired}")

    def _on_approval_requested(self, item: Event) -> None:
        request = item["request"]
        lines = ["Approval needed:"]
        for action in request["action_requests"]:
            lines.append(f"  {action['name']}({_args(action['args'])})")
            if action.get("description"):
                lines.append(f"    why: {action['description']}")
        if request.get("error"):
            lines.append(f"  (previous answer was not usable: {request['error']})")
        lines.append("Resume with: " + DECISION_HINT.format(thread=item["thread_id"]))
        self._note("\n".join(lines))

    def _on_password_requested(self, item: Event) -> None:
        request = item["request"]
        lines = [f"Password needed: {request['prompt']}"]
        if request.get("error"):
            lines.append(f"  ({request['error']})")
        lines.append("Give it with: " + PASSWORD_HINT.format(thread=item["thread_id"]))
        self._note("\n".join(lines))

    def _on_elicitation_requested(self, item: Event) -> None:
        request = item["request"]
        lines = [f"{request['server']} > {request['tool']} asks: {request['message']}"]
        if request.get("mode") == "url":
            lines.append(LINK_LINE.format(url=request.get("url", "")))
        for name, field in (
            (request.get("requested_schema") or {}).get("properties") or {}
        ).items():
            default = f" (default {field['default']!r})" if "default" in field else ""
            lines.append(f"  {name}: {field.get('type', 'string')}{default}")
        if request.get("error"):
            lines.append(f"  (previous answer was not usable: {request['error']})")
        hint = LINK_HINT if request.get("mode") == "url" else ELICIT_HINT
        lines.append("Answer with: " + hint.format(thread=item["thread_id"]))
        self._note("\n".join(lines))

    def _on_mcp_sampled(self, item: Event) -> None:
        self._note(f"{item['server']} > {item['mcp_tool']}: {item['role']} answered the server")

    def _on_model_restarting(self, item: Event) -> None:
        why = f" ({item['why']})" if item.get("why") else ""
        self._note(f"{item['message']}{why}: the answer waits for it")

    def _on_model_restarted(self, item: Event) -> None:
        self._note(item["message"])

    def _on_error(self, item: Event) -> None:
        prefix = "error" if item.get("fatal", True) else "warning"
        self._note(f"{prefix}: {item['message']}")

    def _on_done(self, item: Event) -> None:
        self._end_thinking()
        if self._mid_line:
            sys.stdout.write("\n")
            self._mid_line = False
        elif item["status"] == "completed" and item["answer"]:
            print(item["answer"])
        if self._cut:
            self._note(f"[{self._cut}]")
            self._cut = ""
        self._note(f"[{item['status']}] thread {item['thread_id']}")

    def _note(self, text: str) -> None:
        self._end_thinking()
        self._end_answer_line()
        print(text, file=sys.stderr, flush=True)


async def print_run(stream: AsyncIterator[Event], printer: ConsolePrinter) -> int:
    """Show a run's events as they come; the exit code its end calls for."""
    status = "failed"
    async for item in stream:
        printer.show(item)
        if item["type"] == "done":
            status = item["status"]
    return EXIT_CODES.get(status, EXIT_CODES["failed"])


def progress_words(item: Event) -> str:
    """A `tool_progress` event in words: "step 3 of 10: reading", "42%", "3 done"."""
    done, total = item.get("progress") or 0, item.get("total")
    if total:
        # A server counting steps says "3 of 10"; one counting fractions reads as percent.
        steps = float(done).is_integer() and float(total).is_integer() and total > 1
        said = f"step {done:g} of {total:g}" if steps else f"{100 * done / total:.0f}%"
    else:
        said = f"{done:g} done"
    return f"{said}: {item['message']}" if item.get("message") else said


def _args(args: dict[str, Any]) -> str:
    shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return shown if len(shown) < 200 else shown[:200] + "..."


def _compact(args: dict[str, Any]) -> str:
    shown = json.dumps(args, ensure_ascii=False, separators=(", ", ": "))
    return shown if len(shown) < 200 else shown[:200] + "..."


def _plan_lines(title: str, plan: dict[str, Any]) -> str:
    lines = [f"{title}:"]
    for step in plan["steps"]:
        after = f" (after {', '.join(step['depends_on'])})" if step.get("depends_on") else ""
        lines.append(f"  {step['id']}. {step['goal']}{after}")
    return "\n".join(lines)
