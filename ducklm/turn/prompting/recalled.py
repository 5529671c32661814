"""How a recalled fact or episode reads in the prompt: its text and when it was said."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ducklm.memory.dates import said_on

FACT_LINE = "{text} ({said_on})"
EPISODE_LINE = "{who} {said_on}, in another conversation: {text}"
SPEAKERS = {"user": "The user", "assistant": "You"}
EPISODE_CHARS = 400
"""An episode in the prompt is cut here: several must fit beside the facts."""


def recalled_line(item: Mapping[str, Any]) -> str:
    """One entry of `DuckState.recalled` as the model reads it."""
    text = str(item["text"])
    at = item.get("said_at")
    if not isinstance(at, int | float):  # recalled before memories carried their time
        return text
    if item.get("kind") != "episode":
        return FACT_LINE.format(text=text, said_on=said_on(at))
    if len(text) > EPISODE_CHARS:
        text = text[:EPISODE_CHARS].rstrip() + " ..."
    who = SPEAKERS.get(str(item.get("speaker")), "Someone")
    return EPISODE_LINE.format(who=who, said_on=said_on(at), text=text)
