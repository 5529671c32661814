"""The doctor's questions about a server that only a completion answers.

One-token requests to a role's model: with a tool (refused, or taken), with a JSON
schema as `response_format`, and streamed with `stream_options.include_usage` (does
usage come at the end, and did the reply reason). A turn learns the refusals from its
own requests instead (`ducklm.turn.server_found`): these cost model calls, which is the
doctor's job and not a turn's.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from ducklm.models.capabilities import REFUSAL_STATUSES, Feature, Finding, said_in
from ducklm.models.roles import RoleConfig

REQUEST_TIMEOUT_S = 60.0
"""Each one-token request (a CPU server may first read the prompt)."""
MAX_TEXT = 200
"""The streamed text kept to look for inline reasoning tags."""


async def probe_requests(config: RoleConfig) -> dict[Feature, Finding]:
    """What only a completion tells: tools, a JSON schema, usage in a stream, reasoning.

    Three one-token requests to the role's model (the doctor's: a turn learns these from
    its own requests instead).
    """
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    base = {"model": config.model, "messages": [{"role": "user", "content": "Say OK."}]}
    tool = {"type": "function", "function": {"name": "ping", "description": "Ping.",
            "parameters": {"type": "object", "properties": {}}}}  # fmt: skip
    schema = {"name": "ok", "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}
    url = config.base_url.rstrip("/") + "/chat/completions"
    client = await asyncio.to_thread(httpx.AsyncClient, timeout=REQUEST_TIMEOUT_S, headers=headers)
    async with client:
        tools = await _accepted(client, url, {**base, "max_tokens": 1, "tools": [tool]})
        fmt = {"type": "json_schema", "json_schema": schema}
        json_schema = await _accepted(
            client, url, {**base, "max_tokens": 1, "response_format": fmt}
        )
        usage, reasoning = await _stream_probe(client, url, {**base, "max_tokens": 8})
    found: dict[Feature, Finding] = {"include_usage": usage, "reasoning": reasoning}
    if tools.works is False:
        found["native_tools"] = tools
    found["json_schema"] = json_schema
    return found


async def _accepted(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> Finding:
    try:
        response = await client.post(url, json=body)
    except httpx.HTTPError:
        return Finding()
    if response.status_code == 200:
        return Finding(True, "a request with it was answered")
    if response.status_code not in REFUSAL_STATUSES:
        return Finding()
    said = _said_of(response)
    return Finding(
        False, f'it refused: "{said}"' if said else f"it answered {response.status_code}"
    )


def _said_of(response: httpx.Response) -> str:
    try:
        return said_in(response.json())
    except ValueError:
        return said_in(response.text)


async def _stream_probe(
    client: httpx.AsyncClient, url: str, body: dict[str, Any]
) -> tuple[Finding, Finding]:
    """Whether a stream asked for usage ends with it, and whether its reply reasoned."""
    request = {**body, "stream": True, "stream_options": {"include_usage": True}}
    usage = reasoning = False
    text = ""  # inline tags come split over chunks
    try:
        async with client.stream("POST", url, json=request) as response:
            if response.status_code != 200:
                return Finding(), Finding()
            async for line in response.aiter_lines():
                chunk = _event(line)
                usage = usage or bool(chunk.get("usage"))
                delta = _delta(chunk)
                if isinstance(content := delta.get("content"), str) and len(text) < MAX_TEXT:
                    text += content
                reasoning = reasoning or any(
                    delta.get(n) for n in ("reasoning_content", "reasoning")
                )
    except httpx.HTTPError:
        return Finding(), Finding()
    reasoning = reasoning or "think>" in text  # opened, or only closed (the template opened it)
    said_usage = Finding(usage, "a stream asked for usage " + ("got it" if usage else "had none"))
    said_reasoning = Finding(True, "a short reply reasoned") if reasoning else Finding()
    return said_usage, said_reasoning


def _event(line: str) -> dict[str, Any]:
    if not line.startswith("data:") or line.strip() == "data: [DONE]":
        return {}
    try:
        chunk = json.loads(line[5:])
    except ValueError:
        return {}
    return chunk if isinstance(chunk, dict) else {}


def _delta(chunk: dict[str, Any]) -> dict[str, Any]:
    choices = chunk.get("choices")
    delta = choices[0].get("delta") if isinstance(choices, list) and choices else None
    return delta if isinstance(delta, dict) else {}
