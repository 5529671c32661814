"""A stand-in for llama.cpp's `llama-server`, run through `DUCK_LLAMA_SERVER_BIN`.

It takes llama-server's command line (`-m MODEL --host H --port P -c N -t N --alias A`)
and serves `GET /v1/models`. On `POST /v1/chat/completions` it either answers (one token,
or `ANSWER` streamed when asked to stream: `--fake-mode healthy`) or kills itself with
SIGILL (`--fake-mode crash`), as a llama.cpp build for another CPU does on its first
completion. `refuse_starts` makes it exit at once instead, as a server that cannot come
back does; `hold_starts` makes it wait before it listens, as a model that loads does.

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
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

Mode = Literal["healthy", "crash"]
ANSWER = "The fake model answers."
"""What a streamed completion says (a one-token `OK` otherwise, as `-n 1` would)."""
NO_START = ".no-start"
"""Beside the model file, it makes every later start of the fake fail (`refuse_starts`)."""
HOLD = ".hold-start"
"""Beside the model file, it holds a starting fake before it listens (`hold_starts`)."""


def fake_llama_bin(folder: Path, mode: Mode) -> Path:
    """An executable in `folder` that runs this fake in `mode`, with the arguments it gets."""
    path = folder / f"fake-llama-server-{mode}"
    path.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).resolve()}" --fake-mode {mode} "$@"\n'
    )
    path.chmod(0o755)
    return path


def refuse_starts(model: Path) -> None:
    """Make every later start of a fake serving `model` exit with code 1 at once."""
    model.with_name(model.name + NO_START).touch()


def hold_starts(model: Path) -> None:
    """Make a fake serving `model` that starts from now on wait before it listens."""
    model.with_name(model.name + HOLD).touch()


def release_starts(model: Path) -> None:
    """Let held and later fakes serving `model` listen."""
    model.with_name(model.name + HOLD).unlink()


def server_pid(supervisor_pid: int) -> int:
    """The pid of the server that DuckLM's supervisor `supervisor_pid` runs (its child)."""
    children = Path(f"/proc/{supervisor_pid}/task/{supervisor_pid}/children").read_text()
    (pid,) = children.split()
    return int(pid)


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
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._json(404, {"error": {"message": "not found"}})
            return
        if self.server.mode == "crash":
            print("fake-llama: an illegal instruction, now", flush=True)
            os.kill(os.getpid(), signal.SIGILL)
            # The signal may land on another thread a moment later: answer nothing meanwhile
            # (seen under load: a 200 went out before the process died).
            threading.Event().wait()
        if body.get("stream"):
            self._stream()
            return
        message = {"role": "assistant", "content": "OK"}
        choice = {"index": 0, "message": message, "finish_reason": "length"}
        usage = {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
        head = {"id": "fake", "object": "chat.completion", "created": 0}
        self._json(200, {**head, "model": self.server.alias, "choices": [choice], "usage": usage})

    def _stream(self) -> None:
        """`ANSWER` as server-sent events, then the connection closes (HTTP/1.0)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        head = {"id": "fake", "object": "chat.completion.chunk", "created": 0,
                "model": self.server.alias}  # fmt: skip
        deltas = (({"role": "assistant", "content": ANSWER}, None), ({}, "stop"))
        for delta, finish in deltas:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            self.wfile.write(f"data: {json.dumps({**head, 'choices': [choice]})}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

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
    while Path(args.model + HOLD).exists():
        time.sleep(0.05)
    if Path(args.model + NO_START).exists():
        print("fake-llama: told not to start", flush=True)
        sys.exit(1)
    # The crash is the point: no core file for it.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    server = _Server((args.host, args.port), _Handler)
    server.mode, server.alias = args.fake_mode, args.alias
    print(f"fake-llama: {args.fake_mode}, {args.model} on {args.host}:{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
