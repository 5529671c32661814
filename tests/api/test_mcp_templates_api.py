"""An MCP server's resource templates and its completion of prompt arguments, over real HTTP.

The npm `@modelcontextprotocol/server-everything` (trusted, so its reads run unasked):
its URI templates are in `GET /v1/mcp/resources` (marked `template`) and in what
`<server>__list_resources` tells the model, which reads a filled one with
`<server>__read_resource`; `POST /v1/mcp/prompts/{server}/{name}/complete` asks the
server (`completion/complete`) for an argument's values, knowing those given before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from ducklm.config.settings import Settings
from tests.support.mcp_servers import npm_server, write_config
from tests.support.scripted_llm import ScriptedLLM, call, reply
from tests.support.server import Served

pytestmark = pytest.mark.slow
TEMPLATE = "demo://resource/dynamic/text/{resourceId}"
COMPLETE = "/v1/mcp/prompts/ev/completable-prompt/complete"


@pytest.fixture
def server_settings(settings: Settings, tmp_path: Path) -> Settings:
    config = write_config(
        tmp_path / "mcp.json", ev=npm_server("server-everything", trust="trusted")
    )
    return settings.model_copy(update={"mcp_config": config, "mcp_tool_tokens": 100_000})


@pytest.fixture
async def client(served: Served) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=served.url, headers=served.headers, timeout=120) as c:
        yield c


async def test_templates_are_listed_and_read_and_prompt_arguments_completed(
    client: httpx.AsyncClient, llm: ScriptedLLM
) -> None:
    listed = (await client.get("/v1/mcp/resources")).json()
    (template,) = [r for r in listed["resources"] if r["uri"] == TEMPLATE]
    assert template["template"] is True and template["mention"] == f"@ev:{TEMPLATE}"
    assert not any(r["template"] for r in listed["resources"] if "{" not in r["uri"])

    departments = await client.post(COMPLETE, json={"argument": "department", "value": "S"})
    assert departments.json() == {"values": ["Sales", "Support"], "has_more": False}
    # The second argument's values depend on the first, which the server is told.
    given = {"argument": "name", "value": "", "arguments": {"department": "Engineering"}}
    assert (await client.post(COMPLETE, json=given)).json()["values"] == ["Alice", "Bob", "Charlie"]
    unknown = await client.post(COMPLETE, json={"argument": "city", "value": ""})
    assert unknown.status_code == 422
    assert unknown.json()["detail"] == "/ev:completable-prompt has no argument 'city'"

    llm.script(
        reply(tool_calls=[call("ev__list_resources")]),
        reply(tool_calls=[call("ev__read_resource", uri="demo://resource/dynamic/text/3")]),
        reply("Resource 3 is plain text."),
    )
    body = {"message": "read the third dynamic text resource", "critic": False, "memory": False}
    done = (await client.post("/v1/chat", json=body)).json()
    assert done["status"] == "completed", done
    told, read = [e for e in done["events"] if e["type"] == "tool_call_finished"]
    assert f"- template {TEMPLATE} Dynamic Text Resource (text/plain)" in told["output"]
    assert read["status"] == "success" and "Resource 3: This is a plaintext" in read["output"]
