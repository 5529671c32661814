"""A real MCP server behind a real OAuth 2.1 authorization server, for DuckLM's tests.

    python tests/support/oauth_mcp_server.py [--ttl SECONDS]

One process on a free loopback port (printed first): the `mcp` SDK's own authorization
server routes (metadata, dynamic client registration, authorize, token with PKCE and
refresh) in front of an MCPServer at `/mcp` whose tools need a bearer token. The
authorization endpoint approves at once and redirects back, as the conformance suite's
server does: the test fetches the URL and follows the redirect, standing in for the
person's browser. Access tokens live `--ttl` seconds (default 2), so a test sees them
refreshed. The tool `token_stats` says how many tokens were issued and refreshed.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import sys
import time
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

SCOPE = "notes"


class ApproveAtOnce:
    """An in-memory authorization server that says yes to every sign-in."""

    def __init__(self, ttl_s: int) -> None:
        self.ttl_s = ttl_s
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.issued = 0
        self.refreshed = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(client.client_id or "", authorization_code.scopes)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]
        self.refreshed += 1
        return self._issue(client.client_id or "", scopes or refresh_token.scopes)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        return found if found is not None and (found.expires_at or 0) > time.time() else None

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str]) -> OAuthToken:
        self.issued += 1
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        expires = int(time.time()) + self.ttl_s
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        return OAuthToken(
            access_token=access,
            expires_in=self.ttl_s,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )


def build(port: int, ttl_s: int) -> MCPServer[Any]:
    """The server on `port`, its tokens living `ttl_s` seconds."""
    base = f"http://127.0.0.1:{port}"
    provider = ApproveAtOnce(ttl_s)
    server: MCPServer[Any] = MCPServer(
        "notes",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]
            ),
            required_scopes=[SCOPE],
            validate_token_resource=False,
        ),
    )

    @server.tool()
    def token_stats() -> str:
        """How many tokens the authorization server issued, and how many by refresh."""
        return json.dumps({"issued": provider.issued, "refreshed": provider.refreshed})

    return server


def main() -> None:
    """Serve on a port the kernel picks; the port is the first line printed."""
    import uvicorn

    ttl_s = int(sys.argv[sys.argv.index("--ttl") + 1]) if "--ttl" in sys.argv else 2
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # before the port is told: a client may connect while uvicorn loads
    port = sock.getsockname()[1]
    print(port, flush=True)
    config = uvicorn.Config(build(port, ttl_s).streamable_http_app(), log_level="warning")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
