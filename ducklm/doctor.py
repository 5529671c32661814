"""`ducklm doctor`: what works on this machine, and what to do about what does not."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass

import httpx

from ducklm.roles import ROLE_NAMES
from ducklm.runtime import DuckLM

PING_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class Check:
    """One check's result."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


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
    urls = sorted({ctx.models.config(role).base_url for role in ROLE_NAMES})
    checks += await asyncio.gather(*(ping_model_server(url) for url in urls))
    checks.append(await asyncio.to_thread(_writable, "data dir", duck.settings.data_dir))
    checks.append(await asyncio.to_thread(_writable, "workspace", duck.settings.workspace))
    return checks


async def ping_model_server(base_url: str) -> Check:
    """Whether the OpenAI-compatible server at `base_url` answers `GET /models`."""
    name = f"model server {base_url}"
    try:
        async with httpx.AsyncClient(timeout=PING_TIMEOUT_S) as client:
            response = await client.get(base_url.rstrip("/") + "/models")
    except httpx.HTTPError:
        return Check(
            name,
            False,
            "not reachable",
            "start llama-server (see README) or set DUCK_LLM_BASE_URL / config/models.yaml",
        )
    if response.status_code != 200:
        return Check(name, False, f"answered {response.status_code} to GET /models")
    return Check(name, True, "reachable")


def _writable(name: str, path: os.PathLike[str]) -> Check:
    if os.access(path, os.W_OK):
        return Check(name, True, f"{path} is writable")
    return Check(name, False, f"{path} is not writable", f"check the permissions of {path}")
