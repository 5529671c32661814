"""The graph for `langgraph.json`: LangGraph Studio and `langgraph dev`.

The LangGraph server brings its own checkpointer, so nothing here compiles one in. It
also sends runs without DuckLM's context, so `make_graph` opens the dependencies (roles,
prompts, DuckLM's database) for each run it serves and closes them after. `graph` is the
plain compiled graph for callers that pass `context=` themselves and for drawing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ducklm.config.settings import load_settings
from ducklm.graph.builder import DuckGraph, build_graph
from ducklm.graph.dependencies import open_dependencies

builder = build_graph()
graph = builder.compile(name="ducklm")


@asynccontextmanager
async def make_graph() -> AsyncIterator[DuckGraph]:
    """Graph factory for the LangGraph server: the graph bound to this process's settings."""
    settings = await asyncio.to_thread(load_settings)
    async with open_dependencies(settings) as deps:
        yield build_graph(
            default_context=deps.context,
            retry_attempts=settings.model_retry_attempts,
            retry_initial_interval=settings.model_retry_initial_interval,
        ).compile(name="ducklm")
