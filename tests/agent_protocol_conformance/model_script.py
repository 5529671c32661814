"""The scripted model behind both DuckLM targets: it keeps the suite's prompt contract.

Not part of the separable suite: it knows DuckLM's model roles. Replies are chosen by
what each request asks, never from a queue, so a case that makes an extra model call
(a retry, a second server) gets the same answer instead of shifting every later one:

- the critic's and memory policy's JSON requests get fixed replies (they run only when a
  run's `context` leaves them on);
- a request after a tool result gets `DONE`;
- `overwrite NAME` gets a `file_write` call that overwrites NAME with new text (the
  workspace holds NAME, so DuckLM asks for approval);
- `slowly ...` gets an answer streamed over about `SLOW_S` seconds;
- anything else gets `Hello back: <the message>`.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from typing import Any

from tests.support.scripted_llm import Reply, call, reply

DONE = "Done: the file is written."
SLOW_WORDS = 24
SLOW_S = 2.0
JSON_REPLIES: dict[str, dict[str, Any]] = {
    "Critique": {"score": 1.0, "summary": "Answered as asked."},
    "MemoryProposal": {"should_store": False},
}
_OVERWRITE = re.compile(r"\boverwrite (\S+)")
_SLOWLY = re.compile(r"\bslowly\b")


class ConformanceModel:
    """A responder for `ScriptedLLM.set_responder`; called on the server's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._versions = itertools.count(1)

    def __call__(self, body: dict[str, Any]) -> Reply:
        """The reply for one chat-completions request."""
        schema = _schema_name(body)
        if schema in JSON_REPLIES:
            return reply(json.dumps(JSON_REPLIES[schema]))
        if schema is not None:
            return reply(f"conformance model: no reply for schema {schema}", status=500)
        messages = body.get("messages") or []
        if messages and messages[-1].get("role") == "tool":
            return reply(DONE)
        text = _last_user_text(messages)
        if (wanted := _OVERWRITE.search(text)) and "tools" in body:
            with self._lock:
                version = next(self._versions)
            content = f"version {version}\n"
            return reply(
                tool_calls=[call("file_write", path=wanted[1], content=content, overwrite=True)]
            )
        if _SLOWLY.search(text):
            words = " ".join(f"word{i}" for i in range(SLOW_WORDS))
            return reply(words, chunk_delay_s=SLOW_S / SLOW_WORDS)
        return reply(f"Hello back: {text}")


def _schema_name(body: dict[str, Any]) -> str | None:
    name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
    return name if isinstance(name, str) else None


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""
