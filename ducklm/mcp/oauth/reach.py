"""Where an MCP server over HTTP may send DuckLM: the URL rule of webhooks, for its OAuth.

OAuth discovery follows what the server says: the `resource_metadata` of its
`WWW-Authenticate` header, the `authorization_servers` of that metadata, the endpoints of
theirs, and redirects. A hostile or broken server could name the cloud's metadata
service (`169.254.169.254`) or a host of a private network, and DuckLM would fetch it
from inside. So every request of the server's HTTP client passes `ducklm/kit/url_policy.py`
first: the server's own origin, https to its own host, to its `oauth.issuer`'s and to
its `oauth.hosts`, and loopback only for a server that is itself on this machine.
Nothing else, whatever it resolves to. A refusal ends the connection with words that
say which host to name.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ducklm.kit.url_policy import UrlPolicy, host_names, is_loopback
from ducklm.mcp.config import ServerSpec

WHAT = "MCP server {name!r} named"
REFUSAL = (
    "neither the server's own nor in its oauth.hosts in mcp.json; DuckLM reaches no other "
    "host for it (add the host there, https only, if it is the server's authorization server)"
)


def server_reach(spec: ServerSpec) -> UrlPolicy:
    """Where `spec`'s HTTP client may send requests (its own URL always)."""
    url = spec.url or ""
    own = urlsplit(url).hostname or ""
    oauth = spec.oauth
    issuer = urlsplit(oauth.issuer).hostname if oauth is not None and oauth.issuer else None
    named = (*(oauth.hosts if oauth is not None else ()), issuer, own)
    return UrlPolicy(
        what=WHAT.format(name=spec.name),
        refusal=REFUSAL,
        hosts=host_names(named),
        origin=url,
        loopback=is_loopback(own.lower()),
    )


class ReachGuard:
    """The HTTP client's request hook: each request, redirects too, checked before it goes."""

    def __init__(self, spec: ServerSpec) -> None:
        self.policy = server_reach(spec)

    async def __call__(self, request: Any) -> None:
        """Raise `UrlRefused` for a request the policy refuses (httpx and httpx2 alike)."""
        self.policy.check(str(request.url))
