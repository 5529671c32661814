"""The router: what a turn needs, decided by cheap rules a person can read.

From the task text and a few facts of the run (`RouteFacts`) the router decides four
things and gives one sentence of evidence for each (`Route.reasons`, in `ROUTE_CHOICES`
order; the `route_decided` event shows them):

- recall: search memory (memory is on and has records, and the task is not chit-chat);
- plan: break the task into steps (numbered items, sequence words such as "first ...
  then" or "and then", three or more imperative clauses; never for greetings, questions
  or a plan already running);
- coder: hand the work to the coder tools (refactor, implement, fix the bug, write a
  function, a change verb next to a code file such as `app.py`; only when a coder tool
  is available);
- critique: the critic reviews the result (switched on, and not chit-chat).

Beside them, where `RouteFacts.shortcuts` allows (an action role without native tool
calls), a request whose tool and arguments are certain from its text alone gets a
`Shortcut` (`ducklm.turn.shortcuts`): the call the action node makes without asking the
model, whose result the thinker answers from. A request the rules answer themselves (a
calculation, a request to remember, a question about DuckLM: `ducklm.turn.answer_rules`)
gets the `NO_TOOL` shortcut under that rule's name. A greeting, or a request with no sign of
needing a tool at all (`ducklm.turn.tool_cues`), gets the `NO_TOOL` shortcut: the
thinker answers with no directive asked for. Beyond the rules, `wants_selection` says
when the tool may be chosen by meaning (`ducklm.turn.choosing.selector`); the route node
asks the selector and `merge_selection` puts its answer in: "none" becomes the
`NO_TOOL` shortcut, a tool becomes `Route.selected`, whose arguments the model fills.

Where the rules cannot tell (a long request without sequence markers, a statement that
mentions code without saying what to do with it) the decision is named in
`Route.undecided`, and the graph may ask the `sys_util` role `route_question(task)`
for a `RouteAnswer`. `merge_answer` puts the answer in; a missing or invalid answer
keeps the conservative choice, which the undecided route already carries: no plan and
no coder, i.e. the graph as it works without them. A wrong "no" leaves the task to the
action loop that handles every other turn; a wrong "yes" costs extra model calls and new
ways to fail on a task that did not need them.

Approval is not a route decision. Whether a call asks depends on the concrete call (the
command, the path, whether the file exists), which exists only after the action role
chose it, so the tool policy decides per call. A per-turn flag would be either always on
when a writing tool is registered (telling nobody anything) or a guess the policy then
contradicts; the route carries none.

Everything here is pure: no I/O, no model, no clock.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ValidationError, field_validator

from ducklm.tools.coder_tools import CODER_TOOL_NAMES as CODER_TOOLS
from ducklm.turn.answer_rules import answer_rule
from ducklm.turn.choosing.exemplars import NONE
from ducklm.turn.choosing.selector import Selection
from ducklm.turn.file_requests import mentioned_operation, read_file_request
from ducklm.turn.shortcuts import NO_TOOL, Shortcut, find_shortcut
from ducklm.turn.tool_cues import needs_no_tool

RouteChoice = Literal["recall", "plan", "coder", "critique"]
ROUTE_CHOICES: tuple[RouteChoice, ...] = ("recall", "plan", "coder", "critique")
"""The decisions, in the order of `Route.reasons`."""
LONG_WORDS = 60
"""A request longer than this without sequence markers may hide several steps."""
TWO_ACTIONS_WORDS = 25
"""Two imperative clauses in a request longer than this may be two real steps."""
REASON_CHARS = 160
NO_TOOL_CHITCHAT = "a greeting or a thanks"
NO_TOOL_RULE = "no file, command, search, time or earlier talk named"
NO_TOOL_MEANING = "by meaning, like requests that need none"
TASK_CHARS = 2000

ROUTE_QUESTION = (
    "Request:\n{task}\n\n"
    'Answer in JSON. "multi_step": true if the request needs several separate steps done '
    "one after another (for example: read, then change, then test), false if one answer "
    'or one action does it. "code": true if it asks to write, fix or change program '
    'code. "reason": a few words why.'
)

R_MEMORY_OFF = "Memory is switched off for this run."
R_MEMORY_EMPTY = "Memory has no records yet."
R_PLAN_RECALLED = "A plan is running; its memories were recalled when it started."
R_CHITCHAT = "A greeting or a thanks needs nothing more."
R_RECALL = "Memory has records that may help with this request."
R_PLAN_RUNNING = "A plan is already running; this turn continues it."
R_NUMBERED = "The request lists numbered steps."
R_SEQUENCED = 'The request puts its work in sequence ("{marker}").'
R_ACTIONS = "The request asks for {count} separate actions."
R_QUESTION = "A question: it needs an answer, not a plan."
R_LONG = "A long request without sequence markers; the rules cannot tell if it has steps."
R_ONE_THING = "One request: the action loop handles it without a plan."
R_CODE = 'The request asks for code work ("{marker}").'
R_NO_CODER = "No coder tool is available, so any code work stays with the action role."
R_CODE_READ = "It mentions code but asks to read or explain it, not to change it."
R_CODE_QUESTION = "A question about code: it needs an answer, not a change."
R_CODE_UNSURE = "It mentions code without saying what to change; the rules cannot tell."
R_NOT_CODE = "Not about writing or changing code."
R_FILE_OP = "It asks to {operation} a file, which a file tool does, not the coder."
R_CRITIC_OFF = "The critic is switched off for this run."
R_CRITIC = "The critic reviews the result."
R_ASKED = "Asked the sys_util role: {verdict} ({why})."
R_FALLBACK = "{reason} The sys_util role gave no usable answer, so: {choice}."
ANSWER_WORDS: dict[RouteChoice, tuple[str, str]] = {
    "plan": ("several steps", "a single step"),
    "coder": ("code work", "not code work"),
}
FALLBACK_WORDS: dict[RouteChoice, str] = {"plan": "no plan", "coder": "no coder"}

CHITCHAT = re.compile(
    r"^(hi|hello|hey|hiya|yo|howdy|good (morning|afternoon|evening|night)|thanks|thank you"
    r"|thx|ty|ok|okay|cool|great|nice|bye|goodbye|see you|cheers|how are you)\b",
    re.I,
)
FENCE = re.compile(r"```.*?(```|$)", re.S)
NUMBERED_ITEM = re.compile(r"(?:^|[\s(])(\d{1,2})[.)](?=\s)", re.M)
SEQUENCE_MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern, re.I | re.S))
    for label, pattern in (
        # "first" opening a clause, not "the first line".
        (
            "first ... then",
            r"(^|[.,;:!?\n]\s*|\b(please|you|we|i|to)\s+)first(ly)?\b.+?"
            r"\b(then|next|after that|afterwards|second(ly)?)\b",
        ),
        ("and then", r"\band then\b(?!\s*(what|why|how)\b)"),
        ("then", r"(^|[,;:.!\n]\s*)then\s+(?!(what|why|how)\b)\w"),
        ("after that", r"\b(after that|afterwards|once (that|this|it)('s| is)? (done|finished))\b"),
        ("finally", r"(^|[.;!\n]\s*)(finally|lastly)\b"),
        ("followed by", r"\bfollowed by\b"),
        ("step 1 ... step 2", r"\bstep\s*(1|one)\b.+?\bstep\s*(2|two)\b"),
    )
)
CLAUSE_SPLIT = re.compile(
    r"\band then\b|\bthen\b|\band\b|\bafter that\b|[,;:\n]|[.!?](?=\s|$)", re.I
)
CLAUSE_LEAD = re.compile(
    r"^((?:[-*\u2022]|\(?\d{1,2}[.)])\s*)?((please|also|first(ly)?|next|finally|lastly|now|"
    r"can you|could you|would you|i want you to|i need you to|go ahead and)\s+)*",
    re.I,
)
ACTION_VERB_WORDS = (
    "read write create make add remove delete rename move copy update edit change modify fix "
    "refactor implement run test build install deploy list find search check summarize "
    "summarise explain compare generate convert download fetch open save commit push clean "
    "format lint debug review analyze analyse document translate draft send configure merge "
    "sort count calculate compute plot extract replace rewrite measure benchmark profile "
    "optimize optimise show print collect describe restart start stop clone pull upload "
    "rerun rebuild upgrade backup archive compress verify validate prepare organize organise"
)
ACTION_VERBS = frozenset(ACTION_VERB_WORDS.split())
QUESTION_START = re.compile(r"^(what|why|how|who|when|where|which)\b", re.I)
READ_ONLY_START = re.compile(
    r"^(read|explain|show|summari[sz]e|describe|list|find|search|look at|open|review)\b", re.I
)
CODE_FILE = re.compile(
    r"\b[\w./-]+\.(py|pyi|js|mjs|cjs|ts|tsx|jsx|go|rs|java|kt|c|h|cc|cpp|hpp|cs|rb|php|swift|"
    r"scala|sh|bash|sql|lua|pl|ex|exs|hs|vue|svelte)\b",
    re.I,
)
CHANGE_VERB = re.compile(
    r"\b(write|edit|fix|update|change|modify|rewrite|create|add|clean up|speed up|"
    r"optimi[sz]e|improve|port|convert|migrate|patch|make)\b",
    re.I,
)
CODE_INTENT: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern, re.I))
    for label, pattern in (
        ("refactor", r"\brefactor\w*"),
        ("implement", r"\bimplement\w*"),
        ("debug", r"\bdebug\b"),
        (
            "fix the bug",
            r"\bfix(es|ing)?\b(\s+\w+){0,3}?\s+(bugs?|errors?|crash\w*|exceptions?|"
            r"tests?|failures?|failing|traceback)\b",
        ),
        (
            "write code",
            r"\b(write|create|add|generate|code)\b(\s+\w+){0,3}?\s+(functions?|class(es)?|"
            r"methods?|scripts?|modules?|programs?|unit tests?|tests|decorators?|endpoints?|"
            r"regex|algorithm|code)\b",
        ),
    )
)
PASTED_CODE = re.compile(r"```|Traceback \(most recent call last\)|^\s*\w+Error: ", re.M)
FIX = re.compile(r"\b(fix|repair|correct)\b", re.I)
CODE_MENTION = re.compile(
    r"```|\b(function|class|method|bug|stack ?trace|traceback|exception|syntax error|"
    r"unit tests?|script|\w+Error)\b",
    re.I,
)


class Verdict(NamedTuple):
    """One decision with its evidence; `undecided` when the value is only the fallback."""

    value: bool
    reason: str
    undecided: bool = False


@dataclass(frozen=True, kw_only=True)
class RouteFacts:
    """What the router needs from the state and the run besides the task."""

    recall_enabled: bool = True
    """A memory store is open for this run."""
    memory_has_records: bool = True
    """The store holds at least one record (an empty one is not worth a search)."""
    critic_enabled: bool = True
    """The run has the critic switched on (`run_critic`)."""
    tools: frozenset[str] = frozenset()
    """Names of the tools the action role may call."""
    plan_running: bool = False
    """A plan from an earlier turn is still executing; this turn continues it."""
    shortcuts: bool = False
    """Rule shortcuts may propose the call (the action role makes no native tool calls)."""
    other_tools: bool = False
    """Tools beyond `tools` may be offered (MCP servers are configured): never "no tool"."""


@dataclass(frozen=True)
class Route:
    """What a turn needs, with one reason per decision (in `ROUTE_CHOICES` order).

    The graph state holds it (`DuckState.route`); its fields are the `route_decided`
    event's, so an old checkpoint's dict is `Route(**fields)`.
    """

    recall: bool
    plan: bool
    coder: bool
    critique: bool
    reasons: list[str]
    undecided: tuple[RouteChoice, ...] = ()
    shortcut: Shortcut | None = None
    """The call the rules make themselves (its `reason()` says which rule), or `None`."""
    selected: Selection | None = None
    """The tool chosen by meaning (`merge_selection`): the model fills only its arguments,
    and its result is the answer's ground, as a shortcut's is."""

    def __post_init__(self) -> None:
        # A checkpoint (or an old dict) gives lists back for tuples; equal routes must
        # compare equal, or the route node writes an unchanged route again.
        object.__setattr__(self, "undecided", tuple(self.undecided))
        object.__setattr__(self, "reasons", list(self.reasons))
        if isinstance(self.shortcut, dict):  # a checkpoint read without the types, or an event
            object.__setattr__(self, "shortcut", Shortcut.from_fields(self.shortcut))
        if isinstance(self.selected, dict):
            fields = {**self.selected, "examples": tuple(self.selected.get("examples", ()))}
            fields.pop("reason", None)
            object.__setattr__(self, "selected", Selection(**fields))

    def reason(self, decision: RouteChoice) -> str:
        """The sentence explaining `decision`."""
        return self.reasons[ROUTE_CHOICES.index(decision)]

    def event_fields(self) -> dict[str, Any]:
        """The fields of the `route_decided` event (JSON-serialisable)."""
        fields = dataclasses.asdict(self)
        fields["undecided"] = list(self.undecided)
        if self.shortcut is not None:
            fields["shortcut"]["reason"] = self.shortcut.reason()
        if self.selected is not None:
            fields["selected"]["examples"] = list(self.selected.examples)
            fields["selected"]["reason"] = self.selected.reason()
        return fields


class RouteAnswer(BaseModel):
    """The sys_util role's answer when the rules cannot decide."""

    multi_step: bool
    code: bool
    reason: str = ""

    @field_validator("reason", mode="after")
    @classmethod
    def _clip(cls, reason: str) -> str:
        # Shown to people in the event; a small model may ramble.
        reason = " ".join(reason.split())
        return reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 1] + "\u2026"


class Signals(NamedTuple):
    """Cheap features of the task text the rules read."""

    chitchat: bool
    question: bool
    """Ends with "?" or starts with a question word."""
    how_question: bool
    """Starts with a question word and ends with "?": asks how or why, not for a change."""
    numbered: bool
    sequence: str | None
    actions: int
    words: int
    code_intent: str | None
    code_mention: bool
    read_only: bool
    file_operation: str | None = None
    """The file operation the whole request asks for (`ducklm.turn.file_requests`)."""


def read_signals(task: str) -> Signals:
    """The features of `task` the rules use (code blocks do not count as prose)."""
    text = task.strip()
    prose = FENCE.sub(" code ", text)
    actions = _action_clauses(prose)
    words = len(prose.split())
    wh_start = QUESTION_START.match(text) is not None
    return Signals(
        chitchat=not text or (CHITCHAT.match(text) is not None and words <= 6 and actions == 0),
        question=text.endswith("?") or wh_start,
        how_question=text.endswith("?") and wh_start,
        numbered={1, 2} <= {int(n) for n in NUMBERED_ITEM.findall(prose)},
        sequence=next((label for label, rx in SEQUENCE_MARKERS if rx.search(prose)), None),
        actions=actions,
        words=words,
        code_intent=_code_intent(text, prose),
        code_mention=CODE_MENTION.search(text) is not None or CODE_FILE.search(text) is not None,
        read_only=READ_ONLY_START.match(CLAUSE_LEAD.sub("", text, count=1)) is not None,
        file_operation=found.operation if (found := read_file_request(text)) else None,
    )


def _action_clauses(prose: str) -> int:
    """How many clauses start with an imperative verb ("read x, fix y and test" is 3)."""
    count = 0
    for clause in CLAUSE_SPLIT.split(prose):
        words = CLAUSE_LEAD.sub("", clause.strip(), count=1).split()
        count += bool(words) and words[0].lower() in ACTION_VERBS
    return count


def _code_intent(text: str, prose: str) -> str | None:
    """The phrase that asks for code work, or `None`."""
    for label, pattern in CODE_INTENT:
        if pattern.search(prose):
            return label
    fix = FIX.search(prose)
    if fix and PASTED_CODE.search(text):
        return f"{fix.group(0).lower()} the pasted code"
    code_file = CODE_FILE.search(prose)
    verb = CHANGE_VERB.search(prose)
    return f"{verb.group(0).lower()} {code_file.group(0)}" if code_file and verb else None


def decide_route(task: str, facts: RouteFacts) -> Route:
    """Decide what the turn for `task` needs; undecided decisions carry the fallback."""
    signals = read_signals(task)
    verdicts = {
        "recall": _recall(signals, facts),
        "plan": _plan(signals, facts),
        "coder": _coder(signals, facts),
        "critique": _critique(signals, facts),
    }
    return Route(
        recall=verdicts["recall"].value,
        plan=verdicts["plan"].value,
        coder=verdicts["coder"].value,
        critique=verdicts["critique"].value,
        reasons=[verdicts[d].reason for d in ROUTE_CHOICES],
        undecided=tuple(d for d in ROUTE_CHOICES if verdicts[d].undecided),
        shortcut=_shortcut(task, signals, facts, verdicts) if facts.shortcuts else None,
    )


def _shortcut(
    task: str, s: Signals, facts: RouteFacts, verdicts: dict[str, Verdict]
) -> Shortcut | None:
    """The call the rules make themselves, "no tool" when they are sure of that, or `None`.

    Only for a one-call turn the rules are sure of: no plan (or one running), no coder,
    and nothing left to sys_util (which could still turn it into a plan).
    """
    plan, coder = verdicts["plan"], verdicts["coder"]
    if plan.value or coder.value or plan.undecided or coder.undecided or facts.plan_running:
        return None
    if (rule := answer_rule(task)) is not None:  # a calculation, "remember ...", "who are you?"
        return Shortcut(NO_TOOL, rule=rule)
    if not s.chitchat and (call := find_shortcut(task, facts.tools)) is not None:
        return call
    if facts.other_tools:  # an MCP tool could be meant by anything: the model decides
        return None
    if s.chitchat:
        return Shortcut(NO_TOOL, rule=NO_TOOL_CHITCHAT)
    return Shortcut(NO_TOOL, rule=NO_TOOL_RULE) if needs_no_tool(task, facts.tools) else None


def wants_selection(route: Route, facts: RouteFacts, task: str = "") -> bool:
    """Whether the turn's tool may be chosen by meaning: where a shortcut could have been.

    That is a one-call turn the rules found no call for (no plan, no coder, nothing left
    undecided), on an action role that writes directives, with no MCP tool on offer
    (whose purpose no exemplar knows), and no file operation named in `task` (delete,
    rename, move, copy, append): their tools are offered with their examples instead,
    and the selector, choosing among its exemplars' tools, would pick `file_write`.
    """
    return (
        not mentioned_operation(task).operations
        and facts.shortcuts
        and not facts.other_tools
        and not facts.plan_running
        and route.shortcut is None
        and not (route.plan or route.coder or route.undecided)
    )


def merge_selection(route: Route, selection: Selection | None) -> Route:
    """`route` with the selector's choice: none is the `NO_TOOL` shortcut, a tool `selected`."""
    if selection is None:
        return route
    if selection.tool == NONE:
        return dataclasses.replace(route, shortcut=Shortcut(NO_TOOL, rule=NO_TOOL_MEANING))
    return dataclasses.replace(route, selected=selection)


def _recall(s: Signals, facts: RouteFacts) -> Verdict:
    if not facts.recall_enabled:
        return Verdict(False, R_MEMORY_OFF)
    if not facts.memory_has_records:
        return Verdict(False, R_MEMORY_EMPTY)
    if facts.plan_running:
        return Verdict(False, R_PLAN_RECALLED)
    if s.chitchat:
        return Verdict(False, R_CHITCHAT)
    return Verdict(True, R_RECALL)


def _plan(s: Signals, facts: RouteFacts) -> Verdict:  # noqa: PLR0911  one rule per return
    if facts.plan_running:
        return Verdict(False, R_PLAN_RUNNING)
    if s.chitchat:
        return Verdict(False, R_CHITCHAT)
    if s.numbered:
        return Verdict(True, R_NUMBERED)
    if s.sequence:
        return Verdict(True, R_SEQUENCED.format(marker=s.sequence))
    if s.actions >= 3:
        return Verdict(True, R_ACTIONS.format(count=s.actions))
    if s.question:
        return Verdict(False, R_QUESTION)
    if s.words > LONG_WORDS or (s.actions == 2 and s.words > TWO_ACTIONS_WORDS):
        return Verdict(False, R_LONG, undecided=True)
    return Verdict(False, R_ONE_THING)


def _coder(s: Signals, facts: RouteFacts) -> Verdict:  # noqa: PLR0911  one rule per return
    if s.file_operation is not None:  # "delete app.py" names code but changes none
        return Verdict(False, R_FILE_OP.format(operation=s.file_operation))
    if not s.code_intent and not s.code_mention:
        return Verdict(False, R_NOT_CODE)
    if not CODER_TOOLS & facts.tools:
        return Verdict(False, R_NO_CODER)
    if s.how_question:
        return Verdict(False, R_CODE_QUESTION)
    if s.code_intent:
        return Verdict(True, R_CODE.format(marker=s.code_intent))
    if s.question or s.read_only:
        return Verdict(False, R_CODE_READ)
    return Verdict(False, R_CODE_UNSURE, undecided=True)


def _critique(s: Signals, facts: RouteFacts) -> Verdict:
    if not facts.critic_enabled:
        return Verdict(False, R_CRITIC_OFF)
    if s.chitchat:
        return Verdict(False, R_CHITCHAT)
    return Verdict(True, R_CRITIC)


def route_question(task: str) -> str:
    """The question for the sys_util role when `route.undecided` is not empty."""
    return ROUTE_QUESTION.format(task=task.strip()[:TASK_CHARS])


def parse_route_answer(raw: object) -> RouteAnswer | None:
    """`raw` (a `RouteAnswer` or parsed JSON) as a `RouteAnswer`; `None` when it is not one."""
    if isinstance(raw, RouteAnswer):
        return raw
    try:
        return RouteAnswer.model_validate(raw)
    except ValidationError:
        return None


def merge_answer(route: Route, answer: object) -> Route:
    """Fill `route`'s undecided decisions from the sys_util role's answer.

    Only undecided decisions change: what a rule decided stands. A missing or invalid
    answer (`None`, junk, a failed call) keeps the conservative fallback the route
    already carries (no plan, no coder) and says so in the reasons.

    Args:
        route: The rules' route.
        answer: A `RouteAnswer`, the parsed JSON of the role's reply, or `None`.
    """
    if not route.undecided:
        return route
    parsed = parse_route_answer(answer)
    reasons = list(route.reasons)
    values: dict[str, Any] = {}
    for decision in route.undecided:
        index = ROUTE_CHOICES.index(decision)
        if parsed is None:
            choice = FALLBACK_WORDS.get(decision, "unchanged")
            reasons[index] = R_FALLBACK.format(reason=reasons[index], choice=choice)
            continue
        value = parsed.multi_step if decision == "plan" else parsed.code
        yes, no = ANSWER_WORDS.get(decision, ("yes", "no"))
        why = parsed.reason or "no reason given"
        reasons[index] = R_ASKED.format(verdict=yes if value else no, why=why)
        values[decision] = value
    return dataclasses.replace(route, reasons=reasons, undecided=(), **values)
