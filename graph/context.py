"""The per-run context every node receives as `runtime.context`.

Dependencies (model clients per role, prompts, tools, stores, settings) reach nodes only
through here, never through module globals, so a test, the CLI, the server and
LangGraph Studio can each hand the graph their own (`ducklm.graph.dependencies` opens
them). It sits on the graph's floor, not the run kit's: it names the types of every part
it bundles. Lower floors read it as a type only (under `TYPE_CHECKING`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ducklm.config.settings import Settings
from ducklm.kit.notices import OnceNotices
from ducklm.kit.secrets import SecretVault
from ducklm.learning.skills import SkillRegistry
from ducklm.mcp.servers import McpServers
from ducklm.memory import MemoryStore
from ducklm.memory.warmup import Warmup
from ducklm.models.capabilities import ServerCapabilities
from ducklm.models.clients import ModelRoles
from ducklm.models.context_size import ContextSizes
from ducklm.models.prompts import Prompts
from ducklm.models.tokens import BatchTokenCounter
from ducklm.stores import ApprovalRules, CommandIntents
from ducklm.stores.experience import ExperienceLog
from ducklm.tools.commands.policy import CommandPolicy
from ducklm.tools.registry import ToolRegistry
from ducklm.tools.sandbox.runner import Protection
from ducklm.turn.choosing.selector import ToolSelector
from ducklm.undo.service import WorkspaceUndo


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
    embeddings: Warmup = field(default_factory=Warmup)
    """Whether the embedding model has loaded (`ducklm.memory.warmup`): while it loads,
    a turn goes on without recall rather than wait."""
    experience: ExperienceLog
    """The critic's reflections."""
    skills: SkillRegistry
    """Skills loaded from the skills folder (`ducklm.learning.skills.skills_dir_of`)."""
    tokens: BatchTokenCounter
    """Counts tokens: the model server's tokenizer when it has one, else an estimate."""
    context_sizes: ContextSizes = field(default_factory=ContextSizes)
    """The context window each model server serves, probed once (`ducklm.models.context_size`)."""
    capabilities: ServerCapabilities = field(default_factory=ServerCapabilities)
    """What each model server accepts, found at first use (`ducklm.models.capabilities`)."""
    vault: SecretVault
    """Passwords given out of band, by one-time token (memory only)."""
    protected: tuple[Path, ...] = ()
    """DuckLM's own config and data: writes there always ask, even inside the workspace."""
    hidden: tuple[Path, ...] = ()
    """DuckLM's data dir and the config files that may hold keys (models, MCP): absent
    from every sandboxed command's view (`tools/sandbox/view.py`)."""
    undo: WorkspaceUndo | None = None
    """Workspace checkpoints and undo (`ducklm.undo`); `None` when turned off."""
    mcp: McpServers = field(default_factory=McpServers.empty)
    """The MCP servers of the config file, started by the first turn that needs them."""
    selector: ToolSelector = field(default_factory=ToolSelector)
    """Chooses a turn's tool by meaning; its classifier is trained on first use."""
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
        self,
        *,
        critic: bool = True,
        memory: bool = True,
        review_behind: bool = False,
        model: str | None = None,
    ) -> DuckContext:
        """A copy of the context with the per-run switches set.

        `model`: the conversation's chosen model for the answering roles (thinker and
        action, `ModelRoles.switched`); `None` keeps the configured ones.
        """
        return dataclasses.replace(
            self,
            models=self.models.switched(model),
            critic_enabled=critic,
            memory_enabled=memory,
            review_behind=review_behind,
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
