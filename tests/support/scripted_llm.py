"""A scripted, OpenAI-compatible chat-completions server for tests.

`ScriptedLLM` listens on loopback and answers `POST /v1/chat/completions` with
replies the test scripted in advance, so `langchain_openai.ChatOpenAI` (and the
`openai` client under it) is exercised over real HTTP, streaming included,
instead of through a mock of the client library. `POST /v1/embeddings` answers too,
with a fixed vector per text (`EMBEDDING_DIMS` numbers drawn from a hash of the text),
for clients that need an embeddings endpoint with no model behind it.

The server is pure standard library and runs on its own daemon thread, never on
the test's event loop: the test suite runs blockbuster, which would flag any
blocking socket or sleep call made on the loop.

Example:
    ```python
    with ScriptedLLM() as llm:
        llm.script(reply("Hello there"), reply(tool_calls=[call("search", q="ducks")]))
        model = ChatOpenAI(base_url=llm.base_url, api_key="test", model="scripted",
                           max_retries=0)
        msg = await model.ainvoke("hi")
        assert llm.requests[-1]["messages"][0]["content"] == "hi"
    ```

Note that the `openai` client retries 408/409/429/5xx twice by default, and
every retry consumes a scripted reply: pass `max_retries=0` unless the test is
about retries.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import itertools
import json
import random
import re
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, Self

__all__ = ["Reply", "ScriptedLLM", "ToolCallSpec", "Wire", "call", "reply"]

JSONDict = dict[str, Any]
Responder = Callable[[JSONDict], "Reply"]

# Tool-call arguments are streamed in slices of this size so clients must
# reassemble them, as they must with real OpenAI streams.
_ARG_SLICE = 16
# How often the serving thread checks for close(); bounds close() latency.
_POLL_INTERVAL_S = 0.05
# Split after whitespace so every piece keeps its trailing spaces and the
# pieces concatenate back to the exact original text.
_PIECE_BOUNDARY = re.compile(r"(?<=\s)(?=\S)")


@dataclass
class ToolCallSpec:
    """One native OpenAI tool call the scripted assistant makes.

    Attributes:
        name: Function (tool) name.
        args: Arguments, sent JSON-encoded as `function.arguments`.
        id: Tool-call id; when None the server generates `call_<n>`, with `n`
            counting up across the server's lifetime.
    """

    name: str
    args: dict[str, Any]
    id: str | None = None


ReasoningStyle = Literal["reasoning_content", "reasoning", "think_tags", "think_opened"]
UsageStyle = Literal["whole", "cache_misses", "content_only", "zero", "none", "every_chunk"]


@dataclass
class Wire:
    """How the server writes what the chat-completions format leaves open: its dialect.

    The default is what this server always sent (llama-server's deepseek reasoning
    format, whole usage in a last chunk without choices). Each other value copies what a
    real server is documented to send, so a test can play that server.

    Attributes:
        reasoning: Where a reply's `reasoning` goes: the `reasoning_content` field
            (llama-server, vLLM's parsers), the `reasoning` field (Ollama, OpenRouter,
            gpt-oss), inline `<think>...</think>` before the content (a reasoning model
            with no parser: vLLM without `--reasoning-parser`, llama-server with
            `--reasoning-format none`), or only the closing tag (`think_opened`: a chat
            template that opens `<think>` in the prompt, as DeepSeek-R1's distills and
            QwQ do). Streamed tags are split over chunks (`<thi`, `nk>`).
        usage: What `usage.prompt_tokens` counts: the whole prompt; only what the
            prompt cache missed (the messages this request shares, from the start, with
            the previous one are cached: Ollama before its 2026 fix); the messages'
            text without the tools' schemas; 0; no `usage` at all; or the whole, with
            usage so far repeated in every chunk (vLLM's `continuous_usage_stats`).
        cached_tokens: Send `prompt_tokens_details.cached_tokens` (llama-server, vLLM,
            OpenAI): what the cache held.
        timings: Send llama-server's `timings` (`prompt_n`: what the cache missed,
            `cache_n`: what it held) with the last chunk, and in a completion.
        tool_call_ids: Send ids with tool calls (some servers send none).
        tool_call_index: Send `index` with streamed tool calls; without it each call is
            sent whole in one chunk, as servers that leave the index out do.
    """

    reasoning: ReasoningStyle = "reasoning_content"
    usage: UsageStyle = "whole"
    cached_tokens: bool = False
    timings: bool = False
    tool_call_ids: bool = True
    tool_call_index: bool = True


@dataclass
class Reply:
    """One scripted answer to a chat-completions request.

    Attributes:
        content: Assistant text.
        tool_calls: Native OpenAI tool calls, after any content.
        reasoning: Sent before the content as the server's `Wire.reasoning` says
            (`reasoning_content` in the message or in stream deltas by default);
            omitted when empty.
        status: HTTP status; anything but 200 sends an OpenAI-style error body
            `{"error": {"message": ..., "type": ...}}` whose message is
            `content` (or a generic text when `content` is empty).
        delay_s: Seconds to sleep on the server thread before answering, e.g. to
            exercise client timeouts or cancellation.
        chunk_delay_s: Seconds to sleep between streamed chunks, so tests can
            observe tokens arriving before the stream ends.
        raw_body: When set, sent verbatim with `status` instead of a generated
            body (for malformed-reply tests); the content type is
            `text/event-stream` for a streaming request with status 200 and
            `application/json` otherwise.
        finish_reason: Sent as the choice's `finish_reason` instead of `stop` (or
            `tool_calls`), e.g. `length` for a reply cut at `max_tokens`.
        truncated: Say, as older llama-server builds did, that the prompt was cut to
            fit (`truncated: true`); the prompt counts are then `count_prompt`'s.
    """

    content: str = ""
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    reasoning: str = ""
    status: int = 200
    delay_s: float = 0.0
    chunk_delay_s: float = 0.0
    raw_body: str | None = None
    finish_reason: str | None = None
    truncated: bool = False


def reply(
    content: str = "",
    *,
    tool_calls: Iterable[ToolCallSpec] = (),
    reasoning: str = "",
    status: int = 200,
    delay_s: float = 0.0,
    chunk_delay_s: float = 0.0,
    raw_body: str | None = None,
    finish_reason: str | None = None,
    truncated: bool = False,
) -> Reply:
    """Build a `Reply`; see its attributes for the meaning of each argument.

    Returns:
        The reply.
    """
    return Reply(
        content=content,
        tool_calls=list(tool_calls),
        reasoning=reasoning,
        status=status,
        delay_s=delay_s,
        chunk_delay_s=chunk_delay_s,
        raw_body=raw_body,
        finish_reason=finish_reason,
        truncated=truncated,
    )


def call(name: str, /, **args: Any) -> ToolCallSpec:
    """Build a `ToolCallSpec` with a generated id.

    `name` is positional-only so a tool may itself take an argument called
    `name`: `call("greet", name="Ada")`.

    Args:
        name: Tool name.
        **args: Tool arguments.

    Returns:
        The tool-call spec.
    """
    return ToolCallSpec(name=name, args=dict(args))


class ScriptedLLM:
    """A loopback OpenAI-compatible server answering with scripted replies.

    The server starts on `127.0.0.1` with an OS-assigned port as soon as the
    object is created; use it as a context manager (`with ScriptedLLM() as
    llm:`) or call `close()`. Each chat-completions request is answered by, in
    order of precedence: a reply for its JSON schema (`set_schema_replies`), the
    responder (`set_responder`), the next queued reply (`script`), the default
    reply (`set_default`); with none of them the server answers HTTP 500
    "scripted server: no reply scripted for request #N".

    Only one choice is ever returned, whatever the request's `n`. In `usage`,
    the completion is counted in whitespace words and the prompt (messages and
    tools) in pieces a BPE tokenizer would make (`_prompt_pieces`): DuckLM
    compares the prompt count with its own to tell a prompt the server cut, so
    it has to be a plausible token count, not merely non-zero.

    Attributes:
        base_url: The OpenAI base URL to give clients, e.g.
            `http://127.0.0.1:43123/v1`.
        requests: Every parsed chat-completions request body, in arrival order.
        embedded: Every text sent to `/v1/embeddings`, in arrival order.
        props: When set, served at `GET /props` as llama-server's properties (its
            `default_generation_settings.n_ctx`); unset, `/props` is 404.
        count_prompt: When set, the `usage.prompt_tokens` of each request (given its
            body), e.g. to play a server that cut the prompt; unset, `_prompt_pieces`.
        models: The model ids `GET /v1/models` lists (`["scripted"]` unless a test
            offers more, e.g. to switch a conversation's model).
        wire: The server's dialect (`Wire`); the default is this server's own.
    """

    base_url: str
    requests: list[JSONDict]
    embedded: list[str]

    def __init__(self) -> None:
        self.requests = []
        self.embedded = []
        self.props: JSONDict | None = None
        self.props_asked = 0
        """How many times `GET /props` was answered."""
        self.renders_template = True
        """Whether it renders its chat template (`/apply-template`, `/tokenize` of messages)."""
        self.count_prompt: Callable[[JSONDict], int] | None = None
        self.models: list[str] = ["scripted"]
        self.wire = Wire()
        self._queue: collections.deque[Reply] = collections.deque()
        self._default: Reply | None = None
        self._responder: Responder | None = None
        self._by_schema: dict[str, Reply] = {}
        # Serialises request numbering with picking a reply, so request #N
        # always gets the N-th queued reply; only server threads take it,
        # which keeps the test's event loop from ever waiting on it.
        self._lock = threading.Lock()
        self._call_ids = itertools.count(1)
        self._connections: set[socket.socket] = set()
        self._stop = threading.Event()
        self._closed = False
        self._server = _Server(self)
        host, port = self._server.server_address[:2]
        self.base_url = f"http://{host!s}:{port}/v1"
        self._thread = threading.Thread(
            target=self._serve, name=f"scripted-llm-{port}", daemon=True
        )
        self._thread.start()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def script(self, *replies: Reply) -> None:
        """Append replies to the FIFO queue.

        Args:
            *replies: Replies for the next requests, in order.
        """
        self._queue.extend(replies)

    def set_default(self, reply: Reply | None) -> None:
        """Set the reply used, repeatedly, whenever the queue is empty.

        Args:
            reply: The fallback reply, or None to answer HTTP 500 instead.
        """
        self._default = reply

    def set_schema_replies(self, replies: dict[str, Reply]) -> None:
        """Answer requests for these JSON schemas (by name) with these replies, always.

        They take precedence over the queue and the responder, so replies a test
        queues for its turns are not taken by a reviewer (the critic's `Critique`, the
        memory policy's `MemoryProposal`) that runs behind the answer at its own time.

        Args:
            replies: Reply per `response_format.json_schema.name`; empty restores the queue.
        """
        self._by_schema = dict(replies)

    def set_responder(self, fn: Responder | None) -> None:
        """Compute replies from the request instead of taking them from the queue.

        The function runs on a server thread. If it raises, the request gets an
        HTTP 500 naming the exception.

        Args:
            fn: Called with the parsed request body; None restores the queue.
        """
        self._responder = fn

    @property
    def pending(self) -> int:
        """Number of scripted replies not yet consumed."""
        return len(self._queue)

    def close(self) -> None:
        """Stop the server and drop open client connections; idempotent.

        Off an event loop this waits for the serving thread to finish. On an
        event loop it returns at once instead, because waiting would block the
        loop; the thread then exits within one poll interval.
        """
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        # Kept-alive connections would otherwise keep their handler threads
        # (and a late request) alive after the server is gone.
        for conn in tuple(self._connections):
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._thread.join(timeout=5)

    def _serve(self) -> None:
        try:
            while not self._stop.is_set():
                self._server.handle_request()
        finally:
            self._server.server_close()

    def _answer(self, body: JSONDict) -> tuple[int, Reply]:
        """Record the request and pick its reply; runs on a server thread."""
        with self._lock:
            self.requests.append(body)
            number = len(self.requests)
            responder = self._responder
            chosen: Reply | None = self._by_schema.get(_schema_name(body) or "")
            if chosen is not None:
                return number, chosen
            if responder is None:
                try:
                    chosen = self._queue.popleft()
                except IndexError:
                    chosen = self._default
        if responder is not None:
            try:
                chosen = responder(body)
            except Exception as exc:
                return number, _error_reply(500, f"scripted server: responder raised {exc!r}")
        if chosen is None:
            return number, _error_reply(
                500, f"scripted server: no reply scripted for request #{number}"
            )
        return number, chosen

    def previous_request(self, number: int) -> JSONDict | None:
        """The chat request before request #`number` (what a prompt cache would hold)."""
        return self.requests[number - 2] if number > 1 else None

    def _next_call_id(self) -> str:
        return f"call_{next(self._call_ids)}"


EMBEDDING_DIMS = 384


def _schema_name(body: JSONDict) -> str | None:
    fmt = body.get("response_format")
    schema = fmt.get("json_schema") if isinstance(fmt, dict) else None
    name = schema.get("name") if isinstance(schema, dict) else None
    return name if isinstance(name, str) else None


def embedding(text: str) -> list[float]:
    """The scripted server's vector for `text`: fixed, and unrelated to any other text's."""
    seed = hashlib.sha256(text.encode()).digest()
    draw = random.Random(seed)
    return [draw.gauss(0.0, 1.0) for _ in range(EMBEDDING_DIMS)]


def _error_reply(status: int, message: str) -> Reply:
    return Reply(content=message, status=status)


def _error_body(status: int, message: str) -> JSONDict:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _pieces(text: str) -> list[str]:
    """Split text into word-sized pieces that concatenate back to `text`."""
    return [piece for piece in _PIECE_BOUNDARY.split(text) if piece]


# Up to four letters, a digit, or any other visible character: about what a chat model's
# BPE vocabulary makes of English, code and JSON (a little under DuckLM's estimate, which
# takes three letters a token).
_PIECE = re.compile(r"[A-Za-z]{1,4}|\d|[^\sA-Za-z\d]")


def _prompt_pieces(request: JSONDict, *, tools: bool = True) -> int:
    texts = [_message_text(message) for message in _messages(request)]
    if tools and request.get("tools"):
        texts.append(json.dumps(request["tools"]))
    return sum(len(_PIECE.findall(text)) for text in texts)


def _messages(request: JSONDict) -> list[JSONDict]:
    return [m for m in request.get("messages") or [] if isinstance(m, dict)]


def _message_text(message: JSONDict) -> str:
    return str(message.get("content") or "")


def _cached_pieces(request: JSONDict, previous: JSONDict | None) -> int:
    """What a prompt cache holds of `request`: the messages it shares, from the start,
    with the request before it (and the tools, when those are the same too)."""
    if previous is None:
        return 0
    shared = 0
    for message, before in zip(_messages(request), _messages(previous), strict=False):
        if message != before:
            break
        shared += len(_PIECE.findall(_message_text(message)))
    return shared


def _completion_tokens(reply: Reply) -> int:
    completion = len(reply.content.split()) + len(reply.reasoning.split())
    return completion + sum(len(json.dumps(tc.args).split()) for tc in reply.tool_calls)


def _wants_usage(request: JSONDict) -> bool:
    options = request.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # close() must not wait for handler threads stuck on idle keep-alive reads.
    block_on_close = False

    def __init__(self, owner: ScriptedLLM) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)
        self.timeout = _POLL_INTERVAL_S

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up mid-reply (cancelled stream, timeout, close())
        # is routine in tests and not worth a traceback on stderr.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 gives keep-alive, which is what the openai client's pool expects;
    # every response therefore carries Content-Length or chunked framing.
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate small writes; with Nagle's algorithm
    # and the client's delayed ACK each response would stall for ~40 ms.
    disable_nagle_algorithm = True
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.owner._connections.add(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner._connections.discard(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def _rendered(self, path: str, raw: bytes) -> bool:
        """The chat template's prompt rendered, as llama-server (`/apply-template`, with
        `/props`) and vLLM (`/tokenize` with messages, without) render it; False: not."""
        owner = self.server.owner
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            return False
        if not owner.renders_template or not isinstance(body, dict) or "messages" not in body:
            return False  # `/tokenize` of text: not served (DuckLM estimates its counts)
        if (path == "/apply-template") != (owner.props is not None):
            return False
        opening = "<think>\n" if owner.wire.reasoning == "think_opened" else ""
        prompt = f"<|im_start|>user\nDuckLM<|im_end|>\n<|im_start|>assistant\n{opening}"
        if path == "/apply-template":
            self._send_json(200, {"prompt": prompt})
        else:
            strs = [t.replace("\n", "Ċ") for t in re.split(r"(<[^>]+>|\n)", prompt) if t]
            self._send_json(200, {"count": len(strs), "tokens": list(range(len(strs))),
                                  "token_strs": strs, "max_model_len": 8192})  # fmt: skip
        return True

    def do_GET(self) -> None:
        """Serve the health and model-list endpoints."""
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/health":
            self._send_json(200, {"status": "ok"})
        elif path == "/props" and (owner := self.server.owner).props is not None:
            owner.props_asked += 1
            self._send_json(200, owner.props)
        elif path == "/v1/models":
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": [
                        {"id": name, "object": "model", "created": 0, "owned_by": "tests"}
                        for name in self.server.owner.models
                    ],
                },
            )
        else:
            self._not_found()

    def do_POST(self) -> None:
        """Serve chat completions and embeddings."""
        raw = self._read_body()
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in {"/apply-template", "/tokenize"} and self._rendered(path, raw):
            return
        if path not in {"/v1/chat/completions", "/v1/embeddings"}:
            self._not_found()
            return
        try:
            body = json.loads(raw or b"null")
        except ValueError as exc:
            self._send_json(400, _error_body(400, f"scripted server: invalid JSON: {exc}"))
            return
        if not isinstance(body, dict):
            self._send_json(400, _error_body(400, "scripted server: body must be a JSON object"))
            return
        try:
            if path == "/v1/embeddings":
                self._embed(body)
            else:
                self._complete(body)
        except OSError:
            raise
        except Exception:
            # A bug here should fail the test with a readable message, not
            # leave the client waiting on a half-written response.
            self.close_connection = True
            self._send_json(500, _error_body(500, traceback.format_exc()))

    def do_PUT(self) -> None:
        """Reject other methods with 404, after consuming the body."""
        self._read_body()
        self._not_found()

    do_DELETE = do_PATCH = do_PUT

    def _embed(self, body: JSONDict) -> None:
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._send_json(400, _error_body(400, "scripted server: input must be text(s)"))
            return
        self.server.owner.embedded.extend(texts)
        data = [
            {"object": "embedding", "index": i, "embedding": embedding(text)}
            for i, text in enumerate(texts)
        ]
        self._send_json(200, {"object": "list", "data": data, "model": body.get("model", "")})

    def _complete(self, body: JSONDict) -> None:
        number, chosen = self.server.owner._answer(body)
        if chosen.delay_s > 0:
            time.sleep(chosen.delay_s)
        streaming = body.get("stream") is True
        if chosen.raw_body is not None:
            ctype = (
                "text/event-stream" if streaming and chosen.status == 200 else "application/json"
            )
            self._send_bytes(chosen.status, chosen.raw_body.encode(), ctype)
            return
        if chosen.status != 200:
            message = chosen.content or f"scripted error (HTTP {chosen.status})"
            self._send_json(chosen.status, _error_body(chosen.status, message))
            return
        render = _Render(
            request=body,
            reply=chosen,
            completion_id=f"chatcmpl-scripted-{number}",
            call_ids=[
                tc.id if tc.id is not None else self.server.owner._next_call_id()
                for tc in chosen.tool_calls
            ],
            count_prompt=self.server.owner.count_prompt,
            wire=self.server.owner.wire,
            cached=self._cached(body, number),
        )
        if streaming:
            self._send_stream(render.chunks(), chosen.chunk_delay_s)
        else:
            self._send_json(200, render.completion())

    def _cached(self, body: JSONDict, number: int) -> int:
        """What the prompt cache held of request #`number`, when the dialect tells it."""
        wire = self.server.owner.wire
        if wire.usage != "cache_misses" and not (wire.cached_tokens or wire.timings):
            return 0  # not counted: the regex over every message costs the tests' loop
        return _cached_pieces(body, self.server.owner.previous_request(number))

    def _read_body(self) -> bytes:
        # Always consume the body: leftovers would be parsed as the next
        # request on this kept-alive connection.
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _not_found(self) -> None:
        self._send_json(
            404, _error_body(404, f"scripted server: no route for {self.command} {self.path}")
        )

    def _send_json(self, status: int, payload: JSONDict) -> None:
        self._send_bytes(status, json.dumps(payload).encode(), "application/json")

    def _send_bytes(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_stream(self, chunks: Iterable[JSONDict], chunk_delay_s: float) -> None:
        # Chunked framing (rather than Connection: close) lets the client
        # see where the body ends, so the openai client's post-[DONE] drain
        # returns at once and the connection goes back to the pool.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        first = True
        for chunk in chunks:
            if chunk_delay_s > 0 and not first:
                time.sleep(chunk_delay_s)
            first = False
            self._write_chunk(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        # [DONE] and the terminating zero-size chunk go out in one write so
        # the end of the body is usually already buffered when the client
        # sees [DONE].
        self._write_chunk(b"data: [DONE]\n\n", last=True)

    def _write_chunk(self, data: bytes, *, last: bool = False) -> None:
        self.wfile.write(b"%x\r\n%s\r\n%s" % (len(data), data, b"0\r\n\r\n" if last else b""))
        self.wfile.flush()


@dataclass
class _Render:
    """Turns a reply into OpenAI chat-completion JSON, whole or as chunks."""

    request: JSONDict
    reply: Reply
    completion_id: str
    call_ids: list[str]
    count_prompt: Callable[[JSONDict], int] | None = None
    wire: Wire = field(default_factory=Wire)
    cached: int = 0
    """What the prompt cache held of this request (`_cached_pieces`)."""
    created: int = field(default_factory=lambda: int(time.time()))

    def prompt(self) -> tuple[int, int]:
        """The whole prompt's count, and how much of it the cache held."""
        whole = (
            self.count_prompt(self.request)
            if self.count_prompt is not None
            else _prompt_pieces(self.request)
        )
        return whole, min(self.cached, whole)

    def usage(self) -> JSONDict | None:
        style = self.wire.usage
        if style == "none":
            return None
        whole, cached = self.prompt()
        prompt = {
            "cache_misses": whole - cached,
            "content_only": _prompt_pieces(self.request, tools=False),
            "zero": 0,
        }.get(style, whole)
        completion = _completion_tokens(self.reply)
        found: JSONDict = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        if self.wire.cached_tokens:
            found["prompt_tokens_details"] = {"cached_tokens": cached}
        return found

    def server_fields(self) -> JSONDict:
        """llama-server's own fields of a reply: `timings`, `truncated`."""
        fields: JSONDict = {}
        if self.wire.timings:
            whole, cached = self.prompt()
            predicted = _completion_tokens(self.reply)
            fields["timings"] = {"prompt_n": whole - cached, "cache_n": cached,
                                 "predicted_n": predicted}  # fmt: skip
        if self.reply.truncated:
            fields["truncated"] = True
        return fields

    @property
    def model(self) -> str:
        return str(self.request.get("model") or "scripted")

    @property
    def finish_reason(self) -> str:
        if self.reply.finish_reason is not None:
            return self.reply.finish_reason
        return "tool_calls" if self.reply.tool_calls else "stop"

    def _envelope(self, kind: str) -> JSONDict:
        return {
            "id": self.completion_id,
            "object": kind,
            "created": self.created,
            "model": self.model,
            "system_fingerprint": None,
        }

    def _inline(self) -> bool:
        return bool(self.reply.reasoning) and self.wire.reasoning in ("think_tags", "think_opened")

    def completion(self) -> JSONDict:
        content = self.reply.content
        if self._inline():
            opening = "" if self.wire.reasoning == "think_opened" else "<think>"
            content = f"{opening}{self.reply.reasoning}</think>\n\n{content}"
        message: JSONDict = {
            "role": "assistant",
            # OpenAI sends null content for a tool-call-only turn.
            "content": content or (None if self.reply.tool_calls else ""),
            "refusal": None,
        }
        if self.reply.reasoning and not self._inline():
            message[self.wire.reasoning] = self.reply.reasoning
        if self.reply.tool_calls:
            message["tool_calls"] = [
                self._call(tc, call_id, json.dumps(tc.args))
                for tc, call_id in zip(self.reply.tool_calls, self.call_ids, strict=True)
            ]
        completion: JSONDict = {
            **self._envelope("chat.completion"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": self.finish_reason,
                }
            ],
            **self.server_fields(),
        }
        usage = self.usage()
        if usage is not None:
            completion["usage"] = usage
        return completion

    def _call(self, tc: ToolCallSpec, call_id: str, arguments: str) -> JSONDict:
        """A tool call's first (or only) piece, with an id if the server sends ids."""
        piece: JSONDict = {
            "type": "function",
            "function": {"name": tc.name, "arguments": arguments},
        }
        if self.wire.tool_call_ids:
            piece["id"] = call_id
        return piece

    def _chunk(self, delta: JSONDict, finish_reason: str | None = None) -> JSONDict:
        chunk = self._envelope("chat.completion.chunk")
        chunk["choices"] = [
            {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        ]
        if self.wire.usage == "every_chunk" and _wants_usage(self.request):
            chunk["usage"] = self.usage()
        return chunk

    def _text_deltas(self) -> Iterator[JSONDict]:
        """The reasoning and the content, piece by piece, as the server's dialect sends them."""
        reasoning, style = self.reply.reasoning, self.wire.reasoning
        if reasoning and not self._inline():
            for piece in _pieces(reasoning):
                yield {style: piece}
        elif reasoning:
            opening = [] if style == "think_opened" else ["<thi", "nk>"]
            for piece in [*opening, *_pieces(reasoning), "</th", "ink>", "\n\n"]:
                yield {"content": piece}
        for piece in _pieces(self.reply.content):
            yield {"content": piece}

    def _call_deltas(self) -> Iterator[JSONDict]:
        calls = zip(self.reply.tool_calls, self.call_ids, strict=True)
        for index, (tc, call_id) in enumerate(calls):
            arguments = json.dumps(tc.args)
            if not self.wire.tool_call_index:  # sent whole, with no index
                yield {"tool_calls": [self._call(tc, call_id, arguments)]}
                continue
            yield {"tool_calls": [{"index": index, **self._call(tc, call_id, "")}]}
            for start in range(0, len(arguments), _ARG_SLICE):
                piece = {"arguments": arguments[start : start + _ARG_SLICE]}
                yield {"tool_calls": [{"index": index, "function": piece}]}

    def chunks(self) -> Iterator[JSONDict]:
        yield self._chunk({"role": "assistant", "content": "", "refusal": None})
        for delta in [*self._text_deltas(), *self._call_deltas()]:
            yield self._chunk(delta)
        yield {**self._chunk({}, self.finish_reason), **self.server_fields()}
        usage = self.usage()
        if usage is not None and _wants_usage(self.request):
            usage_chunk = self._envelope("chat.completion.chunk")
            usage_chunk["choices"] = []
            usage_chunk["usage"] = usage
            yield usage_chunk
