"""agent-chat-ui's own requests, byte for byte, against DuckLM's real server.

A driver sends exactly what the UI sends, as recorded from agent-chat-ui's main branch in
Chromium (connect, a message, a tool call that needs approval, approve, reject, reload, the
thread list; the door they meet is docs/api.md's "Agent Protocol"), both ways the UI
connects: from the page (browser direct: `Origin`, a CORS preflight before every request,
`X-Api-Key`) and through its Next.js `/api` passthrough (no `Origin`, `X-Api-Key`, the
JSON body sent as `text/plain;charset=UTF-8`).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ducklm.config.settings import Settings
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served

UI_ORIGIN = "http://127.0.0.1:3100"
ASSISTANT = "agent"  # the UI's default assistant id
STREAM_MODES = ["values", "messages-tuple", "custom"]
OVERWRITE = call("file_write", path="a.txt", content="new", overwrite=True)


class ChatUI:
    """Sends requests the way agent-chat-ui does, on one of its two routes."""

    def __init__(self, client: httpx.AsyncClient, token: str, *, browser: bool) -> None:
        self.client = client
        self.token = token
        self.browser = browser

    async def send(self, method: str, path: str, body: Any = None) -> httpx.Response:
        """One call; in the browser, after its preflight (checked)."""
        await self._preflight(method, path)
        response = await self.client.request(
            method, path, content=self._body(body), headers=self._headers(body)
        )
        self._check_cors(response)
        return response

    async def stream(self, thread_id: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
        """`POST /threads/{id}/runs/stream`: every `(event, data)` until the stream ends."""
        path = f"/threads/{thread_id}/runs/stream"
        await self._preflight("POST", path)
        events: list[tuple[str, Any]] = []
        request = self.client.stream(
            "POST", path, content=self._body(body), headers=self._headers(body)
        )
        async with request as response:
            self._check_cors(response)
            if response.status_code >= 400:
                await response.aread()
                response.raise_for_status()
            name = ""
            async for line in response.aiter_lines():
                if line.startswith("event:"):
                    name = line.removeprefix("event:").strip()
                elif line.startswith("data:"):
                    events.append((name, json.loads(line.removeprefix("data:"))))
        return events

    async def _preflight(self, method: str, path: str) -> None:
        if not self.browser:
            return
        asked = {
            "Origin": UI_ORIGIN,
            "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": "content-type,x-api-key",
        }
        answer = await self.client.options(path, headers=asked)
        assert answer.status_code == 204, (path, answer.text)
        assert answer.headers["access-control-allow-origin"] == UI_ORIGIN
        allowed = answer.headers["access-control-allow-headers"].replace(" ", "").split(",")
        assert {"content-type", "x-api-key", "authorization"} <= set(allowed)
        assert method in answer.headers["access-control-allow-methods"]
        assert "Origin" in answer.headers["vary"]

    def _headers(self, body: Any) -> dict[str, str]:
        headers = {"X-Api-Key": self.token}
        if self.browser:
            headers["Origin"] = UI_ORIGIN
            if body is not None:
                headers["Content-Type"] = "application/json"
        elif body is not None:
            headers["Content-Type"] = "text/plain;charset=UTF-8"  # what the passthrough sends
        return headers

    def _body(self, body: Any) -> bytes | None:
        return None if body is None else json.dumps(body).encode()

    def _check_cors(self, response: httpx.Response) -> None:
        if self.browser:
            assert response.headers["access-control-allow-origin"] == UI_ORIGIN
            assert "Origin" in response.headers["vary"]
        else:
            assert "access-control-allow-origin" not in response.headers


@pytest.fixture
def server_settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"allowed_origins": [UI_ORIGIN]})


@pytest.fixture(params=["browser", "passthrough"])
async def ui(
    request: pytest.FixtureRequest, served: Served, llm: ScriptedLLM
) -> AsyncIterator[ChatUI]:
    # The reviewers run behind each answer, when they will: their replies must not be
    # the ones queued for the session's next turn.
    llm.set_schema_replies(
        {
            "Critique": reply(json.dumps({"score": 0.8, "summary": "fine"})),
            "MemoryProposal": reply(json.dumps({"should_store": False})),
        }
    )
    client = await asyncio.to_thread(httpx.AsyncClient, base_url=served.url, timeout=30)
    async with client:
        yield ChatUI(client, served.token, browser=request.param == "browser")


@pytest.fixture
async def existing(workspace: Path) -> Path:
    target = workspace / "a.txt"
    await asyncio.to_thread(target.write_text, "old")
    return target


def message(text: str) -> dict[str, Any]:
    """The run body the UI sends for a typed message."""
    human = {"id": str(uuid.uuid4()), "type": "human", "content": [{"type": "text", "text": text}]}
    return {
        "input": {"messages": [human]},
        "stream_mode": STREAM_MODES,
        "stream_subgraphs": True,
        "stream_resumable": True,
        "assistant_id": ASSISTANT,
        "on_disconnect": "continue",
    }


def decision(checkpoint_id: str, answer: dict[str, Any]) -> dict[str, Any]:
    """The run body the UI sends for an approval card's button."""
    return {
        "input": {},
        "command": {"resume": {"decisions": [answer]}},
        "stream_mode": ["messages-tuple", "values", "custom"],
        "stream_resumable": False,
        "assistant_id": ASSISTANT,
        "checkpoint": {"checkpoint_id": checkpoint_id, "checkpoint_ns": ""},
        "on_disconnect": "cancel",
    }


def last_values(events: list[tuple[str, Any]]) -> dict[str, Any]:
    values = [data for name, data in events if name == "values"]
    assert values, events
    last: dict[str, Any] = values[-1]
    return last


async def connect(ui: ChatUI) -> list[dict[str, Any]]:
    """What the UI does when it opens: check the server, list the threads."""
    info = await ui.send("GET", "/info")
    assert info.status_code == 200, info.text
    search = {"metadata": {"graph_id": ASSISTANT}, "limit": 100, "offset": 0}
    found = await ui.send("POST", "/threads/search", search)
    assert found.status_code == 200, found.text
    threads: list[dict[str, Any]] = found.json()
    return threads


async def history(ui: ChatUI, thread_id: str) -> list[dict[str, Any]]:
    response = await ui.send("POST", f"/threads/{thread_id}/history", {"limit": 10})
    assert response.status_code == 200, response.text
    states: list[dict[str, Any]] = response.json()
    return states


async def ask_for_overwrite(ui: ChatUI, llm: ScriptedLLM, thread_id: str) -> dict[str, Any]:
    """A message whose tool call waits for approval; returns the interrupt."""
    llm.script(reply(tool_calls=[OVERWRITE]))
    events = await ui.stream(thread_id, message("overwrite a.txt"))
    [interrupt] = last_values(events)["__interrupt__"]
    assert interrupt["value"]["action_requests"][0]["name"] == "file_write"
    return dict(interrupt)


async def test_a_whole_session(ui: ChatUI, llm: ScriptedLLM, existing: Path) -> None:
    assert await connect(ui) == []
    created = await ui.send("POST", "/threads", {"metadata": {}})
    assert created.status_code == 200, created.text
    thread_id = created.json()["thread_id"]

    llm.script(reply("Hello there, duck."))
    events = await ui.stream(thread_id, message("hello there"))
    assert events[0][0] == "metadata"
    assert not [data for name, data in events if name == "error"]
    answer = last_values(events)["messages"][-1]
    assert (answer["type"], answer["content"]) == ("ai", "Hello there, duck.")
    assert any(name == "messages" for name, _ in events)  # tokens as messages-tuple
    assert (await history(ui, thread_id))[0]["values"]["messages"][-1]["id"] == answer["id"]

    # A tool call that needs approval, approved from the card.
    await ask_for_overwrite(ui, llm, thread_id)
    latest = (await history(ui, thread_id))[0]
    assert latest["tasks"][0]["interrupts"], "the UI draws its card from the history"
    llm.script(reply("Overwritten."))
    approve = decision(latest["checkpoint"]["checkpoint_id"], {"type": "approve"})
    approved = await ui.stream(thread_id, approve)
    assert last_values(approved)["messages"][-1]["content"] == "Overwritten."
    assert await asyncio.to_thread(existing.read_text) == "new"

    # Another, rejected.
    await asyncio.to_thread(existing.write_text, "old")
    await ask_for_overwrite(ui, llm, thread_id)
    latest = (await history(ui, thread_id))[0]
    llm.script(reply("Left alone."))
    reject = decision(latest["checkpoint"]["checkpoint_id"], {"type": "reject", "message": "no"})
    rejected = await ui.stream(thread_id, reject)
    assert last_values(rejected)["messages"][-1]["content"] == "Left alone."
    assert await asyncio.to_thread(existing.read_text) == "old"

    # Reload: the thread list and the thread's messages come back.
    [listed] = await connect(ui)
    assert listed["thread_id"] == thread_id
    assert listed["status"] == "idle"
    kinds = [m["type"] for m in (await history(ui, thread_id))[0]["values"]["messages"]]
    assert kinds.count("human") == 3
    assert kinds.count("tool") == 2


async def test_typing_on_past_a_pending_approval_is_refused(
    ui: ChatUI, llm: ScriptedLLM, existing: Path
) -> None:
    thread_id = (await ui.send("POST", "/threads", {"metadata": {}})).json()["thread_id"]
    interrupt = await ask_for_overwrite(ui, llm, thread_id)
    state = (await history(ui, thread_id))[0]
    [pending] = state["values"]["messages"][-1]["tool_calls"]
    # The UI first "answers" the pending call itself, then sends the new message.
    body = message("never mind, say hi")
    synthetic = {
        "type": "tool",
        "tool_call_id": pending["id"],
        "name": pending["name"],
        "content": "Successfully handled tool call.",
    }
    body["input"]["messages"].insert(0, synthetic)
    asked = len(llm.requests)
    with pytest.raises(httpx.HTTPStatusError) as refused:
        await ui.stream(thread_id, body)
    assert refused.value.response.status_code == 409
    detail = refused.value.response.json()["detail"]
    assert "waits for an answer" in detail and "file_write" in detail
    # Nothing moved: the question still waits, the file is untouched, no model call.
    again = (await history(ui, thread_id))[0]
    assert again["interrupts"][0]["id"] == interrupt["id"]
    assert await asyncio.to_thread(existing.read_text) == "old"
    assert len(llm.requests) == asked


# The agent-chat-ui that npm's `create-agent-chat-app` installs (0.1.x, langgraph-sdk
# 0.0.x) draws its approval card from the earlier agent-inbox keys and answers with a
# list of responses; these are its bodies as recorded in Chromium.
INBOX_CONFIG = dict.fromkeys(["allow_accept", "allow_edit", "allow_respond", "allow_ignore"], True)


def inbox_answer(checkpoint_id: str, response: dict[str, Any]) -> dict[str, Any]:
    """The run body the earlier UI sends for its card's Accept / Ignore / Send Response."""
    return {
        "input": {},
        "command": {"resume": [response]},
        "stream_mode": ["messages-tuple", "values", "custom"],
        "assistant_id": ASSISTANT,
        "checkpoint": {"checkpoint_id": checkpoint_id, "checkpoint_ns": ""},
        "on_disconnect": "cancel",
    }


ACCEPTED = {"type": "accept", "args": {"action": "file_write", "args": OVERWRITE.args}}


@pytest.mark.parametrize(
    ("response", "written"),
    [
        (ACCEPTED, "new"),
        ({"type": "ignore", "args": None}, "old"),
        ({"type": "response", "args": "not now, thanks"}, "old"),
    ],
    ids=["accept", "ignore", "response"],
)
async def test_the_earlier_ui_answers_from_its_agent_inbox_card(
    ui: ChatUI, llm: ScriptedLLM, existing: Path, response: dict[str, Any], written: str
) -> None:
    thread_id = (await ui.send("POST", "/threads", {"metadata": {}})).json()["thread_id"]
    streamed = await ask_for_overwrite(ui, llm, thread_id)
    latest = (await history(ui, thread_id))[0]
    for value in (streamed["value"], latest["tasks"][0]["interrupts"][0]["value"]):
        assert value["action_request"] == {"action": "file_write", "args": OVERWRITE.args}
        assert value["config"] == INBOX_CONFIG
        assert value["action_requests"][0]["name"] == "file_write"  # the HITL keys stay

    llm.script(reply("Done."))
    answer = inbox_answer(latest["checkpoint"]["checkpoint_id"], response)
    events = await ui.stream(thread_id, answer)
    assert not [data for name, data in events if name == "error"]
    messages = last_values(events)["messages"]
    assert messages[-1]["content"] == "Done."
    assert await asyncio.to_thread(existing.read_text) == written
    if response["type"] == "response":  # the person's words reach the model as the reason
        assert "not now, thanks" in messages[-2]["content"]
