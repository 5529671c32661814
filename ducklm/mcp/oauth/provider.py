"""The SDK's OAuth providers, set up for one server of `mcp.json`.

`OAuthClientProvider` does the protocol: protected resource metadata and authorization
server metadata discovery with their fallbacks, dynamic client registration or a client
ID metadata document, PKCE, the scope selection strategy and step-up, refresh. The
client-credentials providers of `mcp.client.auth.extensions` do the machine grants.
DuckLM adds three things: its pre-registered client from the config, the token's expiry
read back from storage (the SDK keeps it in memory only, so a later process would send
an expired token rather than refresh it), and who signs in (`person.py`).
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.oauth2 import OAuthContext
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata
from pydantic import AnyUrl

from ducklm.mcp.asks import CallAsks
from ducklm.mcp.config import ServerSpec
from ducklm.mcp.oauth.asked import AskedSignIn, loopback_port
from ducklm.mcp.oauth.person import SignIn, no_person
from ducklm.mcp.oauth.spec import OAuthSpec
from ducklm.mcp.oauth.storage import FileTokenStorage

CLIENT_NAME = "DuckLM"
# Registered when nobody is signing in (a turn); never used, since no redirect happens then.
NO_REDIRECT = "http://127.0.0.1/callback"


class DuckOAuth(OAuthClientProvider):
    """The authorization-code provider, with a configured client and the stored expiry."""

    def __init__(self, *, fixed_client: OAuthClientInformationFull | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._fixed_client = fixed_client

    async def _initialize(self) -> None:
        await super()._initialize()
        if self._fixed_client is not None:
            self.context.client_info = self._fixed_client
        await _stored_expiry(self.context)


class DuckClientCredentials(ClientCredentialsOAuthProvider):
    """Client credentials with a secret, and the stored expiry."""

    async def _initialize(self) -> None:
        await super()._initialize()
        await _stored_expiry(self.context)


class DuckPrivateKeyJWT(PrivateKeyJWTOAuthProvider):
    """Client credentials with a signed assertion, and the stored expiry."""

    async def _initialize(self) -> None:
        await super()._initialize()
        await _stored_expiry(self.context)


async def _stored_expiry(context: OAuthContext) -> None:
    storage = context.storage
    if context.current_tokens is not None and isinstance(storage, FileTokenStorage):
        context.token_expiry_time = await storage.expires_at()


async def server_auth(
    spec: ServerSpec,
    storage: FileTokenStorage,
    person: SignIn | None,
    asking: Callable[[], list[CallAsks]] | None = None,
) -> httpx2.Auth | None:
    """The `httpx2.Auth` for `spec`'s requests, or `None` to send them as they are.

    None when the person gave a token of their own, and in a turn (`person` None) for a
    server DuckLM holds no token of: its 401 then says to run `ducklm mcp login`. In a
    turn with a token, a server asking for more access (403 `insufficient_scope`) asks
    the person through the call in flight (`asking`; `asked.py`), on the redirect URI of
    their earlier sign-in.
    """
    oauth = spec.oauth or OAuthSpec()
    url = spec.url or ""
    if spec.static_authorization:
        return None
    if oauth.grant == "client_credentials":
        return await _client_credentials(url, oauth, storage)
    if person is None and await storage.get_tokens() is None:
        return None
    asked = None if person is not None else await _asked_sign_in(spec, oauth, storage, asking)
    signing = person or asked
    redirect_uri = signing.redirect_uri if signing is not None else NO_REDIRECT
    return DuckOAuth(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name=CLIENT_NAME,
            redirect_uris=[AnyUrl(redirect_uri)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        storage=storage,
        redirect_handler=signing.redirect if signing is not None else no_person,
        callback_handler=signing.callback if signing is not None else _no_callback,
        client_metadata_url=oauth.client_metadata_url,
        fixed_client=_configured_client(oauth, redirect_uri),
    )


async def _asked_sign_in(
    spec: ServerSpec,
    oauth: OAuthSpec,
    storage: FileTokenStorage,
    asking: Callable[[], list[CallAsks]] | None,
) -> AskedSignIn | None:
    """The turn's sign-in for a step-up, on the redirect URI the person signed in with."""
    if asking is None:
        return None
    port = oauth.callback_port
    if port is None:
        client = await storage.get_client_info()
        uris = (client.redirect_uris or []) if client is not None else []
        port = loopback_port(str(uris[0])) if uris else None
    return AskedSignIn(spec.name, port, asking) if port is not None else None


def _configured_client(oauth: OAuthSpec, redirect_uri: str) -> OAuthClientInformationFull | None:
    if oauth.client_id is None:
        return None
    return OAuthClientInformationFull(
        client_id=oauth.client_id,
        client_secret=oauth.client_secret,
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        token_endpoint_auth_method=oauth.token_endpoint_auth_method
        if oauth.client_secret
        else "none",
    )


async def _client_credentials(url: str, oauth: OAuthSpec, storage: FileTokenStorage) -> httpx2.Auth:
    client_id = oauth.client_id or ""
    # Without `issuer` the SDK warns that the server decides where the credentials go;
    # the config says so to the person (README), the warning would only reach a log.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if oauth.private_key_file is None:
            method = oauth.token_endpoint_auth_method
            assert method != "none"  # refused by the config
            return DuckClientCredentials(
                server_url=url,
                storage=storage,
                client_id=client_id,
                client_secret=oauth.client_secret or "",
                token_endpoint_auth_method=method,
                issuer=oauth.issuer,
            )
        key = await asyncio.to_thread(_read_key, Path(oauth.private_key_file))
        signed = SignedJWTParameters(
            issuer=client_id,
            subject=client_id,
            signing_key=key,
            signing_algorithm=oauth.signing_algorithm,
        )
        return DuckPrivateKeyJWT(
            server_url=url,
            storage=storage,
            client_id=client_id,
            assertion_provider=signed.create_assertion_provider(),
            issuer=oauth.issuer,
        )


def _read_key(path: Path) -> str:
    try:
        return path.expanduser().read_text(encoding="utf-8")
    except OSError as exc:  # said here: a FileNotFoundError would read as a missing program
        raise ValueError(f"cannot read oauth.private_key_file {path} ({exc.strerror})") from None


async def _no_callback() -> tuple[str, str | None]:
    await no_person()
    raise AssertionError  # unreachable: `no_person` raises
