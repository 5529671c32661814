"""Browser sessions outlive a restart: kept 0600 as digests, expiring, revocable, ended by logout.

Two app instances over the same data dir stand for a `ducklm serve` and its restart (each
on its own free port, so each has its own cookie name: a browser sends the cookie of
the port it reconnects to).
"""

from __future__ import annotations

import asyncio
import json
import time
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import httpx

from ducklm.config.settings import Settings
from ducklm.runtime.server_file import write_server_file
from ducklm.server.session import CSRF_HEADER
from tests.support.cli import cli_env, run_cli
from tests.support.server import Served, serve


async def _bare(served: Served) -> httpx.AsyncClient:
    """A client without the token, like a browser (cookies are sent by hand)."""
    return await asyncio.to_thread(httpx.AsyncClient, base_url=served.url, timeout=30)


async def _log_in(served: Served) -> str:
    """Open a fresh login URL; the session cookie's value."""
    async with await _bare(served) as bare:
        response = await bare.get(await served.login_url())
    assert response.status_code == 303
    return SimpleCookie(response.headers["set-cookie"])[served.cookie_name].value


def _cookie(served: Served, value: str) -> dict[str, str]:
    return {"Cookie": f"{served.cookie_name}={value}"}


async def _status(served: Served, value: str) -> int:
    """What `GET /v1/conversations` answers the browser holding session `value`."""
    async with await _bare(served) as bare:
        response = await bare.get("/v1/conversations", headers=_cookie(served, value))
    return response.status_code


async def _read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(await asyncio.to_thread(path.read_text))
    return data


async def test_a_session_survives_a_restart_and_the_file_holds_no_secret(
    settings: Settings,
) -> None:
    async with serve(settings) as first:
        value = await _log_in(first)
        async with await _bare(first) as bare:
            csrf = (await bare.get("/session", headers=_cookie(first, value))).json()["csrf"]
        assert await _status(first, value) == 200
    path = settings.files.browser_sessions
    mode = (await asyncio.to_thread(path.stat)).st_mode & 0o777
    assert mode == 0o600
    text = await asyncio.to_thread(path.read_text)
    assert value not in text
    assert csrf not in text
    (stored,) = (await _read(path))["sessions"].values()
    assert stored["expires"] > time.time()

    async with serve(settings) as second:
        assert await _status(second, value) == 200
        async with await _bare(second) as bare:
            cookie = _cookie(second, value)
            again = (await bare.get("/session", headers=cookie)).json()["csrf"]
            assert again == csrf  # the page's CSRF value is the same after the restart
            made = await bare.post("/v1/conversations", json={}, headers=cookie)
            assert made.status_code == 403  # still needs the CSRF header
            made = await bare.post(
                "/v1/conversations", json={}, headers={CSRF_HEADER: again, **cookie}
            )
            assert made.status_code == 201
            page = await bare.get("/", headers=cookie)
            assert "/ui/app.js" in page.text
        assert await _status(second, "a-made-up-session-id") == 401


async def test_a_session_that_expired_while_stopped_is_not_taken_back(
    settings: Settings,
) -> None:
    async with serve(settings) as first:
        old = await _log_in(first)
        kept = await _log_in(first)
    path = settings.files.browser_sessions
    data = await _read(path)
    assert len(data["sessions"]) == 2
    # The older session (written first) ended an hour ago, as if the server was off
    # across its end.
    first_key = next(iter(data["sessions"]))
    data["sessions"][first_key]["expires"] = time.time() - 3600
    await asyncio.to_thread(path.write_text, json.dumps(data))
    async with serve(settings) as second:
        assert await _status(second, old) == 401
        assert await _status(second, kept) == 200
        await _log_in(second)  # a write drops the ended session from the file
    assert first_key not in (await _read(path))["sessions"]


async def test_logout_is_kept_across_a_restart(settings: Settings) -> None:
    async with serve(settings) as first:
        value = await _log_in(first)
        other = await _log_in(first)
        async with await _bare(first) as bare:
            cookie = _cookie(first, value)
            csrf = (await bare.get("/session", headers=cookie)).json()["csrf"]
            refused = await bare.post("/logout", headers=cookie)
            assert refused.status_code == 403  # no CSRF header: not logged out
            assert await _status(first, value) == 200
            out = await bare.post("/logout", headers={CSRF_HEADER: csrf, **cookie})
            assert out.status_code == 204
        assert await _status(first, value) == 401
    async with serve(settings) as second:
        assert await _status(second, value) == 401
        assert await _status(second, other) == 200  # only that browser logged out


async def test_revoke_all_through_the_api_is_bearer_only_and_kept(settings: Settings) -> None:
    async with serve(settings) as first:
        values = [await _log_in(first), await _log_in(first)]
        async with await _bare(first) as bare:
            cookie = _cookie(first, values[0])
            csrf = (await bare.get("/session", headers=cookie)).json()["csrf"]
            as_browser = await bare.delete(
                "/v1/browser-sessions", headers={CSRF_HEADER: csrf, **cookie}
            )
            assert as_browser.status_code == 401  # a browser session cannot do it
        revoked = await first.client.delete("/v1/browser-sessions")
        assert revoked.status_code == 200
        assert revoked.json() == {"revoked": 2}
        for value in values:
            assert await _status(first, value) == 401
    assert (await _read(settings.files.browser_sessions))["sessions"] == {}
    async with serve(settings) as second:
        for value in values:
            assert await _status(second, value) == 401


async def test_ducklm_open_revoke_all_without_a_server(settings: Settings, tmp_path: Path) -> None:
    async with serve(settings) as first:
        value = await _log_in(first)
    env = {**cli_env(settings), "DUCK_API_TOKEN": first.token}
    done = await run_cli("open", "--revoke-all", env=env, cwd=tmp_path)
    assert done.code == 0, done.stderr
    assert "logged out 1 browser session" in done.stdout
    async with serve(settings) as second:
        assert await _status(second, value) == 401


async def test_ducklm_open_thread_lands_on_the_conversation(
    settings: Settings, tmp_path: Path
) -> None:
    async with serve(settings) as served:
        thread = (await served.client.post("/v1/conversations", json={})).json()["id"]
        await write_server_file(settings.data_dir, served.url)
        env = {**cli_env(settings), "DUCK_API_TOKEN": served.token}
        opened = await run_cli("open", thread, "--no-browser", env=env, cwd=tmp_path)
        assert opened.code == 0, opened.stderr
        url = opened.stdout.strip()
        assert url.startswith(f"{served.url}/login?code=")
        assert url.endswith(f"&thread={thread}")
        async with await _bare(served) as bare:
            landed = await bare.get(url)
            assert landed.status_code == 303
            assert landed.headers["location"] == f"/#/c/{thread}"
            again = await bare.get(url)  # the code is still used once only
            assert again.status_code == 403

        unknown = await run_cli("open", "no-such-thread", "--no-browser", env=env, cwd=tmp_path)
        assert unknown.code == 1
        assert "no conversation with id 'no-such-thread'" in unknown.stderr
        assert unknown.stdout == ""

        value = await _log_in(served)
        revoked = await run_cli("open", "--revoke-all", env=env, cwd=tmp_path)
        assert revoked.code == 0, revoked.stderr
        assert "logged out 2 browser session(s)" in revoked.stdout  # this one and the thread's
        assert await _status(served, value) == 401
