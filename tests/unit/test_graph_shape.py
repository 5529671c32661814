"""The graph's shape and the rendered system prompts, pinned by snapshots."""

from __future__ import annotations

import pytest

from ducklm.graph.studio import graph
from ducklm.models.prompts import PROMPT_FIELDS, load_prompts
from ducklm.models.roles import ROLE_NAMES, load_roles
from ducklm.nodes.action_json import directive_prompt
from ducklm.tools.registry import default_tools
from tests.support.snapshots import assert_snapshot

FIELDS = {
    "workspace": "/home/duck/workspace",
    "tools": default_tools().describe(),
    "max_steps": 4,
    "directive_schema": "{}",
}


def test_mermaid_drawing() -> None:
    assert_snapshot("graph.mmd", graph.get_graph().draw_mermaid())


def test_every_field_a_prompt_may_use_is_filled() -> None:
    assert set(FIELDS) == PROMPT_FIELDS


@pytest.mark.parametrize("role", ROLE_NAMES)
def test_rendered_system_prompt(role: str) -> None:
    prompts = load_prompts(load_roles())
    assert_snapshot(f"prompt_{role}.txt", prompts.render(role, **FIELDS))  # type: ignore[arg-type]


def test_tool_descriptions() -> None:
    assert_snapshot("tools.txt", default_tools().describe())


@pytest.mark.parametrize("mode", ["json_schema", "prompt"])
def test_rendered_json_mode_action_prompt(mode: str) -> None:
    text = directive_prompt(
        load_prompts(load_roles()),
        default_tools(),
        structured_output=mode,  # type: ignore[arg-type]
        workspace=FIELDS["workspace"],  # type: ignore[arg-type]
        max_steps=4,
    )
    assert_snapshot(f"prompt_action_json_{mode}.txt", text)
