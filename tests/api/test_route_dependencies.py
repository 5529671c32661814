"""No request waits for a worker thread before its route runs.

FastAPI runs a plain `def` dependency (or endpoint) on a worker thread: a trip there and
back for every request, about 0.4 ms each on this machine, paid before the route starts.
Every dependency of every route is a coroutine, so none is.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator

from fastapi.dependencies.models import Dependant
from fastapi.routing import iter_route_contexts

from ducklm.config.settings import Settings
from ducklm.server import create_app


def _calls(dependant: Dependant) -> Iterator[object]:
    if dependant.call is not None:
        yield dependant.call
    for sub in dependant.dependencies:
        yield from _calls(sub)


def _runs_on_the_loop(call: object) -> bool:
    if inspect.iscoroutinefunction(call) or inspect.isasyncgenfunction(call):
        return True
    # A dependency object (HTTPBearer): its `__call__` decides.
    return not inspect.isfunction(call) and inspect.iscoroutinefunction(type(call).__call__)


async def test_no_route_runs_a_dependency_on_a_worker_thread(settings: Settings) -> None:
    app = await asyncio.to_thread(create_app, settings)
    # FastAPI keeps included routers as such; this walks them, with their dependencies.
    routes = [r for r in iter_route_contexts(app.routes) if getattr(r, "dependant", None)]
    assert len(routes) > 40  # the whole API, the Agent Protocol door included
    threaded = sorted(
        {
            f"{route.path}: {getattr(call, '__qualname__', type(call).__name__)}"
            for route in routes
            for call in _calls(route.dependant)
            if not _runs_on_the_loop(call)
        }
    )
    assert threaded == []
