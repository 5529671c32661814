"""`/v1/mcp/prompts`, `/v1/mcp/resources` and `/v1/chat` with MCP parts, over real HTTP.

The server is the npm `@modelcontextprotocol/server-everything` over stdio.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from ducklm.config.settings import Settings
from tests.support.mcp_servers import npm_server, write_config
from tests.support.scripted_llm import ScriptedLLM, reply
from tests.support.server import Served

pytestmark = pytest.mark.slow


@pytest.fixture
def server_settings(settings: Settings, tmp_path: Path) -> Settings:
    config = write_config(tmp_path / "mcp.json", ev=npm_server("server-everything"))
    return settings.model_copy(update={"mcp_config": config})


@pytest.fixture
async def client(served: Served) -> Any:
    async with httpx.AsyncClient(base_url=served.url, headers=served.headers, timeout=120) as c:
        yield c


async def test_prompts_are_listed_with_their_arguments(client: httpx.AsyncClient) -> None:
    body = (await client.get("/v1/mcp/prompts")).json()
    assert body["problems"] == []
    by_name = {p["name"]: p for p in body["prompts"]}
    args = by_name["args-prompt"]
    assert args["command"] == "/ev:args-prompt"
    assert [(a["name"], a["required"]) for a in args["arguments"]] == [
        ("city", True),
        ("state", False),
    ]


async def test_a_prompt_expands_and_a_missing_argument_is_named(
    client: httpx.AsyncClient,
) -> None:
    done = await client.post(
        "/v1/mcp/prompts/ev/args-prompt", json={"arguments": {"city": "Porto"}}
    )
    assert done.status_code == 200, done.text
    (message,) = done.json()["messages"]
    assert message["role"] == "user"
    assert "Porto" in message["text"]

    missing = await client.post("/v1/mcp/prompts/ev/args-prompt", json={"arguments": {}})
    assert missing.status_code == 422
    assert missing.json()["detail"] == "/ev:args-prompt needs the argument 'city'"
    unknown = await client.post("/v1/mcp/prompts/ev/nope", json={})
    assert unknown.status_code == 422
    assert "has no prompt 'nope'" in unknown.json()["detail"]
    nobody = await client.post("/v1/mcp/prompts/nobody/x", json={})
    assert nobody.status_code == 404


async def test_chat_runs_a_prompt_and_attaches_a_resource(
    client: httpx.AsyncClient, llm: ScriptedLLM
) -> None:
    resources = (await client.get("/v1/mcp/resources")).json()["resources"]
    doc = next(r for r in resources if r["uri"].endswith("architecture.md"))
    assert doc["mention"] == f"@ev:{doc['uri']}"

    # The attached document makes a long request, which the router may ask its role about.
    llm.set_default(reply("It is about Porto."))
    body = {"message": f"/ev:args-prompt Porto {doc['mention']}", "critic": False, "memory": False}
    done = await client.post("/v1/chat", json=body)
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "completed"
    events = done.json()["events"]
    (sent,) = [e for e in events if e["type"] == "message_sent"]
    assert sent["prompt"] == "/ev:args-prompt"
    assert sent["attachments"][0]["uri"] == doc["uri"]
    assert any(e["type"] == "conversation_untrusted" for e in events)
    user = [m for m in llm.requests[-1]["messages"] if m["role"] == "user"][-1]["content"]
    assert "Porto" in user and f"attached by the person: {doc['mention']}" in user

    refused = await client.post("/v1/chat", json={"message": "/ev:args-prompt", "memory": False})
    assert refused.status_code == 422
    assert refused.json()["detail"] == "/ev:args-prompt needs the argument 'city'"
