"""The model servers people run, played by the scripted server: one variant per wire.

Each `Variant` copies what one server is documented to send and accept: where its
reasoning goes, what its usage counts, whether it serves llama-server's `/props`, and
whether it takes `tools` natively, refuses them with a 400, or takes them and leaves
them out of the prompt (a chat template without tools). `MatrixModel` is the model
behind it: it answers every role of a turn from the request itself (tools, a directive,
a reviewer's JSON, the answer), so one conversation runs on every variant with no
setting changed, and it answers right only when the tool really ran.

The conversation (`TURNS`): two questions about two workspace files, each needing a
`file_read` (`FILES`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from tests.support.scripted_llm import Reply, ScriptedLLM, Wire, call, reply
from tests.support.server_words import (
    LLAMA_CPP_PYTHON_422,
    OLLAMA_NO_TOOLS,
    VLLM_NO_PARSER,
    llama_server_props,
)

ToolSupport = Literal["native", "refused", "ignored"]

REASONING = "I should read the file before I answer (pondering-7f3)."
"""Every reply's reasoning, on the variants whose model reasons; the marker must never
reach an answer or a later request."""
REASONING_MARK = "pondering-7f3"

FILES = {"notes.md": "alpha-line\nbeta-line\ngamma-line\n", "todo.md": "buy milk\n"}
TURNS = (
    ("How many lines does notes.md have?", "notes.md has 3 lines."),
    ("What does todo.md say?", "todo.md says: buy milk."),
)
"""Each request, and the answer a model that read the file gives. (A rule may make the
call and answer with the tool's output itself, as it does for small models.)"""
FACTS = ("3", "buy milk")
"""What each right answer says, whoever wrote it; no wrong guess says it."""
RIGHT = {name: answer for name, (_, answer) in zip(FILES, TURNS, strict=True)}
WRONG = {"notes.md": "notes.md has 10 lines.", "todo.md": "todo.md is probably empty."}
"""What the model guesses without the file (as SmolLM2 did when llama-server left tools out)."""
SEEN = {"notes.md": "gamma-line", "todo.md": "buy milk"}
"""Text only the file holds: the model has read it when its request holds this."""


@dataclass(frozen=True)
class Variant:
    """One server's wire behaviour.

    Attributes:
        name: The server (and set-up) whose documented behaviour this copies.
        wire: Where reasoning goes, what usage counts (`Wire`).
        tools: Native calls, a 400 refusal (`refusal` says its words), or taken and left
            out of the prompt (the model then never calls a tool).
        reasons: The model reasons (every reply carries `REASONING`).
        props: llama-server's `/props`, or None (a 404).
        json_schema: False: `response_format` with a JSON schema is refused (422).
        tools_mode: How DuckLM should end up calling tools there: found, not configured.
        evidence: What the served-context guard can trust on this server (the README's
            table says the same).
    """

    name: str
    wire: Wire
    tools: ToolSupport = "native"
    reasons: bool = False
    refusal: str = ""
    props: dict[str, Any] | None = None
    json_schema: bool = True
    tools_mode: Literal["native", "json"] = "native"
    evidence: str = ""

    def install(self, llm: ScriptedLLM) -> MatrixModel:
        """Make `llm` play this server; the model answering behind it."""
        llm.wire = self.wire
        llm.props = self.props
        model = MatrixModel(self)
        llm.set_responder(model)
        return model


VARIANTS = (
    Variant(
        "llama-server (a reasoning model, template with tools)",
        Wire(reasoning="reasoning_content", cached_tokens=True, timings=True),
        reasons=True,
        props=llama_server_props(tools=True),
        evidence="timings (prompt_n + cache_n), /props n_ctx",
    ),
    Variant(
        "llama-server (SmolLM2: template without tools)",
        Wire(cached_tokens=True, timings=True),
        tools="ignored",
        props=llama_server_props(tools=False),
        tools_mode="json",
        evidence="timings (prompt_n + cache_n), /props n_ctx",
    ),
    Variant(
        "llama-cpp-python (chatml-function-calling)",
        Wire(usage="none"),
        json_schema=False,
        evidence="none (no usage in streams, no /props): the configured size",
    ),
    Variant(
        "Ollama (before its 2026 usage fix)",
        Wire(reasoning="reasoning", usage="cache_misses", tool_call_index=False),
        reasons=True,
        evidence="usage only when two calls agree (it counts cache misses)",
    ),
    Variant(
        "Ollama (a model without tools, cached prompt counted 0)",
        Wire(usage="zero"),
        tools="refused",
        refusal=OLLAMA_NO_TOOLS,
        tools_mode="json",
        evidence="none (usage says 0): the configured size",
    ),
    Variant(
        "vLLM with --reasoning-parser and --tool-call-parser",
        Wire(reasoning="reasoning_content", usage="every_chunk"),
        reasons=True,
        evidence="usage (the whole prompt)",
    ),
    Variant(
        "vLLM without parsers (an R1 distill: <think> opened by the template)",
        Wire(reasoning="think_opened", tool_call_ids=False),
        reasons=True,
        tools="refused",
        refusal=VLLM_NO_PARSER,
        tools_mode="json",
        evidence="usage (the whole prompt)",
    ),
    Variant(
        "LM Studio (reasoning inline in <think>)",
        Wire(reasoning="think_tags"),
        reasons=True,
        evidence="usage (the whole prompt)",
    ),
    Variant(
        "OpenAI / OpenRouter",
        Wire(reasoning="reasoning", cached_tokens=True),
        reasons=True,
        evidence="usage (the whole prompt, cached_tokens apart)",
    ),
)


class MatrixModel:
    """The model behind a variant: it reads each request and answers as its role.

    Attributes:
        variant: The server it plays.
        refused: Requests it refused (tools it cannot take, a schema it refuses).
        ignored: Requests whose tools the server left out of the prompt.
    """

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.refused = 0
        self.ignored = 0

    def __call__(self, body: dict[str, Any]) -> Reply:
        variant = self.variant
        if "tools" in body and variant.tools == "refused":
            self.refused += 1
            return reply(variant.refusal, status=400)
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema" and not variant.json_schema:
            self.refused += 1
            return reply(status=422, raw_body=LLAMA_CPP_PYTHON_422)
        if fmt:
            return self._reply(json.dumps(self._json(_schema_title(fmt), body)))
        if "tools" in body and variant.tools == "native":
            return self._native(body)
        if "tools" in body:
            self.ignored += 1  # the template had no tools: the model never saw them
        return self._reply(self._answer(body))

    def _reply(self, content: str = "", **fields: Any) -> Reply:
        return reply(content, reasoning=REASONING if self.variant.reasons else "", **fields)

    def _native(self, body: dict[str, Any]) -> Reply:
        name = _asked_file(body)
        if name is None or _has_read(body, name):
            return self._reply(self._answer(body))
        return self._reply(tool_calls=[call("file_read", path=name)])

    def _answer(self, body: dict[str, Any]) -> str:
        name = _asked_file(body)
        if name is None:
            return "I can help with the files here."
        return RIGHT[name] if _has_read(body, name) else WRONG[name]

    def _json(self, title: str, body: dict[str, Any]) -> dict[str, Any]:
        if title in ("ActionDirective", "ToolCall", "action_directive", "tool_call"):
            name = _asked_file(body)
            if title in ("ActionDirective", "action_directive") and (
                name is None or _has_read(body, name)
            ):
                return {"tool": "answer"}
            return {"tool": "file_read", "args": {"path": name or "notes.md"}}
        canned: dict[str, dict[str, Any]] = {
            "Critique": {"score": 0.8, "summary": "The answer read the file."},
            "MemoryProposal": {"should_store": False},
            "RouteAnswer": {"multi_step": False, "code": False, "reason": "one question"},
            "RecallPick": {"relevant": []},
            "ok": {"ok": True},  # the doctor's probe of `response_format`
        }
        if title not in canned:
            raise AssertionError(f"the matrix model was asked for unexpected JSON {title!r}")
        return canned[title]


def _schema_title(fmt: dict[str, Any]) -> str:
    """What a JSON request asks for: its schema's name, or (json_object) its title."""
    named = fmt.get("json_schema") or {}
    schema = named.get("schema") or fmt.get("schema") or {}
    return str(named.get("name") or schema.get("title") or "")


def _texts(body: dict[str, Any]) -> list[tuple[str, str]]:
    """Each message's role and text."""
    found = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(str(part.get("text", "")) for part in content)
        found.append((str(message.get("role")), str(content or "")))
    return found


def _asked_file(body: dict[str, Any]) -> str | None:
    """The file the latest request asks about."""
    for role, text in reversed(_texts(body)):
        if role == "user":
            names = re.findall(r"\b(notes\.md|todo\.md)\b", text)
            return names[-1] if names else None
    return None


def _has_read(body: dict[str, Any], name: str) -> bool:
    """Whether the file's text is in the request since its latest user message."""
    texts = _texts(body)
    last_user = max((n for n, (role, _) in enumerate(texts) if role == "user"), default=0)
    return any(SEEN[name] in text for _, text in texts[last_user:])
