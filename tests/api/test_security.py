"""Host, Origin, token, session and body-size checks: how a localhost agent is attacked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from http.cookies import SimpleCookie
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from ducklm.config.settings import Settings
from ducklm.kit.token import load_token, same_token
from ducklm.server.hosts import is_allowed_host, is_loopback, normal_names
from ducklm.server.security import GuardMiddleware
from ducklm.server.session import CSRF_HEADER, Logins
from ducklm.server.web import ASSET_SUFFIXES, UI_DIR
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served, serve

QUIET = {"critic": False, "memory": False}
ALLOWED = normal_names(["duck.lan", "[fd00::7]"])

# What a DNS rebinding attacker (or a numeric trick) puts into Host; each refused.
FOREIGN_HOSTS = [
    "127.0.0.1.attacker.example",
    "127.0.0.1.attacker.example:8000",
    "127.attacker.example",
    "127.attacker.example:8000",
    "[::1].attacker.example",
    "[::1].attacker.example:8000",
    "localhost.attacker.example",
    "localhost.attacker.example:8000",
    "localhost.",  # another name in DNS: refused (see server/hosts.py)
    "localhost.:8000",
    "127.0.0.1.",
    "[::ffff:127.0.0.1]",  # IPv4-mapped: refused, one spelling fewer to get wrong
    "[::ffff:127.0.0.1]:8000",
    "[::1%25lo]",
    "::1",  # an IPv6 literal must be bracketed in Host
    "[127.0.0.1]",
    "2130706433",
    "2130706433:8000",
    "0x7f.1",
    "0x7f.0.0.1",
    "127.1",
    "0177.0.0.1",
    "127.0.0.01",
    "localhost:abc",
    "localhost:",
    "localhost:8000:1",
    "",
    "0.0.0.0",
    "evil.example",
    "duck.lan.attacker.example",
    "duck.lan.",
]
OWN_HOSTS = [
    "127.0.0.1",
    "127.0.0.1:8000",
    "127.5.6.7:1",
    "localhost",
    "localhost:8000",
    "LOCALHOST",  # names are case-insensitive; browsers send them lower-cased anyway
    "LocalHost:80",
    "[::1]",
    "[::1]:8000",
    "[0:0:0:0:0:0:0:1]:8000",
    "duck.lan",
    "DUCK.LAN:8443",
    "[fd00::7]:80",
]


@pytest.mark.parametrize("host", FOREIGN_HOSTS)
def test_a_host_that_only_looks_local_is_refused(host: str) -> None:
    assert not is_allowed_host(host, ALLOWED)


@pytest.mark.parametrize("host", OWN_HOSTS)
def test_loopback_and_allowed_hosts_are_served(host: str) -> None:
    assert is_allowed_host(host, ALLOWED)


@pytest.mark.parametrize(
    ("bind", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("127.255.255.254", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("::1", True),
        ("[::1]", True),
        ("127.evil.com", False),
        ("127.0.0.1.evil.com", False),
        ("localhost.evil.com", False),
        ("localhost.", False),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.2", False),
        ("example.com", False),
        ("::ffff:127.0.0.1", False),
        ("::1%lo", False),
        ("2130706433", False),
        ("127.1", False),
        ("0x7f.0.0.1", False),
        ("0177.0.0.1", False),
        ("", False),
    ],
)
def test_serve_host_loopback_table(bind: str, loopback: bool) -> None:
    assert is_loopback(bind) is loopback


@pytest.mark.parametrize("host", ["127.0.0.1.attacker.example:8000", "[::1].attacker.example"])
async def test_a_rebinding_host_is_refused_over_http(served: Served, host: str) -> None:
    for path in ("/", "/login?code=x", "/health", "/v1/status", "/ui/app.js"):
        response = await served.client.get(path, headers={"Host": host})
        assert response.status_code == 400, path
        assert "attacker.example" in response.json()["detail"]
        assert response.headers["x-content-type-options"] == "nosniff"


async def test_a_foreign_host_is_refused_everywhere(served: Served) -> None:
    for path in ("/", "/health", "/v1/status", "/threads/search"):
        response = await served.client.get(path, headers={"Host": "evil.example:8000"})
        assert response.status_code == 400, path
        assert "evil.example" in response.json()["detail"]
    for host in ("localhost:1234", "LOCALHOST", "[::1]:9"):
        ok = await served.client.get("/health", headers={"Host": host})
        assert ok.status_code == 200, host


async def test_a_foreign_origin_cannot_change_anything(served: Served) -> None:
    evil = {"Origin": "https://evil.example"}
    response = await served.client.post("/v1/conversations", json={}, headers=evil)
    assert response.status_code == 403
    assert (await served.client.get("/v1/conversations")).json() == []
    own = {"Origin": served.url}
    assert (await served.client.post("/v1/conversations", json={}, headers=own)).status_code == 201
    # Reading with a foreign Origin is harmless (the browser hides the answer) and no
    # CORS header ever invites it to show it.
    listed = await served.client.get("/v1/conversations", headers=evil)
    assert "access-control-allow-origin" not in listed.headers


@pytest.fixture
async def bare(served: Served) -> AsyncIterator[httpx.AsyncClient]:
    """A client without the token, like a browser (cookies are sent by hand)."""
    client = await asyncio.to_thread(httpx.AsyncClient, base_url=served.url, timeout=30)
    async with client:
        yield client


async def test_the_token_is_required_and_checked(served: Served, bare: httpx.AsyncClient) -> None:
    for path in ("/v1/conversations", "/v1/status", "/info", "/threads/search"):
        method = "POST" if path == "/threads/search" else "GET"
        missing = await bare.request(method, path)
        assert missing.status_code == 401, path
        assert "token" in missing.json()["detail"]
    wrong = await bare.get("/v1/status", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    by_key = await bare.get("/v1/status", headers={"x-api-key": served.token})
    assert by_key.status_code == 200
    assert (await bare.get("/health")).status_code == 200


def _carries_token(response: httpx.Response, token: str) -> bool:
    in_headers = any(token in value for value in response.headers.values())
    return token in response.text or in_headers


async def test_the_page_without_a_session_has_no_token(
    served: Served, bare: httpx.AsyncClient
) -> None:
    page = await bare.get("/")
    assert page.status_code == 200
    assert not _carries_token(page, served.token)
    assert "ducklm-token" not in page.text
    assert "ducklm open" in page.text  # it says how to log in
    assert "/ui/app.js" not in page.text  # and is not the chat
    assert page.headers["cache-control"] == "no-store"


async def test_no_static_file_carries_the_token(served: Served, bare: httpx.AsyncClient) -> None:
    names = await asyncio.to_thread(
        lambda: sorted(p.name for p in UI_DIR.iterdir() if p.suffix in ASSET_SUFFIXES)
    )
    assert "index.html" in names
    assert "api.js" in names
    for name in names:
        response = await bare.get(f"/ui/{name}")
        assert response.status_code == 200, name
        assert not _carries_token(response, served.token), name
        assert "__DUCKLM_TOKEN__" not in response.text, name


async def _log_in(served: Served, bare: httpx.AsyncClient) -> dict[str, str]:
    """Open a login URL; the session cookie, as a header to send by hand."""
    response = await bare.get(await served.login_url())
    assert response.status_code == 303
    assert response.headers["location"] == "/"
    bare.cookies.clear()  # the test sends cookies itself, to say exactly which
    value = SimpleCookie(response.headers["set-cookie"])[served.cookie_name].value
    return {"Cookie": f"{served.cookie_name}={value}"}


async def _csrf(bare: httpx.AsyncClient, cookie: dict[str, str]) -> dict[str, str]:
    response = await bare.get("/session", headers=cookie)
    assert response.status_code == 200
    return {CSRF_HEADER: response.json()["csrf"], **cookie}


async def test_a_login_code_sets_a_strict_http_only_cookie_once(
    served: Served, bare: httpx.AsyncClient
) -> None:
    url = await served.login_url()
    first = await bare.get(url)
    assert first.status_code == 303
    assert first.headers["location"] == "/"
    set_cookie = first.headers["set-cookie"]
    morsel = SimpleCookie(set_cookie)[served.cookie_name]
    assert morsel["httponly"] is True
    assert morsel["samesite"] == "strict"
    assert morsel["path"] == "/"
    assert len(morsel.value) >= 32
    assert not _carries_token(first, served.token)  # the session is not the token
    assert first.headers["cache-control"] == "no-store"

    again = await bare.get(url)  # the code is used up
    assert again.status_code == 403
    assert "set-cookie" not in again.headers
    assert "already used" in again.text
    assert not _carries_token(again, served.token)

    bare.cookies.clear()
    cookie = {"Cookie": f"{served.cookie_name}={morsel.value}"}
    chat = await bare.get("/", headers=cookie)
    assert "/ui/app.js" in chat.text
    assert not _carries_token(chat, served.token)
    assert (await bare.get("/v1/conversations", headers=cookie)).status_code == 200


def _logins(served: Served) -> Logins:
    app = served.server.config.app
    assert isinstance(app, FastAPI)
    logins: Logins = app.state.logins
    return logins


async def test_login_codes_expire_and_unknown_ones_fail(
    served: Served, bare: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = await served.login_url()
    logins = _logins(served)
    now = logins.clock()
    monkeypatch.setattr(logins, "clock", lambda: now + logins.code_ttl_s + 1)
    assert (await bare.get(url)).status_code == 403
    for query in ("", "?code=", "?code=made-up"):
        response = await bare.get(f"/login{query}")
        assert response.status_code == 403, query
        assert "set-cookie" not in response.headers


async def test_a_session_ends_when_it_expires(
    served: Served, bare: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    cookie = await _log_in(served, bare)
    logins = _logins(served)
    now = logins.clock()
    monkeypatch.setattr(logins, "clock", lambda: now + logins.session_ttl_s + 1)
    assert (await bare.get("/v1/conversations", headers=cookie)).status_code == 401
    assert "/ui/app.js" not in (await bare.get("/", headers=cookie)).text


async def test_a_session_needs_the_csrf_header_to_change_anything(
    served: Served, bare: httpx.AsyncClient
) -> None:
    cookie = await _log_in(served, bare)
    refused = await bare.post("/v1/conversations", json={}, headers=cookie)
    assert refused.status_code == 403
    assert CSRF_HEADER in refused.json()["detail"]
    wrong = await bare.post("/v1/conversations", json={}, headers={CSRF_HEADER: "x", **cookie})
    assert wrong.status_code == 403
    assert (await served.client.get("/v1/conversations")).json() == []

    with_csrf = await _csrf(bare, cookie)
    created = await bare.post("/v1/conversations", json={}, headers=with_csrf)
    assert created.status_code == 201
    conversation = created.json()["id"]
    own = {"Origin": served.url, **with_csrf}
    assert (await bare.post("/v1/conversations", json={}, headers=own)).status_code == 201
    # The header does not excuse another site's page: the Origin check still refuses.
    evil = {"Origin": "http://127.0.0.1:1", **with_csrf}
    assert (await bare.post("/v1/conversations", json={}, headers=evil)).status_code == 403
    gone = await bare.delete(f"/v1/conversations/{conversation}", headers=cookie)
    assert gone.status_code == 403
    deleted = await bare.delete(f"/v1/conversations/{conversation}", headers=with_csrf)
    assert deleted.is_success


async def test_bearer_clients_need_no_csrf_and_a_wrong_token_is_not_saved_by_a_cookie(
    served: Served, bare: httpx.AsyncClient
) -> None:
    assert (await served.client.post("/v1/conversations", json={})).status_code == 201
    with_csrf = await _csrf(bare, await _log_in(served, bare))
    wrong = {"Authorization": "Bearer nope", **with_csrf}
    assert (await bare.get("/v1/conversations", headers=wrong)).status_code == 401


async def test_login_codes_are_for_token_holders_only(
    served: Served, bare: httpx.AsyncClient
) -> None:
    assert (await bare.post("/v1/login-codes")).status_code == 401
    with_csrf = await _csrf(bare, await _log_in(served, bare))
    assert (await bare.post("/v1/login-codes", headers=with_csrf)).status_code == 401
    made = await served.client.post("/v1/login-codes")
    assert made.status_code == 201
    assert made.json()["url"] == f"{served.url}/login?code={made.json()['code']}"
    assert made.json()["expires_in"] == 600
    assert (await bare.get("/session")).status_code == 401


async def test_logout_ends_the_session(served: Served, bare: httpx.AsyncClient) -> None:
    cookie = await _log_in(served, bare)
    assert (await bare.post("/logout", headers=cookie)).status_code == 403
    out = await bare.post("/logout", headers=await _csrf(bare, cookie))
    assert out.status_code == 204
    cleared = SimpleCookie(out.headers["set-cookie"])[served.cookie_name]
    assert cleared["max-age"] == "0"
    assert (await bare.get("/v1/conversations", headers=cookie)).status_code == 401
    assert "/ui/app.js" not in (await bare.get("/", headers=cookie)).text


async def test_every_response_says_nosniff(
    served: Served, bare: httpx.AsyncClient, llm: ScriptedLLM
) -> None:
    responses = {
        "json": await served.client.get("/v1/status"),
        "route error": await bare.get("/v1/status"),
        "guard error": await bare.get("/health", headers={"Host": "evil.example"}),
        "not found": await bare.get("/ui/nothing.js"),
        "static": await bare.get("/ui/app.js"),
        "page": await bare.get("/"),
        "redirect": await bare.get(await served.login_url()),
    }
    llm.script(reply("Quack."))
    async with served.client.stream(
        "POST", "/v1/chat/stream", json={"message": "hi", **QUIET}
    ) as sse:
        assert sse.headers["content-type"].startswith("text/event-stream")
        responses["sse"] = sse
        assert "event: done" in (await sse.aread()).decode()
    for kind, response in responses.items():
        assert response.headers.get("x-content-type-options") == "nosniff", kind


async def test_html_pages_carry_the_csp(served: Served, bare: httpx.AsyncClient) -> None:
    cookie = await _log_in(served, bare)
    pages = {
        "login help": await bare.get("/"),
        "chat": await bare.get("/", headers=cookie),
        "used code": await bare.get("/login?code=x"),
        "static": await bare.get("/ui/index.html"),
    }
    for kind, page in pages.items():
        assert page.headers["content-type"].startswith("text/html"), kind
        csp = page.headers["content-security-policy"]
        for directive in ("default-src 'self'", "script-src 'self';", "frame-ancestors 'none'"):
            assert directive in csp, kind
        assert page.headers["referrer-policy"] == "no-referrer", kind
        assert page.headers["x-frame-options"] == "DENY", kind
    assert "content-security-policy" not in (await bare.get("/health")).headers


async def test_oversized_bodies_are_413(settings: Settings) -> None:
    small = settings.model_copy(update={"max_body_bytes": 2048})
    async with serve(small) as served:
        big = {"message": "x" * 4096}
        response = await served.client.post("/v1/chat", json=big)
        assert response.status_code == 413
        assert "2048" in response.json()["detail"]
        assert response.headers["x-content-type-options"] == "nosniff"

        async def chunks():  # type: ignore[no-untyped-def]
            for _ in range(4):
                yield b"x" * 1024

        chunked = await served.client.post(
            "/v1/chat", content=chunks(), headers={"content-type": "application/json"}
        )
        assert chunked.status_code == 413


async def test_a_token_is_created_once_and_kept_private(settings: Settings) -> None:
    first = await load_token(settings)
    assert first is not None
    assert len(first) >= 32
    assert await load_token(settings) == first
    path = settings.data_dir / "api_token"
    mode = (await asyncio.to_thread(path.stat)).st_mode & 0o777
    assert mode == 0o600
    chosen = settings.model_copy(update={"api_token": "a-chosen-token-of-length"})
    assert await load_token(chosen) == "a-chosen-token-of-length"


def test_token_comparison() -> None:
    assert same_token("abc", "abc")
    assert not same_token("abd", "abc")
    assert not same_token(None, "abc")
    assert not same_token("", "abc")


async def test_only_the_web_chat_assets_are_served(served: Served) -> None:
    assert (await served.client.get("/ui/app.js")).status_code == 200
    for path in ("/ui/__init__.py", "/ui/README.md", "/ui/../server/app.py"):
        assert (await served.client.get(path)).status_code == 404, path


@pytest.mark.parametrize("path", ["/docs", "/redoc", "/docs/oauth2-redirect"])
async def test_the_cdn_docs_are_off_by_default(served: Served, path: str) -> None:
    assert (await served.client.get(path)).status_code == 404


async def test_the_openapi_schema_needs_the_token_or_a_session(
    served: Served, bare: httpx.AsyncClient
) -> None:
    assert (await bare.get("/openapi.json")).status_code == 401
    schema = await served.client.get("/openapi.json")
    assert schema.status_code == 200
    assert "/v1/login-codes" in schema.json()["paths"]
    cookie = await _log_in(served, bare)
    assert (await bare.get("/openapi.json", headers=cookie)).status_code == 200


async def test_the_docs_are_served_when_enabled(settings: Settings) -> None:
    async with serve(settings.model_copy(update={"api_docs": True})) as served:
        for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
            page = await served.client.get(path)
            assert page.status_code == 200, path
            assert "cdn.jsdelivr.net" in page.headers["content-security-policy"], path
            assert "frame-ancestors 'none'" in page.headers["content-security-policy"], path
            assert page.headers["x-content-type-options"] == "nosniff", path
        assert "/openapi.json" in (await served.client.get("/docs")).text


CHAT_UI = "http://127.0.0.1:3100"


class TestCrossOrigin:
    """CORS for DUCK_ALLOWED_ORIGINS only, and JSON bodies sent as text/plain."""

    @pytest.fixture
    def server_settings(self, settings: Settings) -> Settings:
        return settings.model_copy(update={"allowed_origins": [CHAT_UI]})

    async def test_only_allowed_origins_get_cors(
        self, served: Served, bare: httpx.AsyncClient
    ) -> None:
        asked = {"Access-Control-Request-Method": "POST"}
        ok = await bare.options("/threads", headers={"Origin": CHAT_UI, **asked})
        assert ok.status_code == 204
        assert ok.headers["access-control-allow-origin"] == CHAT_UI
        assert "access-control-allow-credentials" not in ok.headers
        for origin in ("https://evil.example", served.url, "null"):
            refused = await bare.options("/threads", headers={"Origin": origin, **asked})
            assert refused.status_code == 403, origin
            assert "access-control-allow-origin" not in refused.headers
        # Answers carry it for the allowed origin only; never `*`.
        key = {"X-Api-Key": served.token}
        allowed = await bare.get("/info", headers={"Origin": CHAT_UI, **key})
        assert allowed.headers["access-control-allow-origin"] == CHAT_UI
        assert allowed.headers["vary"] == "Origin"
        evil = await bare.get("/info", headers={"Origin": "https://evil.example", **key})
        assert "access-control-allow-origin" not in evil.headers
        # A plain OPTIONS (no preflight) is not answered by the CORS code.
        assert (await bare.options("/threads")).status_code == 405

    async def test_text_plain_json_needs_a_header_credential_and_no_origin(
        self, served: Served, bare: httpx.AsyncClient
    ) -> None:
        body = b'{"title": "plain"}'
        plain = {"Content-Type": "text/plain;charset=UTF-8"}
        keyed = await bare.post("/v1/conversations", content=body, headers={**plain,
                                "X-Api-Key": served.token})  # fmt: skip
        assert keyed.status_code == 201, keyed.text
        assert keyed.json()["title"] == "plain"
        bearer = await bare.post("/v1/conversations", content=body, headers={**plain,
                                 **served.headers})  # fmt: skip
        assert bearer.status_code == 201
        # From a browser page (an Origin) the type is not excused, allowed origin or not.
        paged = {**plain, "X-Api-Key": served.token, "Origin": CHAT_UI}
        assert (
            await bare.post("/v1/conversations", content=body, headers=paged)
        ).status_code == 422
        # A cookie is what a cross-site form can send: never with text/plain.
        with_csrf = await _csrf(bare, await _log_in(served, bare))
        forged = await bare.post("/v1/conversations", content=body, headers={**plain, **with_csrf})
        assert forged.status_code == 422
        titles = [c["title"] for c in (await served.client.get("/v1/conversations")).json()]
        assert titles == ["plain", "plain"]


async def _raw(served: Served, request: bytes) -> bytes:
    """Send `request` as bytes (httpx would fix what the attack depends on)."""
    port = int(served.url.rsplit(":", 1)[1].split("/")[0])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    answer = await reader.read(65536)
    writer.close()
    await writer.wait_closed()
    return answer


async def test_two_host_headers_are_refused(served: Served) -> None:
    # The guard read the last Host (loopback) while the app built URLs from the first.
    for first, second in (("evil.example", "127.0.0.1"), ("127.0.0.1", "127.0.0.1")):
        answer = await _raw(
            served,
            f"GET /login?code=x HTTP/1.1\r\nHost: {first}\r\nHost: {second}\r\n"
            "Connection: close\r\n\r\n".encode(),
        )
        assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
        assert b"one Host header" in answer
        assert b"evil.example/login" not in answer


async def test_an_absolute_target_naming_another_host_is_refused() -> None:
    """`GET http://evil.example/...`: h11 hands the whole target on as the path.

    (uvicorn's httptools parser keeps only the path; `ducklm serve`'s keeps the whole
    target in `raw_path`, `server/httptools_door.py`. On a real server:
    tests/api/test_http_door.py.) The one that names the Host's own host is served by
    its path.
    """
    reached: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    guard = GuardMiddleware(app, max_body_bytes=1024)
    statuses = []
    for target in (b"http://evil.example/health", b"http://127.0.0.1/health"):
        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any], sent: list[dict[str, Any]] = sent) -> None:
            sent.append(message)

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        scope = {
            "type": "http",
            "method": "GET",
            "path": target.decode(),
            "raw_path": target,
            "headers": [(b"host", b"127.0.0.1"), (b"content-length", b"0")],
            "scheme": "http",
        }
        await guard(scope, receive, send)
        statuses.append(sent[0]["status"])
    assert statuses == [400, 200]
    assert reached == ["/health"]
