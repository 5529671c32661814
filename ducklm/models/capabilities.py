"""What each model server accepts, found rather than configured.

The same `config/models.yaml` meets llama-server, llama-cpp-python, Ollama, LM Studio,
vLLM and hosted APIs, and they differ in what a request may ask: vLLM started without
`--enable-auto-tool-choice` refuses `tools` with a 400; llama-server takes them with 200
and leaves them out of the prompt when the model's chat template has no tools (its
`/props` says so in `chat_template_caps`); llama-cpp-python refuses a `json_schema`
response format. So DuckLM finds out, per server (its base URL), once per process:

1. at the first turn, a short probe of what the server says about itself, bounded by
   `PROBE_TIMEOUT_S`: llama-server's `GET /props` (the template's tool support, and with
   it a grammar and JSON schemas), `POST /tokenize`, what `GET /models` says owns the
   models (`owned_by`: which server this is), and the chat template's generation prompt
   rendered by the server (llama-server's `POST /apply-template`, vLLM's `POST /tokenize`
   with messages): whether it opens `<think>` itself (`template_opens`), so the wire
   reader reads a reasoning model's first reply right without holding it back;
2. from then on, from what it answers: a refusal that names tools or the response format
   (`refusal_of`) is recorded with the server's own words, and the roles on that server
   stop asking for it (`ModelRoles.adapt`);
3. `ducklm doctor` also asks the questions only a completion answers
   (`ducklm.models.capability_requests`):
   one-token requests with a tool, with a JSON schema, and streamed with
   `stream_options.include_usage`, and whether the reply carried reasoning.

A probe that cannot tell leaves a capability unknown, never "no": the configured
settings stand until the server says otherwise.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import httpx
import openai

from ducklm.models.roles import RoleConfig
from ducklm.models.server_props import ServerProps
from ducklm.models.think_tags import OPENING
from ducklm.models.tokens import root_url

PROBE_TIMEOUT_S = 2.0
"""The first-use probe's limit, all of it: a server that says nothing in time says nothing."""
TOKENIZE_TEXT = "DuckLM"

Feature = Literal[
    "native_tools", "json_schema", "grammar", "include_usage", "props", "tokenize", "reasoning"
]
FEATURES: tuple[Feature, ...] = (
    "native_tools", "json_schema", "grammar", "include_usage", "props", "tokenize", "reasoning"
)  # fmt: skip
WORDS: dict[Feature, str] = {
    "native_tools": "native tool calls",
    "json_schema": "response_format with a JSON schema",
    "grammar": "a grammar",
    "include_usage": "usage in a stream (stream_options.include_usage)",
    "props": "GET /props",
    "tokenize": "POST /tokenize",
    "reasoning": "reasoning output",
}

# What a refusal names: vLLM's `"auto" tool choice requires --enable-auto-tool-choice and
# --tool-call-parser to be set`, "tools are not supported", "does not support tools"
# (Ollama), `tool_choice`; llama-cpp-python's 422 on `response_format.type`, "json_schema
# is not supported", "response_format ... must be one of text or json_object".
_TOOL_WORDS = re.compile(r"tool[ _-]?(choice|call|parser)|\btools?\b|function[ _]call", re.I)
_FORMAT_WORDS = re.compile(r"response[ _]format|json[ _]schema|json_object", re.I)
_USAGE_WORDS = re.compile(r"stream[ _]options|include[ _]usage", re.I)
REFUSAL_STATUSES = (400, 422)
SAID_MAX_CHARS = 300
"""The most of a server's words kept: enough for a sentence and its fix."""

# `owned_by` of GET /models, as each server fills it in: the server's name, for people.
_OWNERS = {"llamacpp": "llama-server", "vllm": "vLLM", "library": "Ollama", "ollama": "Ollama",
           "me": "llama-cpp-python", "organization_owner": "LM Studio", "openai": "OpenAI",
           "system": "OpenAI"}  # fmt: skip


@dataclass(frozen=True)
class Finding:
    """Whether a server accepts one thing, and how DuckLM knows."""

    works: bool | None = None
    """True or False when found; None while unknown."""
    how: str = ""
    """The evidence, for people: "its /props", or the server's own words on refusing."""

    def words(self) -> str:
        """`yes`, `no` or `unknown`, with the evidence."""
        said = {True: "yes", False: "no", None: "unknown"}[self.works]
        return f"{said} ({self.how})" if self.how else said


@dataclass(frozen=True)
class Capabilities:
    """What one server accepts (`FEATURES`), as far as DuckLM has found."""

    base_url: str
    server: str = ""
    """What it says it is (`/props` means llama-server; else `owned_by` of its models)."""
    found: Mapping[Feature, Finding] = field(default_factory=dict)
    template_opens: bool | None = None
    """The chat template's generation prompt opens `<think>` (the reply has only its
    closing tag); None when the server cannot render its template."""

    def of(self, feature: Feature) -> Finding:
        """The finding for `feature` (unknown until found)."""
        return self.found.get(feature, Finding())

    def with_finding(self, feature: Feature, finding: Finding) -> Capabilities:
        """A copy that knows `finding`; an unknown one never replaces a known one."""
        if finding.works is None and self.of(feature).works is not None:
            return self
        return replace(self, found={**self.found, feature: finding})

    def summary(self) -> str:
        """One line for people: what it is, then each feature that is known."""
        known = [
            f"{WORDS[f]}: {self.of(f).words()}" for f in FEATURES if self.of(f).works is not None
        ]
        head = self.server or "an OpenAI-compatible server"
        return f"{head}; " + ("; ".join(known) if known else "nothing found yet")

    def as_json(self) -> dict[str, Any]:
        """As `/health` and `--json` output show it."""
        found = {f: {"works": self.of(f).works, "how": self.of(f).how} for f in FEATURES}
        return {"server": self.server, "found": found, "template_opens": self.template_opens}


def props_findings(props: Any) -> dict[Feature, Finding]:
    """What llama-server's `/props` says: tools from its chat template, grammar, JSON schemas.

    A template that cannot render `tools` makes llama-server leave them out of the prompt
    and answer 200 anyway: the model never sees them, so native calls never come.
    """
    if not isinstance(props, dict):
        return {}
    found: dict[Feature, Finding] = {
        "props": Finding(True, "it answers GET /props"),
        # llama-server turns `grammar` and JSON schemas into a grammar of its own.
        "grammar": Finding(True, "llama-server takes `grammar`"),
        "json_schema": Finding(True, "llama-server turns a JSON schema into a grammar"),
    }
    caps = props.get("chat_template_caps")
    if isinstance(caps, dict) and isinstance(caps.get("supports_tools"), bool):
        tools = caps["supports_tools"] and caps.get("supports_tool_calls") is not False
        how = "its /props says the chat template " + (
            "renders tools"
            if tools
            else "has no tools (chat_template_caps.supports_tools is false), so they would "
            "be left out of the prompt"
        )
        found["native_tools"] = Finding(tools, how)
    return found


def refusal_of(exc: BaseException) -> tuple[Feature, Finding] | None:
    """What a refused request says the server does not accept; None if it names nothing.

    Only a 400 or 422 is read (a request the server understood and turned down), and its
    own words are kept as the evidence.
    """
    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in REFUSAL_STATUSES:
        return None
    said = said_in(exc.body)
    if not said:
        return None
    how = f'it refused: "{said}"'
    if _TOOL_WORDS.search(said):
        return "native_tools", Finding(False, how)
    if _FORMAT_WORDS.search(said):
        return "json_schema", Finding(False, how)
    if _USAGE_WORDS.search(said):
        return "include_usage", Finding(False, how)
    return None


def said_in(body: Any) -> str:
    """A refusal's words, on one line and capped.

    OpenAI's `error.message` (vLLM's and Ollama's `message`), or where FastAPI's 422
    (llama-cpp-python) found the request wrong.
    """
    error = body.get("error", body) if isinstance(body, dict) else body
    message = error.get("message") if isinstance(error, dict) else error
    if not isinstance(message, str):
        message = _detail_of(body)
    said = " ".join(message.split())
    return said if len(said) <= SAID_MAX_CHARS else said[: SAID_MAX_CHARS - 1] + "…"


def _detail_of(body: Any) -> str:
    detail = body.get("detail") if isinstance(body, dict) else None
    if not isinstance(detail, list):
        return ""
    parts = []
    for item in detail[:3]:
        if isinstance(item, dict):
            where = ".".join(str(p) for p in item.get("loc") or [] if p != "body")
            parts.append(f"{where}: {item.get('msg', '')}".strip(": "))
    return "; ".join(parts)


async def probe_server(
    base_url: str, *, timeout_s: float = PROBE_TIMEOUT_S, props: ServerProps | None = None
) -> Capabilities | None:
    """Ask the server at `base_url` what it says about itself (no completion is made).

    Args:
        base_url: The server's OpenAI base URL.
        timeout_s: The limit of the whole probe.
        props: Where its `/props` answer is kept for the context window's reader too.

    Returns:
        What it said; None when nothing answered at all (not up yet: ask again later).
    """
    root = root_url(base_url)
    # Building a client loads the CA bundle from disk: off the event loop.
    client = await asyncio.to_thread(httpx.AsyncClient, timeout=timeout_s)
    async with client:
        answers = await asyncio.gather(
            _props_of(props or ServerProps(), root, client),
            _json(client.post(f"{root}/tokenize", json={"content": TOKENIZE_TEXT})),
            _json(client.get(base_url.rstrip("/") + "/models")),
            _json(client.post(f"{root}/apply-template", json={"messages": RENDERED})),
            _json(client.post(f"{root}/tokenize", json=_CHAT_TOKENIZE)),
        )
    if all(answer is _SILENT for answer in answers):
        return None
    props, tokens, models, applied, chat_tokens = (
        None if answer is _SILENT else answer for answer in answers
    )
    found = props_findings(props)
    if props is None:
        found["props"] = Finding(False, "no GET /props")
    counted = isinstance(tokens, dict) and isinstance(tokens.get("tokens"), list)
    found["tokenize"] = Finding(counted, "" if counted else "no POST /tokenize")
    server = "llama-server" if props is not None else _owner(models)
    opens = template_opens(applied, chat_tokens)
    if opens:
        found["reasoning"] = Finding(True, "its chat template opens <think> in the prompt")
    return Capabilities(root, server, found, opens)


RENDERED = [{"role": "user", "content": TOKENIZE_TEXT}]
"""The conversation whose prompt the server renders to show its template's opening."""
_CHAT_TOKENIZE = {"messages": RENDERED, "add_generation_prompt": True, "return_token_strs": True}


def template_opens(applied: Any, tokenized: Any) -> bool | None:
    """Whether the generation prompt a server rendered ends inside an opened `<think>`.

    Args:
        applied: llama-server's `POST /apply-template` answer (`prompt`).
        tokenized: vLLM's `POST /tokenize` answer for messages (`token_strs`).

    Returns:
        None when neither rendered the prompt.
    """
    prompt: str | None = None
    if isinstance(applied, dict) and isinstance(applied.get("prompt"), str):
        prompt = applied["prompt"]
    elif isinstance(tokenized, dict) and isinstance(tokenized.get("token_strs"), list):
        # Byte-level BPE spells a newline `Ċ` and a space `Ġ`; SentencePiece a space `▁`.
        pieces = (t for t in tokenized["token_strs"] if isinstance(t, str))
        prompt = "".join(pieces).replace("Ċ", "\n").replace("Ġ", " ").replace("▁", " ")
    if prompt is None:
        return None
    return prompt.rstrip().endswith(tuple(OPENING))


_SILENT = object()
"""What `_json` gives when nothing answered (refused, or no answer in time)."""


async def _props_of(props: ServerProps, root: str, client: httpx.AsyncClient) -> Any:
    """`/props` as `_json` gives it, asked once for every reader (`ServerProps`)."""
    try:
        return await props.of(root, client)
    except httpx.HTTPError:
        return _SILENT


async def _json(request: Any) -> Any:
    """The JSON a request answered with 200; None for any other answer; `_SILENT` for none."""
    try:
        response = await request
    except httpx.HTTPError:
        return _SILENT
    try:
        return response.json() if response.status_code == 200 else None
    except ValueError:
        return None


def _owner(models: Any) -> str:
    data = models.get("data") if isinstance(models, dict) else None
    first = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
    owner = first.get("owned_by")
    return _OWNERS.get(owner, "") if isinstance(owner, str) else ""


class ServerCapabilities:
    """Each server's capabilities, found once per process (keyed by its base URL)."""

    def __init__(self, props: ServerProps | None = None) -> None:
        self.props = props or ServerProps()
        """Each server's `/props` answer, shared with the window's reader (`ContextSizes`)."""
        self._known: dict[str, Capabilities] = {}
        self._probed: set[str] = set()
        self._locks: dict[str, asyncio.Lock] = {}

    def known(self, base_url: str) -> Capabilities | None:
        """What is known of the server so far, without asking it; None before first use."""
        return self._known.get(root_url(base_url))

    async def of(self, base_url: str) -> Capabilities:
        """The server's capabilities, probed at the first call (`probe_server`).

        A server that does not answer the probe is asked again at the next call.
        """
        key = root_url(base_url)
        if key not in self._probed:
            async with self._locks.setdefault(key, asyncio.Lock()):
                probed = (
                    None if key in self._probed else await probe_server(base_url, props=self.props)
                )
                if probed is not None:
                    self._known[key] = _merged(probed, self._known.get(key))
                    self._probed.add(key)
        return self._known.get(key) or Capabilities(key)

    def learn(self, base_url: str, feature: Feature, finding: Finding) -> bool:
        """Note what a reply or a refusal showed; whether it was news."""
        key = root_url(base_url)
        known = self._known.get(key) or Capabilities(key)
        if known.of(feature) == finding:
            return False
        self._known[key] = known.with_finding(feature, finding)
        return True

    def adjusted(self, config: RoleConfig) -> dict[str, Any]:
        """The role settings its server's findings change (`changes_for`)."""
        found = self.known(config.base_url)
        return {} if found is None else changes_for(found, config)


def changes_for(found: Capabilities, config: RoleConfig) -> dict[str, Any]:
    """The role settings what its server accepts changes (empty: none).

    Native tool calls on a server that refuses them or cannot see them become JSON
    directives; a JSON schema it refuses becomes `json_object` with the schema (what
    llama-cpp-python takes).
    """
    changes: dict[str, Any] = {}
    if config.tool_mode == "native" and found.of("native_tools").works is False:
        changes["tool_mode"] = "json"
    if config.structured_output == "json_schema" and found.of("json_schema").works is False:
        changes["structured_output"] = "json_object_schema"
    return changes


def _merged(probed: Capabilities, earlier: Capabilities | None) -> Capabilities:
    """The probe's findings with what replies already showed (replies win)."""
    if earlier is None:
        return probed
    merged = probed
    for feature, finding in earlier.found.items():
        merged = merged.with_finding(feature, finding)
    return merged
