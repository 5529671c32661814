"""The one URL rule of webhooks and MCP OAuth: loopback where allowed, the named origin,
https to named hosts; link-local and private addresses only when named."""

from __future__ import annotations

import re

import pytest

from ducklm.kit.url_policy import UrlPolicy, UrlRefused, host_names

# As an MCP server on another machine is policed: its own origin, its named hosts, no loopback.
REMOTE = UrlPolicy(
    what="MCP server 'notes' OAuth",
    refusal="not the server's own nor in its oauth.hosts",
    hosts=host_names(["mcp.example.com", "auth.example.com", "[fd00::7]", "10.1.2.3"]),
    origin="http://mcp.example.com:8080/mcp",
    loopback=False,
)


@pytest.mark.parametrize(
    "url",
    [
        "http://mcp.example.com:8080/.well-known/oauth-protected-resource/mcp",
        "https://mcp.example.com/.well-known/oauth-authorization-server",
        "https://AUTH.example.com/token",
        "https://[fd00::7]/register",
        "https://10.1.2.3/token",  # a private address the person named
    ],
)
def test_the_origin_and_named_hosts_pass(url: str) -> None:
    assert REMOTE.check(url) == url


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://169.254.169.254/latest/meta-data/", "host '169.254.169.254' is not the server"),
        ("https://10.255.255.1/.well-known/x", "host '10.255.255.1' is not the server"),
        ("https://192.168.1.1/", "is not the server's own"),
        ("https://[fe80::1]/", "host 'fe80::1' is not"),
        ("http://127.0.0.1:9/token", "host '127.0.0.1' is not"),  # loopback: not here
        ("http://localhost/token", "host 'localhost' is not"),
        ("https://auth.example.com.evil.net/", "is not the server's own"),
        ("http://auth.example.com/token", "use https"),  # named, but in the clear
        ("http://mcp.example.com:9090/x", "use https"),  # its host, another origin
        ("ftp://mcp.example.com/x", "only http and https"),
        ("https://user:pw@auth.example.com/x", "user name or password"),
        ("/relative", "absolute http(s) URL"),
    ],
)
def test_everything_else_is_refused_saying_why(url: str, why: str) -> None:
    with pytest.raises(UrlRefused, match=re.escape(why)) as refused:
        REMOTE.check(url)
    assert str(refused.value).startswith("MCP server 'notes' OAuth")


def test_loopback_passes_where_the_door_allows_it() -> None:
    local = UrlPolicy(what="x", refusal="not allowed", origin="http://127.0.0.1:5/mcp")
    assert local.check("http://127.0.0.1:6/token") == "http://127.0.0.1:6/token"
    assert local.check("http://[::1]:7/") == "http://[::1]:7/"
    with pytest.raises(UrlRefused, match="not allowed"):
        local.check("http://169.254.169.254/")


def test_host_names_are_normalised() -> None:
    assert host_names([" Auth.Example.com ", "[FD00::7]", "", None]) == {
        "auth.example.com",
        "fd00::7",
    }
