"""Opening what a `DuckContext` holds: roles, prompts, tools, stores, memory, MCP.

The run service (`ducklm.runtime.facade`) and the Studio entry (`ducklm.graph.studio`)
both open a process's dependencies here, so they are opened one way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from ducklm.config.settings import Settings
from ducklm.graph.context import DuckContext
from ducklm.kit.secrets import SecretVault
from ducklm.learning.skills import SkillRegistry, skills_dir_of
from ducklm.mcp.servers import open_mcp
from ducklm.memory import open_episodes, open_memory
from ducklm.models.capabilities import ServerCapabilities
from ducklm.models.clients import ModelRoles
from ducklm.models.context_size import ContextSizes
from ducklm.models.local.autostart import models_config_for
from ducklm.models.prompts import Prompts, load_prompts, prompts_dir
from ducklm.models.roles import default_models_path, load_roles
from ducklm.models.server_props import ServerProps
from ducklm.models.tokens import ESTIMATE, BatchTokenCounter, server_tokenizer
from ducklm.stores import ApprovalRules, CommandIntents, RunStores, open_database
from ducklm.stores.experience import ExperienceLog
from ducklm.stores.owner import ProcessOwner
from ducklm.stores.private import secure_data_dir
from ducklm.tools.commands.policy import CommandPolicy, load_command_policy
from ducklm.tools.registry import ToolRegistry, default_tools
from ducklm.tools.sandbox.runner import detect_protection
from ducklm.undo.service import open_undo

log = logging.getLogger(__name__)

NO_SANDBOX = (
    "no sandbox: neither bubblewrap nor Landlock works on this machine, so every shell "
    "command that writes or uses the network will ask first (`ducklm doctor` explains)"
)


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
    hidden: tuple[Path, ...]


def _load_static(settings: Settings) -> _Static:
    roles = load_roles(
        models_config_for(settings), base_url=settings.llm_base_url, api_key=settings.llm_api_key
    )
    secure_data_dir(settings.data_dir)
    settings.workspace.mkdir(parents=True, exist_ok=True)
    skills_dir = skills_dir_of(settings)
    protected = [settings.data_dir, default_models_path().parent, prompts_dir(), skills_dir]
    hidden = [settings.data_dir, settings.mcp_config_path]
    if settings.models_config:
        protected.append(settings.models_config)
        hidden.append(settings.models_config)
    return _Static(
        models=ModelRoles.build(roles),
        prompts=load_prompts(roles),
        commands=load_command_policy(),
        skills=SkillRegistry.load(skills_dir),
        protected=tuple(p.resolve() for p in protected),
        hidden=tuple(p.resolve() for p in hidden),
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
        stores = RunStores.on(db, owner, heartbeat_s=settings.lease_heartbeat_s)
        episodes = await open_episodes(settings, db, memory) if settings.episodes else None
        props = ServerProps()  # one `/props` request per server, for both its readers
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
            hidden=static.hidden,
            undo=open_undo(settings, stores),
            mcp=mcp,
            context_sizes=ContextSizes(props),
            capabilities=ServerCapabilities(props),
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
