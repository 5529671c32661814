"""The floor for the first-token benchmark: LangGraph plus a FastAPI/sse-starlette relay.

One node streams a `ChatOpenAI` reply through LangGraph's custom stream, relayed as SSE
by FastAPI and sse-starlette: no checkpointer, no database, no auth, no context or
memory. It is what the issue's "LangGraph plus a FastAPI/sse-starlette relay" costs on
this machine, measured in the same run as DuckLM (server_latency.py starts it).

With `--persist-and-embed` it also does the two things every DuckLM turn needs before
its model call, as plainly as LangGraph allows: the thread is checkpointed at every
step (LangGraph's `AsyncSqliteSaver`, WAL, `synchronous=NORMAL`, as DuckLM opens it), and
a first node embeds the request at the same server's `/v1/embeddings` (httpx), whose
vector the answer node waits for. The gap between the two relays is what those cost
alone; what DuckLM adds beyond the second is its own (auth, run records, routing,
skills, prompts, tools).

    .venv/bin/python scripts/bench/minimal_relay.py [--persist-and-embed]
    # LLM=<base url>, prints its URL
"""

from __future__ import annotations

import json
import os
import socket
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, TypedDict

import aiosqlite
import httpx
import uvicorn
from fastapi import FastAPI
from langchain_core.messages import AnyMessage, HumanMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, SecretStr
from sse_starlette import EventSourceResponse


class Turn(TypedDict, total=False):
    messages: list[AnyMessage]
    dimensions: int


class Ask(BaseModel):
    message: str


def build_app(base_url: str, *, persist_and_embed: bool = False) -> FastAPI:
    """The relay's app on the model server at `base_url`."""
    model = ChatOpenAI(base_url=base_url, api_key=SecretStr("bench"), model="scripted")
    resources: dict[str, Any] = {}

    async def embed(state: Turn) -> dict[str, Any]:
        text = str(state["messages"][-1].content)
        body = {"model": "scripted", "input": [text]}
        response = await resources["http"].post(f"{base_url}/embeddings", json=body)
        return {"dimensions": len(response.raise_for_status().json()["data"][0]["embedding"])}

    async def answer(state: Turn) -> dict[str, Any]:
        write = get_stream_writer()
        async for chunk in model.astream(state["messages"]):
            if chunk.text:
                write({"type": "token", "text": chunk.text})
        return {}

    builder = StateGraph(Turn)
    builder.add_node("answer", answer)
    if persist_and_embed:
        builder.add_node("embed", embed)
        builder.add_edge(START, "embed")
        builder.add_edge("embed", "answer")
    else:
        builder.add_edge(START, "answer")
    builder.add_edge("answer", END)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            checkpointer = None
            if persist_and_embed:
                resources["http"] = await stack.enter_async_context(httpx.AsyncClient())
                conn = await stack.enter_async_context(aiosqlite.connect(Path("relay.db")))
                await conn.execute("PRAGMA journal_mode=WAL")
                await conn.execute("PRAGMA synchronous=NORMAL")
                checkpointer = AsyncSqliteSaver(conn)
                await checkpointer.setup()
            resources["graph"] = builder.compile(checkpointer=checkpointer)
            yield

    app = FastAPI(lifespan=lifespan)

    @app.post("/v1/chat/stream")
    async def chat(body: Ask) -> EventSourceResponse:
        async def events() -> AsyncIterator[dict[str, str]]:
            turn: Turn = {"messages": [HumanMessage(body.message)]}
            config = {"configurable": {"thread_id": str(uuid.uuid4())}}
            async for item in resources["graph"].astream(turn, config, stream_mode="custom"):
                yield {"event": item["type"], "data": json.dumps(item)}

        return EventSourceResponse(events())

    return app


def main() -> None:
    app = build_app(os.environ["LLM"], persist_and_embed="--persist-and-embed" in sys.argv)
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets that say so, and with
    # Nagle on, each token after the headers waited ~40 ms for the client's delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    print(f"relay at http://127.0.0.1:{sock.getsockname()[1]}", file=sys.stderr, flush=True)
    # asyncio's loop, as `ducklm serve` runs on (uvicorn would pick uvloop if installed).
    config = uvicorn.Config(app, log_level="warning", loop="asyncio")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
