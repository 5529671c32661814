"""Whether an OpenAI-compatible model server answers, and what to do when it does not.

The doctor (`ducklm doctor`) and the web chat's `GET /v1/models/ping` ask the same
question, so the answer and its wording live here, below both.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

PING_TIMEOUT_S = 3.0
UNREACHABLE_FIX = (
    "run `ducklm llama start` (after pip install '.[local]'), start your own "
    "llama-server, or set DUCK_LLM_BASE_URL / DUCK_MODELS_CONFIG"
)
SILENT_FIX = (
    "it may be busy (llama-server answers one request at a time, and a long reply holds "
    "it) or hung: try again when it is idle, or see its log"
)


@dataclass(frozen=True)
class Check:
    """One check's result."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


async def ping_model_server(base_url: str) -> Check:
    """Whether the OpenAI-compatible server at `base_url` answers `GET /models`."""
    check, _ = await list_models(base_url)
    return check


async def list_models(base_url: str) -> tuple[Check, list[str] | None]:
    """The server's answer to `GET /models`, and the model ids it lists (if any)."""
    name = f"model server {base_url}"
    try:
        async with httpx.AsyncClient(timeout=PING_TIMEOUT_S) as client:
            response = await client.get(base_url.rstrip("/") + "/models")
    except (httpx.ReadTimeout, httpx.WriteTimeout):
        # Something took the connection and said nothing: a server, not an empty port.
        detail = f"did not answer GET /models within {PING_TIMEOUT_S:g} s"
        return Check(name, False, detail, SILENT_FIX), None
    except httpx.HTTPError:
        return Check(name, False, "not reachable", UNREACHABLE_FIX), None
    if response.status_code != 200:
        return Check(name, False, f"answered {response.status_code} to GET /models"), None
    return Check(name, True, "reachable"), _model_ids(response)


def _model_ids(response: httpx.Response) -> list[str] | None:
    try:
        ids = [str(item["id"]) for item in response.json()["data"]]
    except (ValueError, KeyError, TypeError):
        return None
    return ids or None
