"""What the turn's model servers accept, applied to the roles, and said once.

At a turn's start each role's server is probed, once per process
(`ducklm.models.capabilities`); a request a server refuses for what it asked (native
tools, a JSON schema) teaches the same. The roles on that server then ask only for what
it takes (`ModelRoles.adjust`): no setting has to name the server. When that changes how
the action role calls tools, the chat is told, once, in the server's own words.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import openai
from langgraph.runtime import Runtime

from ducklm.kit.events import emit
from ducklm.models.capabilities import Finding, refusal_of
from ducklm.models.roles import ROLE_NAMES, RoleName
from ducklm.models.wire import SEEN_KEY
from ducklm.models.wire_chat import WireReadingChat

if TYPE_CHECKING:
    from ducklm.graph.context import DuckContext

log = logging.getLogger(__name__)
T = TypeVar("T")

TOOLS_AS_JSON = (
    "The model server at {url} does not take native tool calls: {how}. DuckLM's action "
    "role writes JSON directives there instead; tools work as before."
)


async def find_servers(runtime: Runtime[DuckContext]) -> None:
    """Probe each role's server (the first time only), apply what was found, and say so."""
    ctx = runtime.context
    urls = sorted({ctx.models.config(role).base_url for role in ROLE_NAMES})
    await asyncio.gather(*(ctx.capabilities.of(url) for url in urls))
    tell_templates(ctx)
    if "action" in apply_found(ctx):
        tell_tool_mode(runtime)


def tell_templates(ctx: DuckContext) -> None:
    """Tell each role's client whether its server's chat template opens `<think>`.

    Known from the template the server rendered, a client reads a reasoning model's
    first reply at once; unknown, it holds that reply's text back until the reply tells
    (`ducklm.models.think_tags`).
    """
    for role in ROLE_NAMES:
        found = ctx.capabilities.known(ctx.models.config(role).base_url)
        chat = ctx.models.chat(role)
        opens = found.template_opens if found is not None else None
        if opens is not None and isinstance(chat, WireReadingChat):
            chat.know_template(opens)


def learn_refusal(ctx: DuckContext, role: RoleName, exc: BaseException) -> list[RoleName]:
    """Record `exc` if it is `role`'s server refusing something DuckLM can do without.

    Returns:
        The roles whose settings changed: empty when `exc` refused nothing DuckLM can
        ask otherwise (the caller raises it), else ask again as the roles now ask.
    """
    refused = refusal_of(exc)
    if refused is None:
        return []
    ctx.capabilities.learn(ctx.models.config(role).base_url, *refused)
    return apply_found(ctx)


async def ask_as_found(ctx: DuckContext, role: RoleName, call: Callable[[], Awaitable[T]]) -> T:
    """`call()`, and once more when `role`'s server refused what it asked for.

    Asked again only when the role now asks otherwise (a JSON schema the server refuses
    becomes `json_object` with the schema). `call` builds its request from the role's
    settings each time it is called.
    """
    try:
        return await call()
    except openai.APIStatusError as exc:
        if role not in learn_refusal(ctx, role, exc):
            raise
    return await call()


def learn_from_reply(ctx: DuckContext, role: RoleName, reply: Any) -> None:
    """What `role`'s reply showed of its server: usage in a stream, and reasoning.

    Found from what the server does, once: the first stream that asked for usage says
    whether it came (a later one is not read), and the first reply that reasoned says
    the model reasons (one that did not says nothing: not every reply reasons).
    """
    seen = (getattr(reply, "response_metadata", None) or {}).get(SEEN_KEY)
    if not isinstance(seen, dict):
        return
    url = ctx.models.config(role).base_url
    known = ctx.capabilities.known(url)
    if seen.get("usage_asked") and (known is None or known.of("include_usage").works is None):
        usage = seen.get("usage") is True
        how = "a turn's stream asked for usage " + ("got it" if usage else "and had none")
        ctx.capabilities.learn(url, "include_usage", Finding(usage, how))
    if seen.get("reasoning") and (known is None or known.of("reasoning").works is not True):
        ctx.capabilities.learn(url, "reasoning", Finding(True, f"the {role} role's reply reasoned"))


def apply_found(ctx: DuckContext) -> list[RoleName]:
    """Adjust the roles to what their servers accept; the roles that changed."""
    changed = ctx.models.adjust(ctx.capabilities.adjusted)
    for role in changed:
        config = ctx.models.config(role)
        asks = config.model_dump(include={"tool_mode", "structured_output"})
        log.info("%s now asks %s as %s", role, config.base_url, asks)
    return changed


def tell_tool_mode(runtime: Runtime[DuckContext]) -> None:
    """Say that the action role writes JSON directives because its server takes no tools."""
    ctx = runtime.context
    url = ctx.models.config("action").base_url
    found = ctx.capabilities.known(url)
    finding = found.of("native_tools") if found is not None else Finding()
    message = TOOLS_AS_JSON.format(url=url, how=finding.how or "it said so")
    log.warning("%s", message)
    emit(runtime, "server_capability", feature="native_tools", works=finding.works,
         how=finding.how, base_url=url, role="action", mode="json", message=message)  # fmt: skip
