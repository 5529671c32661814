"""MCP tool selection with the real npm servers' tool lists and the in-process MiniLM.

The issue's case: with the everything, filesystem and memory servers (36 tools) and a
1,500-token tool budget, "remember in the knowledge graph that Ana lives in Porto" must
offer `memory__create_entities`. The lists are taken live from the servers, and the
captured fixture the unit tests read is checked against them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from langchain_core.tools import BaseTool

from ducklm.config.settings import Settings
from ducklm.mcp.selection import choose_tools, schema_tokens
from ducklm.memory.embeddings import LocalEmbedder
from tests.support.mcp_servers import npm_server
from tests.support.mcp_tool_lists import PACKAGES, as_tools, capture_tool_lists, load_tool_lists

ISSUE_REQUEST = "remember in the knowledge graph that Ana lives in Porto"


def _names(tools: list[BaseTool]) -> list[str]:
    return [t.name for t in tools]


async def test_the_issue_request_offers_create_entities_with_the_embedder(
    settings: Settings, tmp_path: Path
) -> None:
    for package in PACKAGES.values():
        # Skips (fails under CI) when the servers are not installed.
        await asyncio.to_thread(npm_server, package)
    live = as_tools(await capture_tool_lists(tmp_path))
    # The unit tests' fixture is what the servers list now (refresh it with the bench).
    captured = await asyncio.to_thread(load_tool_lists)
    assert _names(live) == _names(as_tools(captured))

    embed = LocalEmbedder(settings.embeddings_model).embed
    chosen = await choose_tools(live, ISSUE_REQUEST, budget=1500, embed=embed)
    assert "memory__create_entities" in _names(chosen)
    assert len(chosen) < len(live) and sum(schema_tokens(t) for t in chosen) <= 1500
    # Another request gets other tools from the same list.
    chosen = await choose_tools(live, "what's inside ~/Downloads?", budget=1500, embed=embed)
    assert "filesystem__list_directory" in _names(chosen)
    assert "memory__create_entities" not in _names(chosen)
