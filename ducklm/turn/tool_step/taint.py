"""Which result of a tool step, if any, made the conversation untrusted."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import ToolMessage

from ducklm.config.settings import Settings
from ducklm.tools.mcp_info import mcp_info
from ducklm.tools.trust import Taint, taint_of
from ducklm.turn.tool_step.plan import DecidedCall


def first_taint(ran: Sequence[tuple[DecidedCall, ToolMessage]], settings: Settings) -> Taint | None:
    """The taint of the first call in `ran` whose result cannot be believed, or `None`.

    Only calls that ran count: a refused or rejected call brought nothing in.
    """
    for item, message in ran:
        if item.refusal is not None or item.earlier is not None:
            continue
        taint = taint_of(
            message.tool_call_id,
            item.planned.call["name"],
            mcp_info(item.planned.tool),
            item.verdict,
            message.text,
            untrusted_workspace=settings.untrusted_workspace,
        )
        if taint is not None:
            return taint
    return None
