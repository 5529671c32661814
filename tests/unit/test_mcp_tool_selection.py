"""Which MCP tools a turn offers under a budget, on the npm servers' real tool lists.

The lists are the everything, filesystem and memory servers' `tools/list`, captured into
tests/support/data/mcp_npm_tools.json (`scripts/bench/mcp_tool_selection.py
--write-fixture`), so no Node starts here. The embedder-backed ranking is tested in
tests/integration/test_mcp_tool_budget.py.
"""

from __future__ import annotations

import pytest
from langchain_core.tools import BaseTool

from ducklm.mcp.selection import choose_tools, names_tool, rank_tools, schema_tokens
from ducklm.mcp.tools import model_schema
from tests.support.mcp_tool_lists import as_tools, load_tool_lists

ISSUE_REQUEST = "remember in the knowledge graph that Ana lives in Porto"


@pytest.fixture(scope="module")
def tools() -> list[BaseTool]:
    return as_tools(load_tool_lists())


def names(chosen: list[BaseTool]) -> list[str]:
    return [t.name for t in chosen]


def test_the_fixture_holds_the_36_tools_of_the_issue(tools: list[BaseTool]) -> None:
    assert len(tools) == 36
    assert sum(schema_tokens(t) for t in tools) > 1500  # selection has to choose


async def test_the_issue_request_offers_create_entities_under_1500_tokens(
    tools: list[BaseTool],
) -> None:
    # The issue: at 1,500 tokens 4-5 of the 36 tools were offered, and this request did
    # not get memory__create_entities. Keywords alone (no embedder: it is loading) do.
    chosen = await choose_tools(tools, ISSUE_REQUEST, budget=1500, embed=None)
    assert "memory__create_entities" in names(chosen)
    assert sum(schema_tokens(t) for t in chosen) <= 1500
    memory_only = [t for t in tools if t.name.startswith("memory__")]
    chosen = await choose_tools(memory_only, ISSUE_REQUEST, budget=1500, embed=None)
    assert "memory__create_entities" in names(chosen)


async def test_everything_is_offered_in_order_when_it_fits(tools: list[BaseTool]) -> None:
    chosen = await choose_tools(tools, ISSUE_REQUEST, budget=100_000, embed=None)
    assert names(chosen) == names(tools)


async def test_a_tool_named_in_the_request_comes_first(tools: list[BaseTool]) -> None:
    # Nothing in these words is near get_file_info but its name.
    order = await rank_tools(tools, "run get_file_info on the duck", embed=None)
    assert tools[order[0]].name == "filesystem__get_file_info"
    chosen = await choose_tools(tools, "call get-sum please", budget=300, embed=None)
    assert names(chosen)[0] == "everything__get-sum"


@pytest.mark.parametrize(
    ("request_text", "tool", "named"),
    [
        ("call create_directory for logs", "filesystem__create_directory", True),
        ("get sum of 3 and 4", "everything__get-sum", True),
        ("use everything__echo", "everything__echo", True),
        ("Echo the message", "everything__echo", False),  # a one-word name is a word
        ("recreate_directory", "filesystem__create_directory", False),
        ("read the file", "filesystem__read_file", False),
    ],
)
def test_names_tool(request_text: str, tool: str, named: bool) -> None:
    assert names_tool(request_text, tool) is named


async def test_a_broken_embedder_leaves_the_keywords_to_rank(tools: list[BaseTool]) -> None:
    async def broken(texts: list[str]) -> list[list[float]]:
        raise RuntimeError("the model file is gone")

    chosen = await choose_tools(tools, ISSUE_REQUEST, budget=1500, embed=broken)
    assert "memory__create_entities" in names(chosen)


def test_the_model_is_offered_schemas_as_the_server_wrote_them() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"city": {"type": "string"}},
        "properties": {"to": {"$ref": "#/$defs/city"}},
        "additionalProperties": False,
    }
    assert model_schema(schema) == schema
    assert model_schema(None) == {"type": "object", "properties": {}}
