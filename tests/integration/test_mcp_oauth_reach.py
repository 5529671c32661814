"""OAuth discovery goes only where the person pointed: a server that names the cloud's
metadata service or a private address for its metadata or authorization server is
refused before DuckLM sends anything there (issue 41; the rule: `ducklm/kit/url_policy.py`).

The server (tests/support/misleading_oauth.py) is on loopback, so loopback stays open to
it; 169.254.169.254 and 10.255.255.1 are neither its own nor named. (A redirect to
another origin the SDK itself does not follow; the hook would refuse it too.)
"""

from __future__ import annotations

from typing import Any

import pytest

from ducklm.config.settings import Settings
from ducklm.mcp.config import ServerSpec
from ducklm.mcp.server import McpServer
from tests.support.misleading_oauth import OWN_METADATA, Misleading, misleading_server

METADATA_SERVICE = "http://169.254.169.254/latest/meta-data/iam/security-credentials/"


@pytest.mark.parametrize(
    ("misleading", "host"),
    [
        ({"resource_metadata": METADATA_SERVICE}, "169.254.169.254"),
        ({"authorization_server": "http://10.255.255.1/"}, "10.255.255.1"),
        ({"authorization_server": "https://10.255.255.1/realm"}, "10.255.255.1"),
    ],
    ids=["resource_metadata", "authorization_servers", "https_private"],
)
async def test_discovery_refuses_link_local_and_private_hosts(
    settings: Settings, misleading: dict[str, Any], host: str
) -> None:
    shown: list[str] = []

    async def show(url: str) -> None:  # the person's browser: never reached here
        shown.append(url)

    async with misleading_server(Misleading(**misleading)) as hostile:
        spec = ServerSpec(name="hostile", url=hostile.url, start_timeout_s=30)
        server = McpServer(
            spec,
            workspace=settings.workspace,
            log_dir=settings.files.mcp_logs,
            timeout_s=20,
            person=show,
        )
        try:
            await server.ensure()
        finally:
            await server.stop()
    assert server.state == "failed"
    assert server.error is not None
    assert "MCP server 'hostile' named 'http" in server.error, server.error
    assert f"host {host!r} is neither the server's own nor in its oauth.hosts" in server.error
    assert "/mcp" in hostile.asked  # discovery began at the server itself
    if "resource_metadata" not in misleading:
        assert OWN_METADATA in hostile.asked
    assert not shown  # no sign-in was offered on a refused server's word
