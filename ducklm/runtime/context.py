"""The per-run context every node receives as `runtime.context`, and how it is opened.

Dependencies (model clients per role, prompts, tools, stores, settings) reach nodes only
through here, never through module globals, so a test, the CLI, the server and
LangGraph Studio can each hand the graph their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ducklm.config.settings import Settings
from ducklm.learning.skills import SkillRegistry, skills_dir_of
from ducklm.mcp.servers import McpServers, open_mcp
from ducklm.memory import MemoryStore, open_episodes, open_memory
from ducklm.models.clients import ModelRoles
from ducklm.models.local.autostart import models_config_for
from ducklm.models.prompts import Prompts, load_prompts, prompts_dir
from ducklm.models.roles import default_models_path, load_roles
from ducklm.models.tokens import ESTIMATE, BatchTokenCounter, server_tokenizer
from ducklm.runtime.notices import OnceNotices
from ducklm.runtime.owner import ProcessOwner
from ducklm.runtime.secrets import SecretVault
from ducklm.stores import ApprovalRules, CommandIntents, RunStores, open_database
from ducklm.stores.experience import ExperienceLog
from ducklm.stores.private import secure_data_dir
from ducklm.tools.commands.policy import CommandPolicy, load_command_policy
from ducklm.tools.registry import ToolRegistry, default_tools
from ducklm.tools.sandbox.runner import Protection, detect_protection
from ducklm.undo.service import WorkspaceUndo, open_undo

log = logging.getLogger(__name__)

NO_SANDBOX = (
    "no sandbox: neither bubblewrap nor Landlock works on this machine, so every shell "
    "command that writes or uses the network will ask first (`ducklm doctor` explains)"
)


@dataclass(kw_only=True, frozen=True)
class DuckContext:
    """What a run needs besides its state."""

    settings: Settings
    """Process-wide settings (budgets, step limit, paths)."""
    models: ModelRoles
    """Chat client and config per role."""
    prompts: Prompts
    """System prompt templates per role."""
    tools: ToolRegistry
    """Tools the action role may call."""
    approvals: ApprovalRules
    """Actions a person allowed forever."""
    commands: CommandPolicy
    """The shell command policy (`config/permissions.yaml`)."""
    protection: Protection
    """How shell commands are confined on this machine: bubblewrap, landlock or none."""
    intents: CommandIntents
    """Commands started, so a resumed run never starts one twice."""
    memory: MemoryStore | None
    """Long-term memory (records in SQLite, vectors in Qdrant)."""
    episodes: MemoryStore | None = None
    """Every user and assistant message as it was said (`ducklm.memory.episodes`)."""
    experience: ExperienceLog
    """The critic's reflections."""
    skills: SkillRegistry
    """Skills loaded from the skills folder (`ducklm.learning.skills.skills_dir_of`)."""
    tokens: BatchTokenCounter
    """Counts tokens: the model server's tokenizer when it has one, else an estimate."""
    vault: SecretVault
    """Passwords given out of band, by one-time token (memory only)."""
    protected: tuple[Path, ...] = ()
    """DuckLM's own config and data: writes there always ask, even inside the workspace."""
    undo: WorkspaceUndo | None = None
    """Workspace checkpoints and undo (`ducklm.undo`); `None` when turned off."""
    mcp: McpServers = field(default_factory=McpServers.empty)
    """The MCP servers of the config file, started by the first turn that needs them."""
    notices: OnceNotices = field(default_factory=OnceNotices)
    """Notices shown once per conversation (a reviewer that keeps failing)."""
    critic_enabled: bool = True
    """Run the critic after the answer."""
    memory_enabled: bool = True
    """Run the memory policy after the answer."""
    review_behind: bool = False
    """Run the critic and memory policy behind the answer, as a review run of their own
    (`ducklm.runtime.reviews`). Set by the runner's doors; a graph served without the
    runner (`langgraph dev`, Studio) reviews inside the turn."""
    events: Callable[[dict[str, Any]], None] | None = None
    """Where `emit` sends the nodes' events: the run's channel under DuckLM's runner
    (`ducklm.runtime.channel`); `None` sends them to LangGraph's `custom` stream."""

    def for_run(
        self, *, critic: bool = True, memory: bool = True, review_behind: bool = False
    ) -> DuckContext:
        """A copy of the context with the per-run switches set."""
        return dataclasses.replace(
            self, critic_enabled=critic, memory_enabled=memory, review_behind=review_behind
        )


@dataclass(kw_only=True, frozen=True)
class RunSwitches:
    """The context a LangGraph server run may set: just the per-run switches.

    Studio and Agent Protocol clients can only send JSON, so a graph served there
    declares this as its context schema and fills in the rest from its default context.
    """

    critic: bool = True
    """Run the critic after the answer."""
    memory: bool = True
    """Run the memory policy after the answer."""


@dataclass(frozen=True)
class Dependencies:
    """Everything opened for a process: the run context plus the runs' stores."""

    context: DuckContext
    stores: RunStores


@dataclass(frozen=True)
class _Static:
    models: ModelRoles
    prompts: Prompts
    commands: CommandPolicy
    skills: SkillRegistry
    protected: tuple[Path, ...]


def _load_static(settings: Settings) -> _Static:
    roles = load_roles(
        models_config_for(settings), base_url=settings.llm_base_url, api_key=settings.llm_api_key
    )
    secure_data_dir(settings.data_dir)
    settings.workspace.mkdir(parents=True, exist_ok=True)
    skills_dir = skills_dir_of(settings)
    protected = [settings.data_dir, default_models_path().parent, prompts_dir(), skills_dir]
    if settings.models_config:
        protected.append(settings.models_config)
    return _Static(
        models=ModelRoles.build(roles),
        prompts=load_prompts(roles),
        commands=load_command_policy(),
        skills=SkillRegistry.load(skills_dir),
        protected=tuple(p.resolve() for p in protected),
    )


@asynccontextmanager
async def open_dependencies(
    settings: Settings, *, tools: ToolRegistry | None = None
) -> AsyncIterator[Dependencies]:
    """Load roles and prompts (on a worker thread) and open DuckLM's database.

    Raises:
        ModelsConfigError: The models file is invalid.
        PromptError: A prompt file is missing or invalid.
        McpConfigError: The MCP servers file is invalid.
    """
    static = await asyncio.to_thread(_load_static, settings)
    owner = await asyncio.to_thread(ProcessOwner.current)
    protection = await detect_protection()
    if protection == "none":
        log.warning(NO_SANDBOX)
    base_url = static.models.config("thinker").base_url
    async with (
        contextlib.aclosing(static.models),
        open_database(settings.database_location) as db,
        open_memory(settings, db) as memory,
        _open_tokens(base_url) as tokens,
        open_mcp(settings) as mcp,
    ):
        stores = RunStores.on(db, owner)
        episodes = await open_episodes(settings, db, memory) if settings.episodes else None
        context = DuckContext(
            settings=settings,
            models=static.models,
            prompts=static.prompts,
            tools=tools or default_tools(),
            approvals=ApprovalRules(db),
            commands=static.commands,
            protection=protection,
            intents=CommandIntents(db),
            memory=memory,
            episodes=episodes,
            experience=ExperienceLog(db),
            skills=static.skills,
            tokens=tokens,
            vault=SecretVault(),
            protected=static.protected,
            undo=open_undo(settings, stores),
            mcp=mcp,
        )
        yield Dependencies(context=context, stores=stores)


@asynccontextmanager
async def _open_tokens(base_url: str) -> AsyncIterator[BatchTokenCounter]:
    """The server's tokenizer when it offers one (probed once), else the estimate."""
    server = await server_tokenizer(base_url)
    try:
        yield server or ESTIMATE
    finally:
        if server is not None:
            await server.aclose()
