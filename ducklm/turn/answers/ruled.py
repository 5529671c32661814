"""The answers the rules write themselves: a calculation, a "noted", what DuckLM is, what was told.

The router names the rule (`ducklm.turn.answer_rules`) in the turn's `NO_TOOL` shortcut;
here its answer is written from the request and from what DuckLM knows of itself: the
tools on offer, the configured models, the workspace, the memory's records. No model
speaks, so nothing is invented and nothing claims a check that did not happen. A
question with no tool whose words a recalled memory holds is answered with that memory,
as what the person said (`ducklm.turn.told_before`). The
fact a request asks to keep is stored by the memory policy node
(`ducklm.turn.explicit_memory`), which runs after this answer whatever its model says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ducklm.graph.state import DuckState
from ducklm.turn.answer_rules import ABOUT_ME, CALCULATION, REMEMBER
from ducklm.turn.arithmetic import find_calculation
from ducklm.turn.explicit_memory import requested_memory
from ducklm.turn.memory_rules import find_secret
from ducklm.turn.self_questions import Topic, self_topics
from ducklm.turn.shortcuts import NO_TOOL
from ducklm.turn.told_before import told_answer

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

NOTED = "Noted. I'll remember: {fact}"
MEMORY_OFF = "I can't keep that: memory is switched off for this conversation."
SECRET = "I won't keep that: it looks like it contains {kind}, and secrets are never stored."
IDENTITY = "I'm DuckLM, an assistant that works on this computer."
MODEL = "The answers come from the model `{model}`{more}."
WORKSPACE = "I work in `{workspace}`: the files I read and change are there."
ABILITIES = "I can:"
ASKS = "I ask before changing anything, and a change can be undone."
MEMORY_COUNT = "I remember {count} thing{s}{shown}"
MEMORY_NONE = 'I don\'t remember anything yet: say "remember that ..." and I will.'
MEMORY_OFF_NOW = "Memory is switched off, so I keep nothing between conversations."
SHOWN_MEMORIES = 3
TOOL_WORDS = {
    "list_dir": "list the files in the workspace",
    "file_read": "read files",
    "file_write": "write files",
    "search_files": "search the files for a text",
    "shell_exec": "run commands",
    "search_conversations": "look up earlier conversations",
}
"""What each built-in tool lets DuckLM do, in a person's words; other tools go by name."""


async def ruled_answer(state: DuckState, ctx: DuckContext) -> str | None:
    """The answer of the rule the route named for this turn, or `None` when none did."""
    route = state.route
    shortcut = route.shortcut if route is not None else None
    if shortcut is None or shortcut.tool != NO_TOOL or state.current_step:
        return None
    if shortcut.rule == CALCULATION and (calc := find_calculation(state.task)) is not None:
        return calc.answer() + "."
    if shortcut.rule == REMEMBER and (fact := requested_memory(state.task)) is not None:
        return noted(fact, memory_on=ctx.memory is not None and state.run_memory_policy)
    if shortcut.rule == ABOUT_ME and (topics := self_topics(state.task)):
        return await about_me(topics, state, ctx)
    return told_answer(state.task, state.recalled)  # "what bike do I have?", when told


def noted(fact: str, *, memory_on: bool) -> str:
    """The answer to a request to remember `fact`."""
    if (kind := find_secret(fact)) is not None:
        return SECRET.format(kind=kind)
    return NOTED.format(fact=fact) if memory_on else MEMORY_OFF


async def about_me(topics: tuple[Topic, ...], state: DuckState, ctx: DuckContext) -> str:
    """What DuckLM knows of itself on `topics`, in a sentence each or a short list."""
    parts: list[str] = []
    for topic in topics:
        if topic == "identity":
            parts += [IDENTITY, _model(ctx)]
        elif topic == "model":
            parts.append(_model(ctx))
        elif topic == "workspace":
            parts.append(WORKSPACE.format(workspace=state.workspace or "."))
        elif topic == "abilities":
            parts.append(_abilities(state, ctx))
        else:
            parts.append(await _memory(ctx))
    return "\n\n".join(dict.fromkeys(parts))


def _model(ctx: DuckContext) -> str:
    thinker, action = ctx.models.config("thinker"), ctx.models.config("action")
    more = "" if ctx.models.same_model("thinker", "action") else f"; `{action.model}` picks tools"
    return MODEL.format(model=thinker.model, more=more)


def _abilities(state: DuckState, ctx: DuckContext) -> str:
    names = ctx.tools.names
    things = [TOOL_WORDS[n] for n in TOOL_WORDS if n in names]
    others = [n for n in names if n not in TOOL_WORDS]
    if others:
        things.append("use these tools too: " + ", ".join(f"`{n}`" for n in others))
    if ctx.memory is not None:
        things.append('remember what you ask me to ("remember that ...")')
    things.append("answer questions from what the model knows (without checking anything)")
    listed = "\n".join(f"- {thing}" for thing in things)
    where = f" in `{state.workspace}`" if state.workspace else ""
    return f"{ABILITIES}\n{listed}\n\n{ASKS} I work{where}."


async def _memory(ctx: DuckContext) -> str:
    if ctx.memory is None:
        return MEMORY_OFF_NOW
    records = await ctx.memory.list(limit=1000)
    if not records:
        return MEMORY_NONE
    shown = "".join(f"\n- {r.text}" for r in records[:SHOWN_MEMORIES])
    lead = ", for example:" if len(records) > SHOWN_MEMORIES else ":"
    count = len(records)
    return MEMORY_COUNT.format(count=count, s="" if count == 1 else "s", shown=lead + shown)
