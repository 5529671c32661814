"""Which model errors are worth retrying, and how to tell a person what went wrong.

Nothing here shows exception text to people: a message names the cause and what to do.
A server's refusal is the exception to that: its own words (the `message` of its error
body) are quoted, because they name what it refused and often how to fix it (vLLM's
`"auto" tool choice requires --enable-auto-tool-choice`). "The context may be too long"
is said only when the server says so.
A connection failure to the local server DuckLM started, when that server has crashed,
names the crash (`ducklm.models.local.crash`) instead of "not reachable", and whether
DuckLM is restarting it (`ducklm.models.local.state`).
"""

from __future__ import annotations

import json
import re

import httpx
import openai
from langchain_core.exceptions import ContextOverflowError

from ducklm.config.settings import Settings
from ducklm.kit.workspaces import WorkspaceError
from ducklm.models.context_size import RAISE_WINDOW, WindowTooSmall
from ducklm.models.local.crash import local_crash
from ducklm.models.local.state import LOCAL_SERVERS

CONNECTION_ERRORS = (openai.APIConnectionError, httpx.TransportError)


class PartialAnswerError(RuntimeError):
    """The model failed after part of an answer had already streamed.

    Not retried: repeating the call would stream the beginning of the answer twice.
    """


def is_retryable(exc: BaseException) -> bool:
    """Whether calling the model again might succeed: connection, timeout, 5xx, bad reply."""
    if isinstance(exc, PartialAnswerError):
        return False
    return isinstance(
        exc,
        (
            openai.APIConnectionError,  # includes APITimeoutError
            openai.InternalServerError,
            openai.RateLimitError,
            openai.APIResponseValidationError,
            json.JSONDecodeError,
            httpx.TransportError,
        ),
    )


# First match wins, so subclasses come before their bases (a timeout is a connection error).
MESSAGES: tuple[tuple[tuple[type[BaseException], ...], str], ...] = (
    ((PartialAnswerError,), "The model server stopped in the middle of the answer. Try again."),
    (
        (openai.APITimeoutError,),
        "The model server did not answer in time. Check that it is running and not overloaded.",
    ),
    (
        CONNECTION_ERRORS,
        "The model server is not reachable. Start it (see README) or set DUCK_LLM_BASE_URL "
        "to where it runs.",
    ),
    (
        (openai.InternalServerError,),
        "The model server failed while answering (server error). Check its log.",
    ),
    ((openai.RateLimitError,), "The model server is busy (rate limited). Try again shortly."),
    (
        (openai.AuthenticationError,),
        "The model server refused the API key. Check DUCK_LLM_API_KEY.",
    ),
    (
        (openai.NotFoundError,),
        "The model server does not know the configured model or path. Check config/models.yaml.",
    ),
    (
        (openai.BadRequestError,),
        "The model server rejected the request (bad request).",
    ),
    (
        (openai.APIResponseValidationError, json.JSONDecodeError),
        "The model server sent a reply DuckLM could not read.",
    ),
)
INTERNAL_ERROR = "DuckLM hit an internal error; details are in ducklm.log in the data dir."
TOO_LONG = "The prompt is longer than the model server's context window. " + RAISE_WINDOW
# What servers say when a prompt does not fit: OpenAI's `context_length_exceeded`, vLLM's
# "maximum context length", llama-server's "exceeds the available context size",
# Ollama's "input length exceeds the context length", "prompt is too long".
_TOO_LONG_WORDS = re.compile(
    r"context[_ ](length|size|window)|too long|n_ctx|max(imum)?[_ ]model[_ ]len", re.IGNORECASE
)
SAID_MAX_CHARS = 300
"""The most of a server's message quoted: enough for a sentence and its fix."""
REFUSALS = (openai.BadRequestError, openai.NotFoundError, openai.UnprocessableEntityError)
"""Errors whose server message is quoted (a 401/403's may echo part of the key: not those)."""


def describe(exc: BaseException) -> str:
    """A message for people about a failed run; never the exception text itself.

    Except for errors written for people in the first place (`WorkspaceError`).
    """
    if isinstance(exc, WorkspaceError):
        return str(exc)
    if isinstance(exc, WindowTooSmall):
        return exc.message
    said = server_said(exc)
    if isinstance(exc, ContextOverflowError) or _TOO_LONG_WORDS.search(said):
        return TOO_LONG + (f' The server said: "{said}"' if said else "")
    for types, message in MESSAGES:
        if isinstance(exc, types):
            return message + (f' The server said: "{said}"' if said else "")
    return INTERNAL_ERROR


def server_said(exc: BaseException) -> str:
    """The message of a model server's refusal (`REFUSALS`), on one line and capped; "" if none."""
    if not isinstance(exc, REFUSALS):
        return ""
    body = exc.body
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if not isinstance(message, str):
        message = body if isinstance(body, str) else ""
    said = " ".join(message.split())
    return said if len(said) <= SAID_MAX_CHARS else said[: SAID_MAX_CHARS - 1] + "…"


async def describe_failure(exc: BaseException, settings: Settings) -> str:
    """`describe(exc)`, except that a crash of DuckLM's local server is named as such.

    When this process restarts that server (`ducklm serve`'s keeper), the message says
    so and what became of the restart, and never asks the person to start it.
    """
    url = failed_url(exc)
    if url is None:
        return describe(exc)
    watch = LOCAL_SERVERS.find(url)
    if watch is not None and (said := watch.state.failure(watch.restart_wait_s)) is not None:
        return said
    if (ending := await local_crash(settings, url)) is None:
        return describe(exc)
    if watch is not None:  # crashed a moment ago: the keeper has not seen it yet
        return ending.message_restarting()
    return ending.message()


def failed_url(exc: BaseException) -> str | None:
    """The URL of the request whose connection failed, from `exc` or what caused it."""
    seen: BaseException | None = exc
    visited: set[int] = set()  # a chain may loop back on itself
    while seen is not None and id(seen) not in visited:
        visited.add(id(seen))
        if isinstance(seen, CONNECTION_ERRORS):
            try:
                request = seen.request
            except RuntimeError:  # httpx raises when an error carries no request
                request = None
            if request is not None:
                return str(request.url)
        seen = seen.__cause__ or seen.__context__
    return None
