"""The tools the action role may call, by name."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from ducklm.models.tokens import estimate_tokens
from ducklm.tools.coder_tools import CODER_TOOLS
from ducklm.tools.conversations import search_conversations
from ducklm.tools.file_ops import FILE_OP_TOOLS
from ducklm.tools.files import FILE_TOOLS
from ducklm.tools.shell import shell_exec


class ToolRegistry:
    """A name-to-tool map with the schemas the model sees."""

    def __init__(self, tools: Iterable[BaseTool]) -> None:
        self._tools: Mapping[str, BaseTool] = {t.name: t for t in tools}
        self._schema_tokens: int | None = None
        self._without: dict[frozenset[str], ToolRegistry] = {}
        self._plus: dict[tuple[int, ...], ToolRegistry] = {}

    def without(self, names: Iterable[str]) -> ToolRegistry:
        """These tools minus `names`: what a turn offers the model (built once per set).

        Every schema costs a small model prompt tokens and attention, so tools a turn
        does not need (the coder's, when the router sees no code work) are left out.
        """
        key = frozenset(n for n in names if n in self._tools)
        if not key:
            return self
        if key not in self._without:
            self._without[key] = ToolRegistry(t for n, t in self._tools.items() if n not in key)
        return self._without[key]

    def plus(self, tools: Iterable[BaseTool]) -> ToolRegistry:
        """These tools and `tools` (MCP tools of this turn; a name already here wins).

        Built once per set of tool objects: a restarted MCP server brings new ones.
        """
        extra = [t for t in tools if t.name not in self._tools]
        if not extra:
            return self
        key = tuple(id(t) for t in extra)
        if key not in self._plus:
            if len(self._plus) > 32:  # restarts make new objects: keep the cache small
                self._plus.clear()
            self._plus[key] = ToolRegistry((*self._tools.values(), *extra))
        return self._plus[key]

    def get(self, name: str) -> BaseTool | None:
        """The tool called `name`, or `None`."""
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        """Tool names, in registration order."""
        return list(self._tools)

    @property
    def tools(self) -> list[BaseTool]:
        """The tools, for `bind_tools`."""
        return list(self._tools.values())

    def model_schema(self, name: str) -> dict[str, Any]:
        """JSON schema of the arguments the model fills (injected ones left out)."""
        found = self._tools[name].tool_call_schema
        if isinstance(found, dict):  # an MCP tool: its server's own JSON schema
            return found
        schema: dict[str, Any] = found.model_json_schema()  # type: ignore[union-attr]
        return schema

    def prompt_tokens(self) -> int:
        """About how many prompt tokens the tools' schemas take when bound natively."""
        if self._schema_tokens is None:
            schemas = [convert_to_openai_tool(t) for t in self._tools.values()]
            self._schema_tokens = estimate_tokens(json.dumps(schemas))
        return self._schema_tokens

    def describe(self) -> str:
        """Each tool with its arguments, for prompts of models without tool calling."""
        blocks = []
        for name, tool in self._tools.items():
            schema = self.model_schema(name)
            props, required = schema.get("properties", {}), set(schema.get("required", []))
            summary = " ".join((tool.description or "").split())
            lines = [f"- {name}({', '.join(props)}): {summary}"]
            for arg, spec in props.items():
                need = (
                    "required" if arg in required else f"default {json.dumps(spec.get('default'))}"
                )
                lines.append(
                    f"    {arg} ({spec.get('type', 'any')}, {need}): {spec.get('description', '')}"
                )
            blocks.append("\n".join(lines))
        return "\n".join(blocks)


def default_tools() -> ToolRegistry:
    """The tools DuckLM ships with."""
    return ToolRegistry(
        (*FILE_TOOLS, *FILE_OP_TOOLS, shell_exec, *CODER_TOOLS, search_conversations)
    )
