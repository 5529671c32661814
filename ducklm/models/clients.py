"""Chat clients per model role, and how a role asks its server for JSON.

Clients are `ChatOpenAI` with the client library's own retries switched off: retries
belong to the graph (`RetryPolicy` on the nodes that call models) so there is one place
that decides what is safe to repeat. Building a client creates an SSL context (file
reads), so `ModelRoles.build` runs on a worker thread, never on the event loop.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx
from langchain_core.language_models import LanguageModelInput
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_openai import ChatOpenAI
from langgraph.constants import TAG_NOSTREAM

from ducklm.models.local.restart_wait import RestartWaitingTransport
from ducklm.models.roles import RoleConfig, RoleName
from ducklm.models.wire_chat import WireReadingChat

# Enough connections for concurrent conversations (the server runs many at once).
HTTP_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)

# Roles whose text people read as it streams: the answer (action, thinker) and code.
SPEAKING_ROLES: frozenset[RoleName] = frozenset({"action", "thinker", "coder"})

# The roles a conversation's chosen model replaces (`ModelRoles.switched`): the ones that
# answer. The reviewers, the coder and the small JSON roles keep the configured model.
ANSWERING_ROLES: tuple[RoleName, ...] = ("thinker", "action")


class _IgnoredCookies(httpx.Cookies):
    """A cookie jar that never stores what a response sets."""

    def extract_cookies(self, response: httpx.Response) -> None:
        """Keep nothing: model servers are stateless APIs, not browsers."""


class CookielessClient(httpx.AsyncClient):
    """An `httpx.AsyncClient` that neither keeps nor sends cookies.

    httpx reads every response's `Set-Cookie` headers through `http.cookiejar`, about
    0.1 ms a model call on this machine even when there are none, and a turn makes
    several calls. An OpenAI-compatible API is authenticated by its key, not by cookies;
    a proxy that relies on a sticky-session cookie would lose its affinity (the cost).
    """

    @property
    def cookies(self) -> httpx.Cookies:
        """Always empty."""
        return _IgnoredCookies()

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        raise TypeError("the model client keeps no cookies")


class ModelRoles:
    """The resolved role configs and one chat client per role."""

    def __init__(
        self,
        configs: Mapping[RoleName, RoleConfig],
        clients: Mapping[RoleName, Any],
        http: httpx.AsyncClient | None = None,
    ):
        self._configs = dict(configs)
        self._clients = dict(clients)
        self._http = http
        self._with_tools: dict[tuple[RoleName, tuple[str, ...]], Runnable[Any, Any]] = {}
        self._switched: dict[str, ModelRoles] = {}

    @classmethod
    def build(cls, configs: Mapping[RoleName, RoleConfig]) -> ModelRoles:
        """Create a client for every role. Blocking: call through `asyncio.to_thread`.

        The roles share one HTTP connection pool that this object owns (`aclose`):
        langchain-openai's default pool is process-wide and cached by URL, so it would
        outlive the event loop its connections belong to.
        """
        # Waits for the local server that `ducklm serve` restarts after a crash.
        transport = RestartWaitingTransport(httpx.AsyncHTTPTransport(limits=HTTP_LIMITS))
        http = CookielessClient(timeout=None, transport=transport)
        clients = {name: make_chat_model(cfg, http) for name, cfg in configs.items()}
        return cls(configs, clients, http)

    async def aclose(self) -> None:
        """Close the roles' HTTP connections."""
        if self._http is not None:
            await self._http.aclose()

    def switched(self, model: str | None) -> ModelRoles:
        """These roles with `model` for the answering roles (thinker, action) on their servers.

        A conversation's chosen model (`ducklm.runtime.model_choice`). The clients are
        copies that differ only in the model name they send, sharing this object's
        connections (which it alone closes); built once per model, so their tool
        bindings are kept from turn to turn. `None`, or the model they have: these roles.
        """
        if not model or all(self._configs[r].model == model for r in ANSWERING_ROLES):
            return self
        if model not in self._switched:
            configs = dict(self._configs)
            clients = dict(self._clients)
            for role in ANSWERING_ROLES:
                configs[role] = configs[role].model_copy(update={"model": model})
                clients[role] = clients[role].model_copy(update={"model_name": model})
            self._switched[model] = ModelRoles(configs, clients)
        return self._switched[model]

    def config(self, role: RoleName) -> RoleConfig:
        """The resolved settings of `role`."""
        return self._configs[role]

    def adjust(self, changes: Callable[[RoleConfig], Mapping[str, Any]]) -> list[RoleName]:
        """Change each role's settings as `changes` says; the roles that changed.

        What a role's server was found to accept (`ServerCapabilities.adjusted`): a
        server that cannot take native tool calls gets JSON directives from then on. The
        clients stay as they are: these settings are read at each call. Switched copies
        (`switched`) change with them.
        """
        changed = []
        for name, config in self._configs.items():
            if update := changes(config):
                self._configs[name] = config.model_copy(update=dict(update))
                changed.append(name)
        for other in self._switched.values():
            other.adjust(changes)
        return changed

    def chat(self, role: RoleName) -> ChatOpenAI:
        """The chat client of `role`."""
        client: ChatOpenAI = self._clients[role]
        return client

    def with_tools(self, role: RoleName, tools: Sequence[BaseTool]) -> Runnable[Any, Any]:
        """The role's client with `tools` bound, built once per tool list.

        Binding converts every tool to its JSON schema, about half a millisecond per call:
        the action role would pay it at every step.
        """
        key = (role, tuple(tool.name for tool in tools))
        if key not in self._with_tools:
            self._with_tools[key] = self.chat(role).bind_tools(tools)
        return self._with_tools[key]

    def same_model(self, a: RoleName, b: RoleName) -> bool:
        """Whether two roles would send a request to the same model on the same server."""
        ca, cb = self._configs[a], self._configs[b]
        return (ca.model, ca.base_url) == (cb.model, cb.base_url)

    def json_client(self, role: RoleName, name: str, schema: dict[str, Any]) -> Any:
        """The role's client set up to answer with JSON that follows `schema`.

        `json_schema` is what llama-server turns into a grammar; llama-cpp-python's server
        rejects it and takes `json_object` with a `schema` key; `prompt` sends no
        `response_format` (the schema is in the prompt, see `schema_instructions`).
        """
        # A JSON reply is for DuckLM, not for people: kept out of `messages` streams.
        client = self.chat(role).with_config(tags=[TAG_NOSTREAM])
        mode = self._configs[role].structured_output
        if mode == "json_schema":
            fmt: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": False},
            }
        elif mode == "json_object_schema":
            fmt = {"type": "json_object", "schema": schema}
        else:
            return client
        return client.bind(response_format=fmt)


def schema_instructions(schema: dict[str, Any]) -> str:
    """Text that tells a model which JSON to produce, for servers without structured output."""
    return (
        "Answer with one JSON object and nothing else. It must follow this JSON schema:\n"
        + json.dumps(schema, indent=None, sort_keys=True)
    )


class LocalChatOpenAI(WireReadingChat):
    """A role's chat client: replies read by the wire reader, and limited with `max_tokens`.

    The reading is `WireReadingChat`'s. `max_tokens` is the field local servers read:
    langchain-openai renames `max_tokens` to OpenAI's newer `max_completion_tokens`, which
    llama-cpp-python's server ignores: a role then generates until the context is full.
    Measured with the bundled SmolLM2 under a JSON grammar: about a third of the turns
    ran a JSON role for minutes, past its 120 s timeout. llama-server, llama-cpp-python,
    vLLM and Ollama all read `max_tokens`, and OpenAI still takes it for chat models.
    """

    def _get_request_payload(
        self, input_: LanguageModelInput, *, stop: list[str] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        payload: dict[str, Any] = super()._get_request_payload(input_, stop=stop, **kwargs)
        if "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        return as_wire_json(payload)


AS_SENT = ("messages", "tools")
"""The request's fields that go to the server as langchain-openai built them."""


def as_wire_json(payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` with its messages and tools moved into `extra_body`, which is sent as it is.

    The openai client walks every request body against its typed parameters
    (`async_maybe_transform`) to rename aliased keys and format dates and files, which
    chat messages and tool schemas do not have: langchain-openai has already built them
    as wire JSON. With DuckLM's tools and prompt that walk took about 2 ms of the loop
    before each request was sent, the first token's wait included. `extra_body` is
    merged into the JSON body as it is, so the request on the wire is the same.
    """
    if "messages" not in payload:  # not a chat completion (the Responses API's `input`)
        return payload
    moved = {name: payload.pop(name) for name in AS_SENT if name in payload}
    # `messages` is a required argument of `create`: an empty list walks in no time, and
    # `extra_body`'s copy replaces it in the body.
    payload["messages"] = []
    payload["extra_body"] = {**(payload.get("extra_body") or {}), **moved}
    return payload


def make_chat_model(cfg: RoleConfig, http: httpx.AsyncClient | None = None) -> ChatOpenAI:
    """A chat client for one role. Blocking (SSL context): keep it off the event loop."""
    return LocalChatOpenAI(
        http_async_client=http,
        # Roles whose text is not the answer stay out of LangGraph's `messages` stream
        # mode, so Agent Protocol clients (agent-chat-ui) do not show it as a reply.
        tags=[] if cfg.name in SPEAKING_ROLES else [TAG_NOSTREAM],
        model=cfg.model,
        base_url=cfg.base_url,
        api_key=cfg.api_key,  # type: ignore[arg-type]  # pydantic coerces str to SecretStr
        temperature=cfg.temperature,
        max_tokens=cfg.max_output_tokens,  # type: ignore[call-arg]  # alias of max_completion_tokens
        timeout=cfg.timeout_s,
        # In the body as they are: the openai client has no parameter for llama.cpp's
        # penalties, and a server that does not know one ignores it (`sampling.py`).
        extra_body=cfg.sampling.body() or None,
        # langchain-openai wraps every streamed chunk in `asyncio.wait_for` for this
        # limit: a task and a timer per token, which cost the server about a third of its
        # token rate. The request's `timeout` already ends a model server gone silent
        # (httpx's read timeout: no byte for `timeout_s`); what is lost is only a limit
        # on streams that send keep-alive comments and no content, which local servers
        # do not.
        stream_chunk_timeout=None,
        max_retries=0,
    )
