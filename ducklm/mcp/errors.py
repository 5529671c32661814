"""Failures of MCP servers, in words for people."""

from __future__ import annotations

NEEDS_LOGIN = (
    "MCP server {name!r} needs authorization: run `ducklm mcp login {name}`,"
    " or press Connect on its card in the web chat's Activity panel"
)
REFUSED_TOKEN = (
    "MCP server {name!r} refused the token of its Authorization header (HTTP {status}): "
    "check the header in mcp.json, or remove it and run `ducklm mcp login {name}`"
)


class NeedsAuthorization(Exception):
    """The server wants a person to sign in (OAuth), and none is at hand to ask."""


def failure_words(exc: BaseException) -> str:
    """A failure in a few words: an exception group is named by its first real member."""
    exc = first_cause(exc)
    if isinstance(exc, FileNotFoundError):
        return f"program not found ({exc.filename or exc})"
    return (str(exc).strip() or type(exc).__name__)[:300]


def first_cause(exc: BaseException) -> BaseException:
    """The first real member of an exception group (the transport's task group wraps)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def refused_status(exc: BaseException) -> int | None:
    """401 or 403 when the server refused DuckLM's credentials, else `None`.

    Read without importing httpx (its `HTTPStatusError` carries `response.status_code`):
    this module loads with the CLI, before any server starts.
    """
    status = getattr(getattr(first_cause(exc), "response", None), "status_code", None)
    return status if status in (401, 403) else None


def authorization_words(exc: BaseException, name: str, *, static_token: bool) -> str | None:
    """One line for a server that wants credentials it was not given, or `None`."""
    cause = first_cause(exc)
    if isinstance(cause, NeedsAuthorization):
        return NEEDS_LOGIN.format(name=name)
    status = refused_status(cause)
    if status is None:
        return None
    if static_token:
        return REFUSED_TOKEN.format(name=name, status=status)
    return NEEDS_LOGIN.format(name=name)


class TypedInputError(ValueError):
    """What the person typed names an MCP prompt or resource that cannot be used as typed.

    Its message says what was wrong: an unknown server or prompt, a missing or unknown
    argument, a resource the server could not read.
    """
