"""DuckLM on its own local model server: which models file, and `ducklm serve`'s auto-start.

Servers differ: llama-server takes `response_format` json_schema, llama-cpp-python's
server refuses it and takes `{"type": "json_object", "schema": ...}`; and the bundled
SmolLM2 makes no native tool calls. So when the roles talk to the llama-cpp-python server
that DuckLM started (its pid file says so), they load
`config/models.llama-cpp-python.yaml` instead of `config/models.yaml`. An operator's own
`DUCK_MODELS_CONFIG` always wins.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path

from ducklm.config.settings import Settings
from ducklm.models.local import server as llama
from ducklm.models.local.crash import DEATH_WAIT_S
from ducklm.models.local.keeper import RestartPolicy, keep_running
from ducklm.models.local.state import LOCAL_SERVERS
from ducklm.models.roles import load_roles

LOCAL_MODELS_FILE = "models.llama-cpp-python.yaml"


def local_models_path() -> Path:
    """The packaged models file for llama-cpp-python's server."""
    return Path(str(resources.files("ducklm.config").joinpath(LOCAL_MODELS_FILE)))


def models_config_for(settings: Settings) -> Path | None:
    """The models file to load (None: the packaged default). Blocking (files, /proc)."""
    if settings.models_config is not None:
        return settings.models_config
    record = llama.read_record(settings.files.llama_pid)
    if record is None or record.kind != "llama-cpp-python" or not llama.is_alive(record):
        return None
    return local_models_path() if _thinker_url(settings) == record.url else None


def _thinker_url(settings: Settings) -> str:
    roles = load_roles(settings.models_config, base_url=settings.llm_base_url)
    return roles["thinker"].base_url.rstrip("/")


@asynccontextmanager
async def local_server_for(
    settings: Settings, progress: llama.Progress, policy: RestartPolicy | None = None
) -> AsyncIterator[Settings]:
    """Make sure a model server answers for `ducklm serve`, and yield the settings to serve.

    When nothing answers at the thinker role's URL and a local server can run, start it
    (pointing the roles at it when its URL differs), restart it if it crashes (`policy`,
    see `ducklm.models.local.keeper`; model calls wait for the restart, see
    `ducklm.models.local.state`), and stop it when the block ends. With neither, serve
    anyway: `/health` and `ducklm doctor` say what is missing.
    """
    url = await asyncio.to_thread(_thinker_url, settings)
    if await llama.answers(url):
        yield settings
        return
    try:
        record, started = await llama.start(settings, progress)
    except (llama.LocalServerUnavailable, llama.LocalServerFailed) as exc:
        progress(f"no model server answers at {url}; serving anyway. {exc}")
        yield settings
        return
    if record.url != url:
        progress(f"roles without a server of their own now use {record.url}")
        settings = settings.model_copy(update={"llm_base_url": record.url})
    if not started:  # someone else's (`ducklm llama start`): theirs to restart and stop
        yield settings
        return
    policy = policy or RestartPolicy()
    # The keeper sees a death within a poll; the dying process may take a moment more.
    notice_s = 2 * policy.poll_s + DEATH_WAIT_S
    wait_s = settings.model_restart_wait_s
    with LOCAL_SERVERS.kept(record.url, restart_wait_s=wait_s, notice_s=notice_s) as watch:
        keeper = asyncio.create_task(keep_running(settings, record, progress, policy, watch))
        try:
            yield settings
        finally:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper
            await llama.stop(settings, progress)
