"""This machine's own address on its network: the one host a test can reach through the
sandbox's egress proxy without the internet (loopback it never lets through)."""

from __future__ import annotations

import socket

import pytest


def lan_address() -> str | None:
    """This machine's address on its network (no packet is sent), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") else address


LAN = lan_address()
needs_lan = pytest.mark.skipif(LAN is None, reason="this machine has no address but loopback")
