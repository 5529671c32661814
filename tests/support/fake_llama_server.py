"""A stand-in for llama.cpp's `llama-server`, run through `DUCK_LLAMA_SERVER_BIN`.

It takes llama-server's command line (`-m MODEL --host H --port P -c N -t N --alias A`)
and serves `GET /v1/models`. On `POST /v1/chat/completions` it either answers one token
(`--fake-mode healthy`) or kills itself with SIGILL (`--fake-mode crash`), as a llama.cpp
build for another CPU does on its first completion.

`fake_llama_bin` writes the executable that `DUCK_LLAMA_SERVER_BIN` names (a path must
name a program; this file needs the test's Python).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

Mode = Literal["healthy", "crash"]


def fake_llama_bin(folder: Path, mode: Mode) -> Path:
    """An executable in `folder` that runs this fake in `mode`, with the arguments it gets."""
    path = folder / f"fake-llama-server-{mode}"
    path.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).resolve()}" --fake-mode {mode} "$@"\n'
    )
    path.chmod(0o755)
    return path


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        print(f"fake-llama: {format % args}", flush=True)

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._json(200, {"object": "list", "data": [{"id": self.server.alias}]})
        else:
            self._json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._json(404, {"error": {"message": "not found"}})
            return
        if self.server.mode == "crash":
            print("fake-llama: an illegal instruction, now", flush=True)
            os.kill(os.getpid(), signal.SIGILL)
            # The signal may land on another thread a moment later: answer nothing meanwhile
            # (seen under load: a 200 went out before the process died).
            threading.Event().wait()
        message = {"role": "assistant", "content": "OK"}
        choice = {"index": 0, "message": message, "finish_reason": "length"}
        usage = {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
        head = {"id": "fake", "object": "chat.completion", "created": 0}
        self._json(200, {**head, "model": self.server.alias, "choices": [choice], "usage": usage})

    def _json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    mode: Mode = "healthy"
    alias = "local"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fake-mode", choices=["healthy", "crash"], required=True)
    parser.add_argument("-m", "--model", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--alias", default="local")
    args, _ = parser.parse_known_args()  # -c, -t: llama-server's, of no use here
    # The crash is the point: no core file for it.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    server = _Server((args.host, args.port), _Handler)
    server.mode, server.alias = args.fake_mode, args.alias
    print(f"fake-llama: {args.fake_mode}, {args.model} on {args.host}:{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
