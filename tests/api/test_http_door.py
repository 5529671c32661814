"""The HTTP door as `ducklm serve` opens it: what its logs keep, which targets it takes,
how long a slow client may hold a connection (issue 41).

Served through `uvicorn_config` (`tests/support/door.py`) on a real uvicorn; requests
that httpx would fix go as raw bytes.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import httpx

from ducklm.config.settings import Settings
from ducklm.runtime.logs import HIDE_QUERIES, hide_query_values, start_file_logging
from ducklm.server import create_app
from ducklm.server.security import OTHER_TARGET, GuardMiddleware
from tests.support.door import door, exchange, log_lines

SECRET = "sk-query-token-0123456789abcdef"


async def _echo_path(scope: Any, receive: Any, send: Any) -> None:
    """The path and query the app was handed, after the body (read whole)."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    body = f"{scope['path']}?{scope['query_string'].decode()}".encode()
    length = (b"content-length", str(len(body)).encode())
    await send({"type": "http.response.start", "status": 200, "headers": [length]})
    await send({"type": "http.response.body", "body": body})


# -- tokens and codes in the query never reach a log line


async def test_a_token_or_code_in_the_query_never_reaches_the_access_log(
    settings: Settings,
) -> None:
    app = await asyncio.to_thread(create_app, settings)
    code = app.state.logins.new_code()  # a real one: the request gets its answer
    # Inside the door: uvicorn's config sets its loggers' handlers anew.
    async with door(app, settings, lifespan="on") as port:
        base = f"http://127.0.0.1:{port}"
        with log_lines("uvicorn.access") as lines:
            async with httpx.AsyncClient(base_url=base) as client:
                refused = await client.get("/v1/conversations", params={"token": SECRET})
                logged_in = await client.get("/login", params={"code": code, "x": SECRET})
    assert refused.status_code == 401
    assert logged_in.status_code == 303, logged_in.text  # on to the chat, with a cookie
    assert logged_in.cookies
    text = "\n".join(lines)
    assert "/v1/conversations?token=[hidden]" in text, text
    assert "/login?code=[hidden]&x=[hidden]" in text, text
    assert SECRET not in text and code not in text


def test_values_are_hidden_by_shape_not_by_name() -> None:
    assert hide_query_values(f"GET /a?q={SECRET}&flag&b=1;c=2#frag HTTP/1.1") == (
        "GET /a?q=[hidden]&[hidden]&b=[hidden];c=[hidden]#frag HTTP/1.1"
    )
    assert hide_query_values("is it done? yes") == "is it done? yes"


def test_a_bad_log_call_is_left_to_the_handler() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "%s and %s?a=1", ("one",), None)
    assert HIDE_QUERIES.filter(record)  # no TypeError here: logging reports it on emit
    assert record.args == ("one",)


def test_ducklms_own_log_file_hides_query_values(tmp_path: Path) -> None:
    root = logging.getLogger()
    kept = root.handlers[:], root.level
    listener = start_file_logging(tmp_path)
    try:
        url = httpx.URL("http://127.0.0.1:9/callback", params={"code": SECRET})
        logging.getLogger("ducklm.test").info("sent %s", url)  # a URL object, not a str
        try:
            raise ValueError(f"fetching /token?refresh={SECRET} failed")
        except ValueError:
            logging.getLogger("ducklm.test").exception("a traceback's text too")
    finally:
        listener.stop()
        for handler in listener.handlers:
            handler.close()
        root.handlers, root.level = kept[0], kept[1]
    written = (tmp_path / "ducklm.log").read_text(encoding="utf-8")
    assert "sent http://127.0.0.1:9/callback?code=[hidden]" in written
    assert "/token?refresh=[hidden] failed" in written
    assert SECRET not in written
    assert HIDE_QUERIES in logging.getLogger("uvicorn.access").filters


# -- an absolute-form target names the Host's own host, exactly


async def test_an_absolute_target_must_name_the_host_it_was_sent_to(settings: Settings) -> None:
    guarded = GuardMiddleware(_echo_path, max_body_bytes=1024)
    async with door(guarded, settings) as port:

        def request(target: str, host: str) -> bytes:
            return f"GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()

        own = f"127.0.0.1:{port}"
        for target, host in (
            ("http://evil.example/health", own),
            (f"http://evil.example:{port}/health", own),
            (f"http://localhost:{port}/health", own),  # allowed, but not the one named
            ("http://127.0.0.1:1/health", own),  # another port
            ("http://127.0.0.1/health", own),  # port 80
            (f"http://user@{own}/health", own),
        ):
            answer = await exchange(port, request(target, host))
            assert answer.startswith(b"HTTP/1.1 400"), (target, answer[:300])
            assert OTHER_TARGET.encode() in answer
        same = await exchange(port, request(f"http://{own}/health?a=1", own))
        upper = await exchange(port, request(f"HTTP://LOCALHOST:{port}/x", f"localhost:{port}"))
        origin_form = await exchange(port, request("/health", own))
    assert same.startswith(b"HTTP/1.1 200") and same.endswith(b"\r\n\r\n/health?a=1"), same
    assert upper.startswith(b"HTTP/1.1 200") and upper.endswith(b"\r\n\r\n/x?"), upper
    assert origin_form.endswith(b"\r\n\r\n/health?"), origin_form


# -- slow clients are cut off

HEAD_S = 0.5
BODY_S = 0.5
LATE_S = 15.0  # a bound for the loop, not a timing claim: each is closed long before
SLOW = 20
RESET = b"(reset)"
PROMPT = b"GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


def _quick(settings: Settings) -> Settings:
    return settings.model_copy(update={"header_timeout_s": HEAD_S, "body_timeout_s": BODY_S})


async def _closed(reader: asyncio.StreamReader) -> bytes:
    """What the server said before it closed the connection (`LATE_S` at most).

    `RESET` when the client's own later bytes made the kernel reset the closed connection
    before its last words were read (a trickling client may).
    """
    try:
        return await asyncio.wait_for(reader.read(), timeout=LATE_S)
    except ConnectionResetError:
        return RESET


async def test_slow_heads_and_bodies_are_cut_off(settings: Settings) -> None:
    async with door(_echo_path, _quick(settings)) as port:
        opened = [await asyncio.open_connection("127.0.0.1", port) for _ in range(SLOW)]
        for i, (_, writer) in enumerate(opened):
            if i % 4 == 1:  # a head that never ends
                writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n")
            elif i % 4 == 2:  # a body that never comes whole
                writer.write(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99\r\n\r\nx")
            elif i % 4 == 3:  # a head trickled a byte at a time (below)
                writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            # i % 4 == 0: a socket that sends nothing
        trickled = [writer for i, (_, writer) in enumerate(opened) if i % 4 == 3]
        trickling = asyncio.create_task(_trickle(trickled))
        said = await asyncio.gather(*(_closed(reader) for reader, _ in opened))
        trickling.cancel()
        answer = await exchange(port, PROMPT)  # the server still answers a prompt client
        for _, writer in opened:
            writer.close()
    assert answer.startswith(b"HTTP/1.1 200"), answer
    for i, words in enumerate(said):
        if i % 4 == 0:
            assert words == b"", words  # a preconnect may be idle: closed without a word
        elif i % 4 == 2:
            assert not words.startswith(b"HTTP/1.1 200"), words
        elif i % 4 == 1:
            assert words.startswith(b"HTTP/1.1 408"), words
        else:  # trickled: 408, unless its next byte reset the connection first
            assert words.startswith(b"HTTP/1.1 408") or words == RESET, words


async def _trickle(writers: list[asyncio.StreamWriter]) -> None:
    """A byte of a head every 0.05 s on each: bytes keep coming, the head never ends."""
    for _ in range(int(LATE_S / 0.05)):
        await asyncio.sleep(0.05)
        for writer in writers:
            if not writer.is_closing():
                writer.write(b"a")


async def test_a_body_that_keeps_coming_is_not_cut_off(settings: Settings) -> None:
    """A body earns a second per KiB: 4 KiB every 0.1 s, eight times, outlast `BODY_S`.

    (Each part comes seconds before the deadline it moves: a loaded machine's pauses fit.)
    """
    async with door(_echo_path, _quick(settings)) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 32768\r\n"
            b"Connection: close\r\n\r\n"
        )
        for _ in range(8):
            writer.write(b"x" * 4096)
            await writer.drain()
            await asyncio.sleep(0.1)
        answer = await _closed(reader)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"/upload?"), answer
