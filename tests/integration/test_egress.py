"""An approved network command reaches the hosts on its card, and never home.

Real parts: bubblewrap, curl inside it, the egress proxy in this process, and an HTTP
server of the test bound to every address. The machine's own LAN address stands for an
approved host (the only one a test can reach without the internet); loopback, by any
spelling, stands for DuckLM's own server and every local service.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ducklm.tools.sandbox.egress import ANY_HOST
from ducklm.tools.sandbox.landlock import abi_version
from ducklm.tools.sandbox.runner import ExecResult, Limits, Protection, run_sandboxed
from ducklm.tools.sandbox.view import View, bwrap_view, relay_interpreter
from tests.support.lan import LAN, needs_lan

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None or shutil.which("curl") is None,
    reason="needs bubblewrap and curl",
)
BODY = "HELLO-FROM-THE-HOST"


@dataclass
class Host:
    port: int
    requests: list[str] = field(default_factory=list)


@pytest.fixture
async def host() -> AsyncIterator[Host]:
    """An HTTP server on every address of this machine; records each request line."""
    found = Host(0)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = await reader.readline()
        found.requests.append(line.decode().strip())
        body = BODY.encode()
        writer.write(b"HTTP/1.0 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "0.0.0.0", 0)
    found.port = server.sockets[0].getsockname()[1]
    async with server:
        yield found


async def online(
    command: str,
    workspace: Path,
    hosts: tuple[str, ...],
    protection: Protection = "bubblewrap",
) -> ExecResult:
    """Run `command` as approved for the network, for `hosts`."""
    return await run_sandboxed(
        command,
        workspace=workspace,
        cwd=workspace,
        protection=protection,
        network=True,
        hosts=hosts,
        limits=Limits(timeout_s=15),
    )


async def curl(url: str, workspace: Path, hosts: tuple[str, ...]) -> ExecResult:
    return await online(f"curl -sS -m 5 {url}", workspace, hosts)


@needs_lan
async def test_an_approved_host_is_reached(workspace: Path, host: Host) -> None:
    address = str(LAN)
    result = await curl(f"http://{address}:{host.port}/page", workspace, (address,))

    assert BODY in result.output
    assert host.requests == ["GET /page HTTP/1.1"]
    assert result.hosts_reached == (address,)


LOOPBACK_SPELLINGS = [
    "http://127.0.0.1:{port}/",
    "http://localhost:{port}/",
    "http://127.1:{port}/",
    "http://2130706433:{port}/",
    "http://0.0.0.0:{port}/",
    "http://[::1]:{port}/",
    "http://[::ffff:127.0.0.1]:{port}/",
    "https://127.0.0.1:{port}/",
]


@pytest.mark.parametrize("url", LOOPBACK_SPELLINGS)
async def test_loopback_is_refused_even_when_approved_by_name(
    url: str, workspace: Path, host: Host
) -> None:
    approved = ("127.0.0.1", "localhost", "127.1", "2130706433", "0.0.0.0", "::1", ANY_HOST)
    result = await curl(url.format(port=host.port), workspace, approved)

    assert BODY not in result.output
    assert host.requests == []
    assert result.hosts_refused


@needs_lan
async def test_a_host_not_on_the_card_is_refused(workspace: Path, host: Host) -> None:
    address = str(LAN)
    result = await curl(f"http://{address}:{host.port}/", workspace, ("example.org",))

    assert BODY not in result.output
    assert host.requests == []
    assert result.hosts_refused == (address,)
    assert "refused" in result.output


@needs_lan
async def test_any_host_still_keeps_private_addresses_out(workspace: Path, host: Host) -> None:
    """`ANY_HOST` is any public host: a LAN service needs its own name on the card."""
    address = str(LAN)
    result = await curl(f"http://{address}:{host.port}/", workspace, (ANY_HOST,))

    assert host.requests == []
    assert result.hosts_refused == (address,)


@needs_lan
async def test_raw_sockets_have_no_way_out(workspace: Path, host: Host) -> None:
    """No route but the proxy: bash's /dev/tcp to an approved address goes nowhere."""
    address = str(LAN)
    result = await online(
        f"exec 3<>/dev/tcp/{address}/{host.port} && echo CONNECTED",
        workspace,
        (address,),
    )
    await asyncio.sleep(0.1)

    assert "CONNECTED" not in result.output
    assert host.requests == []


@needs_lan
async def test_the_proxy_is_gone_with_the_command(workspace: Path, host: Host) -> None:
    """A background child cannot keep a way out open after its command ended."""
    address = str(LAN)
    result = await online(
        f"(sleep 1; curl -sS -m 3 http://{address}:{host.port}/late > late.txt) & echo started",
        workspace,
        (address,),
    )
    await asyncio.sleep(2)

    assert "started" in result.output
    assert host.requests == []


needs_landlock_net = pytest.mark.skipif(abi_version() < 4, reason="no Landlock network rules")


@needs_landlock_net
@needs_lan
async def test_under_landlock_the_proxy_is_the_only_port(workspace: Path, host: Host) -> None:
    """Landlock names ports: the proxy's is open, the host's own port is not."""
    address = str(LAN)
    through = await online(
        f"curl -sS -m 5 http://{address}:{host.port}/via-proxy",
        workspace,
        (address,),
        "landlock",
    )
    direct = await online(
        f"curl -sS -m 5 --noproxy '*' http://{address}:{host.port}/direct; "
        f"curl -sS -m 5 http://127.0.0.1:{host.port}/loopback",
        workspace,
        (address,),
        "landlock",
    )

    assert BODY in through.output
    assert host.requests == ["GET /via-proxy HTTP/1.1"]
    assert BODY not in direct.output
    assert direct.hosts_refused == ("127.0.0.1",)


@pytest.mark.skipif(not os.access("/usr/bin/python3", os.X_OK), reason="no system python3")
def test_the_relay_brings_no_home_into_view(workspace: Path, tmp_path: Path) -> None:
    argv = bwrap_view(View(workspace=workspace, egress=tmp_path))
    binds = [argv[i + 2] for i, arg in enumerate(argv) if arg in ("--bind", "--ro-bind")]

    assert relay_interpreter() == "/usr/bin/python3"
    assert not [b for b in binds if b.startswith(("/root", "/home"))]
