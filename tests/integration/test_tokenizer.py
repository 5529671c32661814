"""The model server's tokenizer over real HTTP, and the fallback to the estimate."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from ducklm.models.tokens import ESTIMATE, estimate_tokens, prefetched, root_url, server_tokenizer
from ducklm.turn.prompting.budget import (
    Budget,
    ContextParts,
    countable_texts,
    message_text,
    pack_context,
)


class TokenizerServer:
    """llama-server's `POST /tokenize` on loopback: one token per space-separated word."""

    def __init__(self, *, tokenize: bool) -> None:
        self.tokenize = tokenize
        self.failing = False
        self.contents: list[str] = []
        self.paths: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.paths.append(self.path)
                if self.path != "/tokenize" or not server.tokenize:
                    self.send_error(404)
                elif server.failing:
                    self.send_error(500)
                else:
                    server.contents.append(body["content"])
                    tokens = list(range(len(body["content"].split())))
                    self._reply(json.dumps({"tokens": tokens}).encode())

            def _reply(self, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.base_url = f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def __enter__(self) -> TokenizerServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()


@pytest.fixture
def with_tokenize() -> Iterator[TokenizerServer]:
    with TokenizerServer(tokenize=True) as server:
        yield server


@pytest.fixture
def without_tokenize() -> Iterator[TokenizerServer]:
    with TokenizerServer(tokenize=False) as server:
        yield server


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_counts_with_the_server(with_tokenize: TokenizerServer) -> None:
    tokenizer = await server_tokenizer(with_tokenize.base_url)
    assert tokenizer is not None
    try:
        assert with_tokenize.paths == ["/tokenize"], "probed at the root, not under /v1"
        texts = ["a b c", "", "one two", "a b c"]
        assert await tokenizer.count_many(texts) == [3, 0, 2, 3]
        assert await tokenizer.count_many(["one two", "x"]) == [2, 1]
        # Requests run concurrently, so they may arrive in any order.
        assert sorted(with_tokenize.contents[1:]) == ["", "a b c", "one two", "x"], "each once"
    finally:
        await tokenizer.aclose()


async def test_many_texts_in_one_call(with_tokenize: TokenizerServer) -> None:
    tokenizer = await server_tokenizer(with_tokenize.base_url)
    assert tokenizer is not None
    texts = [" ".join(["w"] * n) for n in range(60)]
    try:
        assert await tokenizer.count_many(texts) == list(range(60))
    finally:
        await tokenizer.aclose()


async def test_server_without_tokenize_falls_back_to_the_estimate(
    without_tokenize: TokenizerServer,
) -> None:
    assert await server_tokenizer(without_tokenize.base_url) is None
    assert without_tokenize.paths == ["/tokenize"]
    counter = await server_tokenizer(without_tokenize.base_url) or ESTIMATE
    texts = ["def f(x):\n    return x", "hello world"]
    assert await counter.count_many(texts) == [estimate_tokens(t) for t in texts]


async def test_unreachable_server_falls_back(closed_port: int) -> None:
    assert await server_tokenizer(f"http://127.0.0.1:{closed_port}/v1", timeout_s=1) is None


async def test_server_failing_mid_run_estimates(
    with_tokenize: TokenizerServer, caplog: pytest.LogCaptureFixture
) -> None:
    tokenizer = await server_tokenizer(with_tokenize.base_url)
    assert tokenizer is not None
    with_tokenize.failing = True
    try:
        assert await tokenizer.count_many(["hello world"]) == [estimate_tokens("hello world")]
    finally:
        await tokenizer.aclose()
    assert "estimating instead" in caplog.text


async def test_packing_with_the_server_counts(with_tokenize: TokenizerServer) -> None:
    tokenizer = await server_tokenizer(with_tokenize.base_url)
    assert tokenizer is not None
    calls = [{"name": "file_read", "args": {"path": "log.txt"}, "id": "c1"}]
    parts = ContextParts(
        system="You are Duck.",
        request="why did it fail",
        memories=["the user runs tests with pytest"],
        recent=[HumanMessage("hi " * 300), AIMessage("hello " * 300)],
        turn=[
            AIMessage(content="", tool_calls=calls),
            ToolMessage(content="error " * 2000, tool_call_id="c1", name="file_read"),
        ],
    )
    budget = Budget(
        max_input_tokens=900,
        max_memory_tokens=50,
        max_skill_tokens=50,
        max_recent_events_tokens=300,
    )
    try:
        count = await prefetched(tokenizer, countable_texts(parts))
        packed = pack_context(parts, budget, count)
        real = await tokenizer.count_many([message_text(m) for m in packed.messages])
    finally:
        await tokenizer.aclose()
    assert sum(real) <= packed.tokens <= budget.max_input_tokens
    assert packed.dropped == list(parts.recent[:1]), "the oldest went, the newest stayed"
    assert packed.messages[-1].text.startswith("error error")


@pytest.mark.parametrize(
    ("base_url", "root"),
    [
        ("http://h:8080/v1", "http://h:8080"),
        ("http://h:8080/v1/", "http://h:8080"),
        ("http://h:8080", "http://h:8080"),
        ("http://h/llm/v1", "http://h/llm"),
    ],
)
def test_root_url(base_url: str, root: str) -> None:
    assert root_url(base_url) == root
