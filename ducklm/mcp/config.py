"""The MCP servers file: `{"mcpServers": {name: server}}`, the shape other agents use.

A server is stdio (`command`, `args`, `env`, `cwd`) or streamable HTTP (`url`,
`headers`, and `oauth` for what OAuth discovery cannot know: `oauth/spec.py`). DuckLM
adds, per server, `trust` (`untrusted` by default), `enabled` (Cline's `disabled` is
read too), `timeout_s` (a call's whole time), `idle_timeout_s` (its time without a
progress notification) and `start_timeout_s`. `${VAR}` and `${VAR:-default}` in `env`,
`headers`, `args`, `url` and `oauth`'s `client_id`, `client_secret` and
`private_key_file` are filled from DuckLM's environment when the server starts
(`variables`). A bad file stops DuckLM at startup with a message that names the server
and the field: a server that silently does not load, or
loads with a misspelled `trust`, is worse than a refusal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ducklm.mcp.oauth.spec import OAuthSpec
from ducklm.mcp.variables import expand, refuse_duck

SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,30}$")
TOP_LEVEL = '{"mcpServers": {"name": {...}}}'
VS_CODE_SHAPE = (
    "'servers' is VS Code's spelling; DuckLM reads {\"mcpServers\": {...}} (rename the key)"
)
# The oauth fields that may name `${VAR}` (a secret, a key's path, an id per machine).
OAUTH_VARIABLE_FIELDS = ("client_id", "client_secret", "private_key_file")
BAD_NAME = (
    "a server name is 1-31 letters, digits, '-' or '_', without '__' (tools are named "
    "<server>__<tool>)"
)


class McpConfigError(ValueError):
    """The MCP servers file cannot be used; the message names the server and the field."""


class ServerSpec(BaseModel):
    """One server of the file."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    name: str = ""
    """The key in `mcpServers` (filled by the loader)."""
    command: str | None = None
    """stdio: the program to start."""
    args: tuple[str, ...] = ()
    """stdio: its arguments."""
    env: dict[str, str] = Field(default_factory=dict)
    """stdio: its whole environment besides PATH, HOME, USER, LOGNAME, SHELL and TERM."""
    cwd: Path | None = None
    """stdio: its working folder; the workspace when unset."""
    url: str | None = None
    """Streamable HTTP: the endpoint."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Streamable HTTP: headers sent with every request."""
    oauth: OAuthSpec | None = None
    """Streamable HTTP: how DuckLM gets its token, beyond discovering it (`oauth/spec.py`)."""
    type: Literal["stdio", "http", "streamable-http", "streamable_http"] | None = None
    """The transport, as some clients write it; otherwise `command` or `url` says."""
    trust: Literal["untrusted", "trusted"] = "untrusted"
    """Whether its results may be believed and its read-only tools run unasked."""
    enabled: bool = True
    disabled: bool = False
    """Cline's and Roo's spelling of `enabled: false`."""
    timeout_s: float | None = Field(default=None, gt=0, le=3600)
    """Seconds a call may take in all; `DUCK_MCP_TIMEOUT_S` when unset."""
    idle_timeout_s: float | None = Field(default=None, gt=0, le=3600)
    """Seconds a call may go without a progress notification; `timeout_s` when unset."""
    start_timeout_s: float = Field(default=60.0, gt=0, le=3600)
    """Seconds the server may take to start and list its tools."""

    @field_validator("env", "headers")
    @classmethod
    def _no_duck_variables(cls, values: dict[str, str]) -> dict[str, str]:
        for key, value in values.items():
            try:
                refuse_duck(value)
            except ValueError as exc:
                raise ValueError(f"{key}: {exc}") from None
        return values

    @field_validator("args")
    @classmethod
    def _no_duck_in_args(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(refuse_duck(v) for v in values)

    @field_validator("url")
    @classmethod
    def _no_duck_in_url(cls, value: str | None) -> str | None:
        return None if value is None else refuse_duck(value)

    @field_validator("oauth")
    @classmethod
    def _no_duck_in_oauth(cls, value: OAuthSpec | None) -> OAuthSpec | None:
        for field in OAUTH_VARIABLE_FIELDS:
            found = getattr(value, field, None)
            if found is not None:
                try:
                    refuse_duck(found)
                except ValueError as exc:
                    raise ValueError(f"{field}: {exc}") from None
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> ServerSpec:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either 'command' (stdio) or 'url' (streamable HTTP)")
        if self.url is not None and (self.args or self.env or self.cwd):
            raise ValueError("'args', 'env' and 'cwd' are for stdio servers, not 'url'")
        if self.url is not None and not self.url.startswith(("http://", "https://", "${")):
            raise ValueError("'url' must start with http:// or https://")
        if self.command is not None and (self.headers or self.oauth):
            raise ValueError("'headers' and 'oauth' are for 'url' servers")
        if self.oauth is not None and self.static_authorization:
            raise ValueError("give either an 'Authorization' header or 'oauth', not both")
        return self

    def expanded(self, environ: Mapping[str, str]) -> ServerSpec:
        """The server with its `${VAR}` filled from `environ`.

        Raises:
            UnsetVariable: A variable without a default is unset.
            ValueError: The filled `url` is not http(s).
        """
        url = None if self.url is None else expand(self.url, environ, "url")
        if url is not None and not url.startswith(("http://", "https://")):
            raise ValueError("'url' must start with http:// or https://")
        return self.model_copy(
            update={
                "url": url,
                "args": tuple(expand(a, environ, "args") for a in self.args),
                "env": {k: expand(v, environ, f"env.{k}") for k, v in self.env.items()},
                "headers": {k: expand(v, environ, f"headers.{k}") for k, v in self.headers.items()},
                "oauth": self._expanded_oauth(environ),
            }
        )

    def _expanded_oauth(self, environ: Mapping[str, str]) -> OAuthSpec | None:
        if self.oauth is None:
            return None
        filled = {
            f: expand(v, environ, f"oauth.{f}")
            for f in OAUTH_VARIABLE_FIELDS
            if (v := getattr(self.oauth, f)) is not None
        }
        return self.oauth.model_copy(update=filled)

    @property
    def static_authorization(self) -> bool:
        """Whether the person gave an `Authorization` header (a token of their own)."""
        return any(k.lower() == "authorization" for k in self.headers)

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """How DuckLM talks to it."""
        return "stdio" if self.command is not None else "http"

    @property
    def active(self) -> bool:
        """Whether DuckLM starts it."""
        return self.enabled and not self.disabled

    @property
    def trusted(self) -> bool:
        """Whether the person marked it trusted."""
        return self.trust == "trusted"


def load_mcp_config(path: Path) -> tuple[ServerSpec, ...]:
    """The servers of the file at `path`; none when it does not exist. Blocking (reads).

    Raises:
        McpConfigError: The file is not JSON, or a server or field is wrong.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ()
    except OSError as exc:
        raise McpConfigError(f"{path}: cannot read it ({exc.strerror})") from None
    return parse_mcp_config(text, str(path))


def parse_mcp_config(text: str, where: str = "mcp.json") -> tuple[ServerSpec, ...]:
    """The servers of the JSON `text` (from `where`, for messages).

    Raises:
        McpConfigError: The text is not JSON, or a server or field is wrong.
    """
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise McpConfigError(f"{where}: not JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("mcpServers", {}), dict):
        raise McpConfigError(f"{where}: expected {TOP_LEVEL}")
    if "servers" in raw and "mcpServers" not in raw:
        raise McpConfigError(f"{where}: {VS_CODE_SHAPE}")
    unknown = sorted(set(raw) - {"mcpServers"})
    if unknown:  # a key DuckLM ignored silently is a setting the person believes in
        raise McpConfigError(f"{where}: unknown top-level key {unknown[0]!r}; expected {TOP_LEVEL}")
    servers = []
    for name, body in raw.get("mcpServers", {}).items():
        if not SERVER_NAME.match(name) or "__" in name:
            raise McpConfigError(f"{where}: server {name!r}: {BAD_NAME}")
        if not isinstance(body, dict):
            raise McpConfigError(f"{where}: server {name!r}: expected an object")
        try:
            servers.append(ServerSpec.model_validate({**body, "name": name}))
        except ValidationError as exc:
            raise McpConfigError(f"{where}: server {name!r}: {_problems(exc)}") from None
    return tuple(servers)


def _problems(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        field = ".".join(str(p) for p in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown field"
        # Values are not echoed: `env` and `headers` hold keys and tokens.
        parts.append(f"{field}: {message}" if field else message)
    return "; ".join(parts)
