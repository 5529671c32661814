"""Host, Origin, token and body-size checks: how a localhost agent is attacked."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from ducklm.server.security import is_loopback
from ducklm.server.token import load_token, same_token
from ducklm.settings import Settings
from tests.support.server import Served, serve


async def test_a_foreign_host_is_refused_everywhere(served: Served) -> None:
    for path in ("/", "/health", "/v1/status", "/threads/search"):
        response = await served.client.get(path, headers={"Host": "evil.example:8000"})
        assert response.status_code == 400, path
        assert "evil.example" in response.json()["detail"]
    ok = await served.client.get("/health", headers={"Host": "localhost:1234"})
    assert ok.status_code == 200


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


async def test_the_token_is_required_and_checked(served: Served) -> None:
    bare = await asyncio.to_thread(httpx.AsyncClient, base_url=served.url)
    async with bare:
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


async def test_the_page_carries_the_token_and_forbids_framing(served: Served) -> None:
    page = await served.client.get("/", headers={"Authorization": ""})
    assert page.status_code == 200
    assert f'content="{served.token}"' in page.text
    assert page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-store"


async def test_oversized_bodies_are_413(settings: Settings) -> None:
    small = settings.model_copy(update={"max_body_bytes": 2048})
    async with serve(small) as served:
        big = {"message": "x" * 4096}
        response = await served.client.post("/v1/chat", json=big)
        assert response.status_code == 413
        assert "2048" in response.json()["detail"]

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


def test_token_comparison_and_loopback_names() -> None:
    assert same_token("abc", "abc")
    assert not same_token("abd", "abc")
    assert not same_token(None, "abc")
    assert not same_token("", "abc")
    for host in ("127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "192.168.1.2", "example.com", "::"):
        assert not is_loopback(host), host


async def test_only_the_web_chat_assets_are_served(served: Served) -> None:
    assert (await served.client.get("/ui/app.js")).status_code == 200
    for path in ("/ui/__init__.py", "/ui/README.md", "/ui/../server/app.py"):
        assert (await served.client.get(path)).status_code == 404, path


@pytest.mark.parametrize("path", ["/docs", "/openapi.json"])
async def test_openapi_docs_are_served(served: Served, path: str) -> None:
    assert (await served.client.get(path)).status_code == 200
