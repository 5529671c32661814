"""The coder tools: the action role hands code work to the coder role.

The model never sees the new content here. Before the tool node runs, the coder node asks
the coder role for the whole new file and keeps its proposal in the graph state; the
policy treats the call as a write (an existing file asks, with the diff), and the tool
writes exactly what was proposed and approved. A resumed run therefore writes what the
person saw, without asking the model again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from langchain_core.tools import InjectedToolArg, tool

from ducklm.tools.errors import ToolError
from ducklm.tools.file_threads import run_file_work
from ducklm.tools.files import write_text

NO_PROPOSAL = "the coder made no change for this call"
SYNTAX = "the coder's new {path} still has a syntax error ({error}); nothing was written"


@tool(parse_docstring=True, response_format="content_and_artifact")
async def generate_code(  # noqa: D417  workspace, proposal and timeout_s are injected
    path: str,
    instructions: str,
    workspace: Annotated[Path, InjectedToolArg],
    proposal: Annotated[dict[str, Any] | None, InjectedToolArg] = None,
    timeout_s: Annotated[float | None, InjectedToolArg] = None,
) -> tuple[str, dict[str, Any]]:
    """Have the coder write a new file (or rewrite one) from instructions.

    Args:
        path: File path relative to the workspace, e.g. "src/ducks.py".
        instructions: What the code must do, in plain words.
    """
    return await _apply("generate_code", workspace, proposal, timeout_s)


@tool(parse_docstring=True, response_format="content_and_artifact")
async def fix_code(  # noqa: D417  workspace, proposal and timeout_s are injected
    path: str,
    error: str,
    workspace: Annotated[Path, InjectedToolArg],
    proposal: Annotated[dict[str, Any] | None, InjectedToolArg] = None,
    timeout_s: Annotated[float | None, InjectedToolArg] = None,
) -> tuple[str, dict[str, Any]]:
    """Have the coder fix a file, given the error it causes.

    Args:
        path: File path relative to the workspace.
        error: The error message or failing test output.
    """
    return await _apply("fix_code", workspace, proposal, timeout_s)


@tool(parse_docstring=True, response_format="content_and_artifact")
async def refactor_code(  # noqa: D417  workspace, proposal and timeout_s are injected
    path: str,
    instructions: str,
    workspace: Annotated[Path, InjectedToolArg],
    proposal: Annotated[dict[str, Any] | None, InjectedToolArg] = None,
    timeout_s: Annotated[float | None, InjectedToolArg] = None,
) -> tuple[str, dict[str, Any]]:
    """Have the coder restructure a file without changing what it does.

    Args:
        path: File path relative to the workspace.
        instructions: What to change in the code's structure.
    """
    return await _apply("refactor_code", workspace, proposal, timeout_s)


CODER_TOOLS = (generate_code, fix_code, refactor_code)
CODER_TOOL_NAMES = frozenset(t.name for t in CODER_TOOLS)


async def _apply(
    tool: str, workspace: Path, proposal: dict[str, Any] | None, timeout_s: float | None
) -> tuple[str, dict[str, Any]]:
    if not proposal:
        raise ToolError(NO_PROPOSAL)
    if proposal.get("error"):
        raise ToolError(str(proposal["error"]))
    if not proposal.get("syntax_ok", True):
        raise ToolError(SYNTAX.format(path=proposal["path"], error=proposal.get("syntax_error")))
    # The proposal's path is the one the coder read and the person approved.
    path, content = str(proposal["path"]), str(proposal["new_content"])
    written = await run_file_work(tool, timeout_s, write_text, workspace, path, content, True)
    explanation = str(proposal.get("explanation") or "").strip()
    diff = str(proposal.get("diff") or "")
    text = f"{written}. {explanation}\n\n{diff}".strip()
    return text, {"path": proposal["path"], "diff": diff, "explanation": explanation}
