"""The floor for the first-token benchmark: LangGraph plus a FastAPI/sse-starlette relay.

One node streams a `ChatOpenAI` reply through LangGraph's custom stream, relayed as SSE
by FastAPI and sse-starlette: no checkpointer, no database, no auth, no context or
memory. It is what the issue's "LangGraph plus a FastAPI/sse-starlette relay" costs on
this machine, measured in the same run as DuckLM (server_latency.py starts it).

    .venv/bin/python scripts/bench/minimal_relay.py   # LLM=<base url>, prints its URL
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any, TypedDict

import uvicorn
from fastapi import FastAPI
from langchain_core.messages import AnyMessage, HumanMessage
from langchain_openai import ChatOpenAI
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, SecretStr
from sse_starlette import EventSourceResponse


class Turn(TypedDict):
    messages: list[AnyMessage]


class Ask(BaseModel):
    message: str


def build_app(base_url: str) -> FastAPI:
    """The relay's app on the model server at `base_url`."""
    model = ChatOpenAI(base_url=base_url, api_key=SecretStr("bench"), model="scripted")

    async def answer(state: Turn) -> dict[str, Any]:
        write = get_stream_writer()
        async for chunk in model.astream(state["messages"]):
            if chunk.text:
                write({"type": "token", "text": chunk.text})
        return {}

    builder = StateGraph(Turn)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    graph = builder.compile()
    app = FastAPI()

    @app.post("/v1/chat/stream")
    async def chat(body: Ask) -> EventSourceResponse:
        async def events() -> AsyncIterator[dict[str, str]]:
            turn: Turn = {"messages": [HumanMessage(body.message)]}
            async for item in graph.astream(turn, stream_mode="custom"):
                yield {"event": item["type"], "data": json.dumps(item)}

        return EventSourceResponse(events())

    return app


def main() -> None:
    app = build_app(os.environ["LLM"])
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
