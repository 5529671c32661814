"""One real embedding service per test process, for the `ducklm` processes the tests start.

Every `ducklm` subprocess used to load torch and all-MiniLM-L6-v2 for itself (10-20 s
each, about 120 of them in the suite). This serves the real model from the test process
instead, over an OpenAI-style `POST /v1/embeddings`, and `tests.support.cli.cli_env`
hands its URL to each subprocess as `DUCK_EMBEDDINGS_URL`, so a subprocess never imports
torch. The vectors are the model's own, encoded by DuckLM's `LocalEmbedder` (the model
thread the in-process tests use too, so the model loads once per process and encodes
never race). A few tests still prove the in-process load itself: they ask `cli_env` for
`local_embeddings=True`.

The server is standard library on daemon threads, never on a test's event loop.
"""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ducklm.config.settings import Settings
from ducklm.memory.embeddings import LocalEmbedder

MODEL = Settings.model_fields["embeddings_model"].default
"""The model DuckLM embeds with by default: the same one the subprocesses would load."""


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test output is for the tests."""

    def do_POST(self) -> None:
        if self.path.rstrip("/") not in {"/v1/embeddings", "/embeddings"}:
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            texts = body["input"]
            texts = [texts] if isinstance(texts, str) else list(texts)
            if not all(isinstance(text, str) for text in texts):
                raise TypeError("input must be text(s)")
        except (ValueError, KeyError, TypeError) as exc:
            self._send(400, {"error": {"message": f"bad request: {exc}"}})
            return
        rows = asyncio.run(self.server.embedder.embed(texts)) if texts else []
        data = [
            {"object": "embedding", "index": i, "embedding": [float(x) for x in row]}
            for i, row in enumerate(rows)
        ]
        self._send(200, {"object": "list", "data": data, "model": MODEL})

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.embedder = LocalEmbedder(MODEL)


_lock = threading.Lock()
_server: _Server | None = None
_warming = False


def start() -> None:
    """Start the service once for this process (idempotent); call it outside any event
    loop (a session fixture of tests/conftest.py does). The model is not loaded yet."""
    global _server  # noqa: PLW0603  one service per process
    with _lock:
        if _server is None:
            _server = _Server()
            threading.Thread(target=_server.serve_forever, daemon=True).start()


def url() -> str:
    """The service's base URL; the first call starts loading the model in the background,
    so that it is ready by the time the first subprocess asks (a run of unit tests alone
    never loads it)."""
    global _warming  # noqa: PLW0603  the model loads once per process
    if _server is None:
        raise RuntimeError("the embedding service was not started (tests/conftest.py starts it)")
    with _lock:
        if not _warming:
            _warming = True
            threading.Thread(target=_warm, args=(_server.embedder,), daemon=True).start()
    host, port = _server.server_address[:2]
    return f"http://{host}:{port}/v1"


def _warm(embedder: LocalEmbedder) -> None:
    asyncio.run(embedder.embed(["warm up"]))
