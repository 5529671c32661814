"""The model-server ping tells a server that is busy or hung from one that is not there."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from ducklm.models import ping


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A port that takes connections and never answers: a busy llama-server, seen from
    outside (its one slot holds a long reply, so the kernel queues our request)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)  # never accepted: connections wait in the kernel's backlog
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    finally:
        sock.close()


async def test_a_server_that_does_not_answer_is_not_called_unreachable(
    silent_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ping, "PING_TIMEOUT_S", 0.3)
    check = await ping.ping_model_server(silent_server)
    assert not check.ok
    assert check.detail == "did not answer GET /models within 0.3 s"
    assert "busy" in check.fix
    assert check.fix != ping.UNREACHABLE_FIX


async def test_an_empty_port_is_unreachable(unused_tcp_port: int) -> None:
    check = await ping.ping_model_server(f"http://127.0.0.1:{unused_tcp_port}/v1")
    assert (check.ok, check.detail, check.fix) == (False, "not reachable", ping.UNREACHABLE_FIX)
