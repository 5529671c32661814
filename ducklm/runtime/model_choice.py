"""Which models a conversation may answer with, and the model server's state in a few words.

The answering roles (thinker, action) ask the server configured for the thinker; the
models it offers are what its OpenAI-compatible `GET /models` lists. A conversation's
choice is checked against that list once, when it is made (`DuckLM.choose_model`), and
stored (`ducklm.stores.conversation_models`); each later turn runs with it.

The state joins the plain check (`ducklm.models.ping`) with what DuckLM knows of a local
server it keeps (`ducklm.models.local.state`): `up`, `loading` (llama-server answers 503
while it loads its model), `restarting` (it crashed and DuckLM starts it again) or `down`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ducklm.models.local.state import LOCAL_SERVERS
from ducklm.models.ping import list_models
from ducklm.models.roles import ROLE_NAMES

ServerStatus = Literal["up", "loading", "restarting", "down"]
LOADING_STATUS = 503
"""What llama-server answers `GET /models` with while it loads its model."""


class UnknownModelError(ValueError):
    """A model the server does not offer; the message lists the ones it does."""


class ModelsUnavailableError(RuntimeError):
    """The server's models cannot be read now (it is down, loading or restarting)."""


@dataclass(frozen=True)
class ModelServer:
    """The answering roles' model server as the person sees it."""

    base_url: str
    status: ServerStatus
    detail: str
    """What the check found, in words (`not reachable`, `restarting: it crashed ...`)."""
    fix: str
    """What to do about it; empty when up or when DuckLM is restarting it."""
    local: bool
    """A server DuckLM started and keeps (`ducklm serve` with the bundled model)."""
    models: list[str]
    """The model ids it offers (empty when it could not be asked).

    Not the ids named after DuckLM's roles (`memory_policy`, `sys_util`): a gateway that
    routes each role lists its routes as models, and a conversation's answers are the
    thinker's, never the memory policy's. The configured model stays, whatever its name.
    """
    default: str
    """The model configured for the answering roles (`models.yaml`)."""


async def model_server(base_url: str, default: str) -> ModelServer:
    """Ask the server at `base_url` for its models, and say what state it is in."""
    check, models = await list_models(base_url)
    watch = LOCAL_SERVERS.find(base_url)
    status: ServerStatus = "up" if check.ok else "down"
    detail, fix = check.detail, check.fix
    if not check.ok and f" {LOADING_STATUS} " in f" {check.detail} ":
        status, detail, fix = "loading", "loading its model", ""
    if watch is not None and watch.state.status != "up" and not check.ok:
        status, detail = watch.state.status, watch.state.describe()
        fix = watch.state.ending.advice() if status == "down" and watch.state.ending else ""
    offered = [name for name in models or [] if name == default or name not in ROLE_NAMES]
    return ModelServer(base_url, status, detail, fix, watch is not None, offered, default)


def check_model(name: str, server: ModelServer) -> str:
    """`name`, stripped, if the server offers it.

    Raises:
        ModelsUnavailableError: The server did not list its models.
        UnknownModelError: It did, and `name` is not one of them.
    """
    name = name.strip()
    if not server.models:
        raise ModelsUnavailableError(
            f"cannot check the model {name!r}: the model server {server.base_url} is "
            f"{server.status} ({server.detail}); try again once it is up"
        )
    if name not in server.models:
        offered = ", ".join(server.models)
        raise UnknownModelError(
            f"unknown model {name!r}: the model server {server.base_url} offers {offered}"
        )
    return name
