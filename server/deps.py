"""What routes get from the app, as `Annotated` dependencies.

They are coroutines although they await nothing: FastAPI runs a plain `def` dependency
on a worker thread, and that trip cost a request about 0.4 ms each before its route ran.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated

from fastapi import Depends, HTTPException, Request, status
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from ducklm.runtime.facade import DuckLM
from ducklm.server.tasks import TaskHub


async def get_duck(request: Request) -> DuckLM:
    """The open runtime the lifespan created."""
    duck: DuckLM = request.app.state.duck
    return duck


async def get_hub(request: Request) -> TaskHub:
    """The task hub the lifespan created."""
    hub: TaskHub = request.app.state.hub
    return hub


async def single_query_values(request: Request) -> None:
    """Refuse a query parameter given more than once: which value counts would be a guess."""
    counts = Counter(key for key, _ in request.query_params.multi_items())
    repeated = sorted(key for key, count in counts.items() if count > 1)
    if repeated:
        raise _refused(f"query parameter {repeated[0]!r} is given more than once")


async def known_query_values(request: Request) -> None:
    """Refuse repeated query parameters and unknown ones: a typo is an error, as in bodies."""
    await single_query_values(request)
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    unknown = sorted(set(request.query_params) - _query_names(route.dependant))
    if unknown:
        raise _refused(f"unknown query parameter {unknown[0]!r}")


def _query_names(dependant: Dependant) -> set[str]:
    names = {param.alias for param in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


def _refused(problem: str) -> HTTPException:
    return HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"invalid request: {problem}")


Duck = Annotated[DuckLM, Depends(get_duck)]

NO_CONVERSATION = "no conversation with id {id!r}"


async def require_conversation(duck: DuckLM, conversation_id: str) -> None:
    """A 404 naming `conversation_id` unless DuckLM has that conversation."""
    if await duck.conversations.get(conversation_id) is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, NO_CONVERSATION.format(id=conversation_id))


Hub = Annotated[TaskHub, Depends(get_hub)]
