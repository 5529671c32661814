"""Where an MCP server's OAuth may lead DuckLM: its own origin and host, the hosts named."""

from __future__ import annotations

import re

import pytest

from ducklm.kit.url_policy import UrlRefused
from ducklm.mcp.config import ServerSpec
from ducklm.mcp.oauth.reach import server_reach
from ducklm.mcp.oauth.spec import OAuthSpec

REMOTE = ServerSpec(
    name="tracker",
    url="https://mcp.example.com/mcp",
    oauth=OAuthSpec(hosts=("auth.example.com",), issuer="https://id.example.org/realm"),
)
LOCAL = ServerSpec(name="notes", url="http://127.0.0.1:8123/mcp")


@pytest.mark.parametrize(
    "url",
    [
        "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
        "https://mcp.example.com:8443/token",  # its host, over https
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://id.example.org/realm/protocol/openid-connect/token",
    ],
)
def test_a_remote_server_reaches_its_own_host_and_the_named_ones(url: str) -> None:
    assert server_reach(REMOTE).check(url) == url


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "https://10.255.255.1/.well-known/oauth-authorization-server",
        "https://[fd00::1]/token",
        "http://127.0.0.1:8080/admin",  # this machine, from a server that is not on it
        "https://evil.example/register",
    ],
)
def test_a_remote_server_reaches_nothing_else(url: str) -> None:
    why = re.escape("is neither the server's own nor in its oauth.hosts in mcp.json")
    with pytest.raises(UrlRefused, match=why) as refused:
        server_reach(REMOTE).check(url)
    assert str(refused.value).startswith("MCP server 'tracker' named")


def test_a_server_on_this_machine_reaches_this_machine_only() -> None:
    reach = server_reach(LOCAL)
    assert reach.check("http://127.0.0.1:9999/token") == "http://127.0.0.1:9999/token"
    assert reach.check("http://localhost:8123/x") == "http://localhost:8123/x"
    for url in ("http://169.254.169.254/latest", "https://10.255.255.1/"):
        with pytest.raises(UrlRefused, match="neither the server's own"):
            reach.check(url)


def test_a_named_private_address_is_reached() -> None:
    spec = ServerSpec(name="lan", url="https://mcp.lan/mcp", oauth=OAuthSpec(hosts=("10.0.0.5",)))
    assert server_reach(spec).check("https://10.0.0.5/token") == "https://10.0.0.5/token"
    with pytest.raises(UrlRefused, match="use https"):
        server_reach(spec).check("http://10.0.0.5/token")
