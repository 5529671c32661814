"""A server's OAuth tokens and client registration, kept 0600 in DuckLM's data dir.

One JSON file per server, `<data dir>/mcp/oauth/<server>.json` (the folder 0700, through
`ducklm.stores.private`), written whole and replaced, so a reader never sees half of it.
The file names the server's URL: tokens a server was given are never sent to another
URL the config was changed to (they read as absent, and a new login replaces them). It
also keeps when the access token expires, which the SDK only holds in memory: a process
that starts later refreshes an expired token instead of sending it. Nothing here logs
a token or a secret.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from ducklm.stores.private import replace_private_file


class FileTokenStorage:
    """The SDK's `TokenStorage` over one server's file."""

    def __init__(self, path: Path, url: str) -> None:
        self.path = path
        self._url = url

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens, `None` when there are none for this URL."""
        found = (await self._read()).get("tokens")
        return None if found is None else OAuthToken.model_validate(found)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Store `tokens`, and when the access token expires."""
        expires_at = None if tokens.expires_in is None else time.time() + int(tokens.expires_in)
        await self._update(tokens=tokens.model_dump(mode="json"), expires_at=expires_at)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The stored client registration, `None` when there is none for this URL."""
        found = (await self._read()).get("client_info")
        return None if found is None else OAuthClientInformationFull.model_validate(found)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Store the client registration (dynamic, or a metadata document's)."""
        await self._update(client_info=client_info.model_dump(mode="json", exclude_none=True))

    async def expires_at(self) -> float | None:
        """When the stored access token expires (epoch seconds), if the server said."""
        found = (await self._read()).get("expires_at")
        return None if found is None else float(found)

    async def clear(self) -> bool:
        """Forget the server's tokens and registration; whether there were any."""
        return await asyncio.to_thread(_remove, self.path)

    async def _read(self) -> dict[str, Any]:
        stored = await asyncio.to_thread(_load, self.path)
        return stored if stored.get("url") == self._url else {}

    async def _update(self, **fields: Any) -> None:
        stored = await self._read()
        await asyncio.to_thread(_save, self.path, {**stored, **fields, "url": self._url})


def _load(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except ValueError:  # a damaged file: signing in again writes a good one
        return {}
    return found if isinstance(found, dict) else {}


def _save(path: Path, stored: dict[str, Any]) -> None:
    replace_private_file(path, json.dumps(stored, indent=1))


def _remove(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True
