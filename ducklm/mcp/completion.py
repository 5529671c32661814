"""Values for a prompt's argument as the person types it (`completion/complete`).

The composer asks while the person types `/server:prompt arg=va`: the server suggests
values (an MCP server declares the `completions` capability to do so), knowing the
arguments already given (`context`), as the spec's `CompleteRequest` carries them. A
server without the capability, or one that refuses, suggests nothing: completion is a
help, never an error in the person's way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ducklm.mcp.catalog import guarded, running_session
from ducklm.mcp.errors import TypedInputError

if TYPE_CHECKING:
    from ducklm.mcp.running import RunningServer

MAX_VALUES = 100
"""The spec caps a reply at 100 values."""


async def complete_prompt_argument(
    server: RunningServer, prompt: str, argument: str, value: str, given: dict[str, str]
) -> tuple[list[str], bool]:
    """The server's values for `argument` of `prompt` from `value`; whether it has more.

    Raises:
        TypedInputError: The server is not running (the message says why).
    """
    from mcp import types  # noqa: PLC0415  loaded with the session

    session = running_session(server)
    capabilities = session.server_capabilities
    if capabilities is None or capabilities.completions is None:
        return [], False
    reference = types.PromptReference(type="ref/prompt", name=prompt)
    asked = session.complete(reference, {"name": argument, "value": value}, given or None)
    try:
        result = await guarded(server, f"complete {prompt}'s {argument}", asked)
    except TypedInputError:
        return [], False
    completion = result.completion
    return completion.values[:MAX_VALUES], bool(completion.has_more)
