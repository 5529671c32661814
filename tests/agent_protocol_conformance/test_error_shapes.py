"""Errors over plain HTTP: 404, 409 and 422 answers carry `{"detail": ...}` and no traceback."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient

from .server_under_test import Target
from .streams import hello, new_thread

UNKNOWN = "00000000-0000-4000-8000-000000000000"


def _assert_error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert isinstance(body, dict) and "detail" in body, body
    assert "Traceback" not in response.text
    return body


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/threads/{unknown}"),
        ("PATCH", "/threads/{unknown}"),
        ("DELETE", "/threads/{unknown}"),
        ("GET", "/threads/{unknown}/state"),
        ("POST", "/threads/{unknown}/history"),
        ("POST", "/threads/{unknown}/runs/wait"),
        ("POST", "/threads/{unknown}/runs/stream"),
    ],
)
async def test_unknown_thread_is_404(
    http: httpx.AsyncClient, target: Target, method: str, path: str
) -> None:
    body: dict[str, Any] = {"metadata": {}}
    if "/runs/" in path:
        body = {"assistant_id": target.assistant, "input": hello()}
    response = await http.request(method, path.format(unknown=UNKNOWN), json=body)
    detail = _assert_error(response, 404)["detail"]
    assert isinstance(detail, str) and detail


async def test_run_with_an_unknown_assistant_is_404(
    http: httpx.AsyncClient, client: LangGraphClient
) -> None:
    thread_id = await new_thread(client)
    body = {"assistant_id": str(uuid.uuid4()), "input": hello()}
    _assert_error(await http.post(f"/threads/{thread_id}/runs/wait", json=body), 404)
    _assert_error(await http.post("/runs/wait", json=body), 404)


async def test_a_thread_id_taken_is_409(http: httpx.AsyncClient) -> None:
    thread_id = str(uuid.uuid4())
    assert (await http.post("/threads", json={"thread_id": thread_id})).status_code == 200
    _assert_error(await http.post("/threads", json={"thread_id": thread_id}), 409)


@pytest.mark.parametrize(
    "body",
    [
        {"input": {"messages": []}},  # no assistant_id
        {"assistant_id": "{assistant}", "input": {}, "stream_mode": "no-such-mode"},
        {"assistant_id": "{assistant}", "input": {}, "on_disconnect": "explode"},
        {"assistant_id": "{assistant}", "input": {}, "multitask_strategy": "shout"},
    ],
    ids=["no-assistant", "bad-stream-mode", "bad-on-disconnect", "bad-multitask-strategy"],
)
async def test_a_malformed_run_is_422(
    http: httpx.AsyncClient, client: LangGraphClient, target: Target, body: dict[str, Any]
) -> None:
    thread_id = await new_thread(client)
    sent = {k: (target.assistant if v == "{assistant}" else v) for k, v in body.items()}
    for path in (f"/threads/{thread_id}/runs/stream", f"/threads/{thread_id}/runs/wait"):
        _assert_error(await http.post(path, json=sent), 422)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/threads", {"thread_id": "not-a-uuid"}),
        ("/threads", {"metadata": "not an object"}),
        ("/threads/search", {"limit": "ten"}),
        ("/assistants/search", {"limit": "ten"}),
    ],
)
async def test_a_malformed_body_is_422(
    http: httpx.AsyncClient, path: str, body: dict[str, Any]
) -> None:
    _assert_error(await http.post(path, json=body), 422)


async def test_a_body_that_is_not_json_is_4xx(http: httpx.AsyncClient) -> None:
    response = await http.post(
        "/threads/search", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert 400 <= response.status_code < 500
    assert "Traceback" not in response.text
