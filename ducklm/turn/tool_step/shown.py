"""What of a call's output the model and the events get: its secrets hidden.

Every tool result crosses `run.execute` on its way to its ToolMessage, whatever the tool
(shell, file tools, MCP, coder, a tool added later), so the secret rule is applied there
once, by construction: each credential the scan finds by content (`tools/secret_scan/`)
becomes a marker that says what was hidden and where. The events carry the same text,
and so do its facts (an MCP result's blocks), so the audit log and the checkpoint keep
no more of a secret than the model saw.

The one exception is a read the person approved in clear: a call the policy said reads
a secret file (`Verdict.secrets`: a shell command naming `.env`, `file_read` of one)
that the person answered. As with the sandbox's view, that answer shows that one call.
"""

from __future__ import annotations

from typing import Any

from ducklm.tools.secret_scan.hide import hide_in_values_async, hide_secrets_async
from ducklm.turn.tool_step.plan import DecidedCall


def in_clear(item: DecidedCall) -> bool:
    """Whether the person approved this call's secret read: its result is not masked."""
    return item.verdict.secrets and item.decision is not None


async def shown_output(item: DecidedCall, output: str) -> str:
    """`output` of the call `item` with its secrets hidden, unless approved in clear."""
    if in_clear(item):
        return output
    # A call's `path` names the file it read (file_read, an MCP filesystem server's tools).
    path = item.args.get("path")
    hidden = await hide_secrets_async(output, source=path if isinstance(path, str) else None)
    return hidden.text


async def shown_facts(item: DecidedCall, facts: dict[str, Any]) -> dict[str, Any]:
    """A call's facts (its artifact, the event's fields) with the secrets in them hidden.

    An MCP result's blocks and structured content (`mcp_content`) repeat its text.
    """
    if in_clear(item) or not facts:
        return facts
    shown: dict[str, Any] = await hide_in_values_async(facts)
    return shown
