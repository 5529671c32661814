"""The only way out of an approved network command: a proxy for the hosts the person approved.

A sandboxed command never shares DuckLM's network. Under bubblewrap it gets a network
namespace of its own, with only its own loopback; the one thing in it that leads out is
a Unix socket bound into the sandbox, behind which this proxy runs in DuckLM's process
(`forward.py` relays the sandbox's `127.0.0.1:3128` to it; `HTTP(S)_PROXY` point there).
Under Landlock (ABI 4+) the proxy listens on a free loopback port, the only TCP port
the command may connect to (Landlock names ports, not addresses: the same port number
on another machine is reachable too). So the command can reach exactly what the proxy
lets through:

- only the hosts of the card (`curl example.org` approves `example.org` and its
  subdomains); `ANY_HOST` when the policy could not tell which, shown so on the card;
- never a loopback, unspecified, link-local or multicast address, whatever the name
  resolves to: DuckLM's own server and every local service stay out of reach, also
  through a DNS name that points home;
- a private address (LAN, 10/8, fc00::/7) only when the person approved that very name,
  not through `ANY_HOST`.

The proxy resolves names itself and connects to the address it checked, so a name
cannot be checked as one address and reached as another. It speaks HTTP `CONNECT`
(https, git, pip, npm) and plain `http://` requests; protocols that need a raw socket
(ssh, nc, ping) have no way out. What it refused is kept for the tool call's facts.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

ANY_HOST = "*"
"""In an approved host list: any public host (the policy could not tell which)."""
SOCKET_NAME = "egress.sock"
MAX_HEAD_BYTES = 16 << 10
CONNECT_TIMEOUT_S = 15.0
RELAY_CHUNK = 64 << 10
REFUSED = "DuckLM's sandbox refused {host}: {why}\n"
NOT_APPROVED = "not among the hosts the person approved ({hosts})"
LOCAL_ADDRESS = "it resolves to {address}, a local address no sandboxed command may reach"
PRIVATE_ADDRESS = "it resolves to {address}, a private address; only a host named on the card may"
NO_ADDRESS = "the name does not resolve"
BAD_REQUEST = "the request is not an HTTP proxy request"


@dataclass
class EgressLog:
    """Which hosts a command reached and which it was refused, in order, once each."""

    reached: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    port: int = 0
    """The proxy's TCP port on loopback (for Landlock); 0 when it is on a Unix socket."""

    def note(self, host: str, *, allowed: bool) -> None:
        """Keep `host` under reached or refused."""
        seen = self.reached if allowed else self.refused
        if host not in seen:
            seen.append(host)


def host_allowed(host: str, approved: tuple[str, ...]) -> bool:
    """Whether `host` is one of `approved` or a subdomain of one (or any is approved)."""
    host = host.lower().rstrip(".")
    if ANY_HOST in approved:
        return True
    return any(host == a or host.endswith("." + a) for a in approved)


def address_refusal(address: str, *, named: bool) -> str | None:
    """Why `address` may not be reached, or None. `named`: the card names its host."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback or ip.is_unspecified or ip.is_link_local or ip.is_multicast:
        return LOCAL_ADDRESS.format(address=address)
    if ip.is_private and not named:
        return PRIVATE_ADDRESS.format(address=address)
    return None


@contextlib.asynccontextmanager
async def egress_proxy(folder: Path | None, approved: tuple[str, ...]) -> AsyncIterator[EgressLog]:
    """Serve the proxy for one command; yields what it let through.

    On `folder/egress.sock` (bubblewrap binds the folder in), or with no folder on a
    free TCP port of 127.0.0.1 (Landlock, whose command may connect to that port only).
    """
    seen = EgressLog()
    handlers: set[asyncio.Task[None]] = set()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        handlers.add(task)
        try:
            await _handle(reader, writer, approved, seen)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # the command hung up, or sent no proxy request: nothing to tell it
        finally:
            handlers.discard(task)
            writer.close()

    if folder is not None:
        path = str(folder / SOCKET_NAME)
        server = await asyncio.start_unix_server(serve, path=path, limit=MAX_HEAD_BYTES)
    else:
        server = await asyncio.start_server(serve, "127.0.0.1", 0, limit=MAX_HEAD_BYTES)
        seen.port = server.sockets[0].getsockname()[1]
    try:
        yield seen
    finally:
        server.close()
        # Relays still open belong to a command that has ended (its namespace is gone);
        # Python 3.11's server does not end them itself.
        for task in list(handlers):
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        await server.wait_closed()


async def _handle(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    approved: tuple[str, ...],
    seen: EgressLog,
) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    request = _parse_head(head)
    if request is None:
        await _refuse(writer, 400, "?", BAD_REQUEST)
        return
    method, host, port, rest = request
    if not host_allowed(host, approved):
        seen.note(host, allowed=False)
        await _refuse(writer, 403, host, NOT_APPROVED.format(hosts=", ".join(approved) or "none"))
        return
    named = any(host_allowed(host, (a,)) for a in approved if a != ANY_HOST)
    address, why = await _resolve(host, port, named=named)
    if address is None:
        seen.note(host, allowed=False)
        await _refuse(writer, 502 if why == NO_ADDRESS else 403, host, why)
        return
    try:
        async with asyncio.timeout(CONNECT_TIMEOUT_S):
            up_reader, up_writer = await asyncio.open_connection(address, port)
    except (OSError, TimeoutError) as exc:
        await _refuse(writer, 502, host, f"could not connect: {exc}")
        return
    seen.note(host, allowed=True)
    if method == "CONNECT":
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    else:
        up_writer.write(rest)
    await writer.drain()
    try:
        await asyncio.gather(_relay(reader, up_writer), _relay(up_reader, writer))
    finally:
        up_writer.close()


def _parse_head(head: bytes) -> tuple[str, str, int, bytes] | None:
    """(method, host, port, what to send upstream) of a proxy request, or None."""
    line, _, headers = head.partition(b"\r\n")
    parts = line.decode("latin-1").split(" ")
    if len(parts) != 3:
        return None
    method, target, version = parts
    if method == "CONNECT":
        host, port = _host_port(target, 443)
        return (method, host, port, b"") if host else None
    scheme, sep, rest = target.partition("://")
    if not sep or scheme.lower() != "http":
        return None
    authority, slash, path = rest.partition("/")
    host, port = _host_port(authority.rpartition("@")[2], 80)
    if not host:
        return None
    origin = f"{method} /{path if slash else ''} {version}\r\n".encode("latin-1")
    return method, host, port, origin + headers


def _host_port(authority: str, default: int) -> tuple[str, int]:
    if authority.startswith("["):  # [::1]:443
        host, _, tail = authority[1:].partition("]")
        port = tail[1:] if tail.startswith(":") else ""
    else:
        host, _, port = authority.partition(":")
    try:
        number = int(port) if port else default
    except ValueError:
        return "", 0
    return host.lower().rstrip("."), number if 0 < number < 65536 else 0


async def _resolve(host: str, port: int, *, named: bool) -> tuple[str | None, str]:
    """The first address of `host` the sandbox may reach, or None and why not."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return None, NO_ADDRESS
    why = NO_ADDRESS
    for info in infos:
        address = str(info[4][0])
        refusal = address_refusal(address, named=named)
        if refusal is None:
            return address, ""
        why = refusal
    return None, why


async def _refuse(writer: asyncio.StreamWriter, status: int, host: str, why: str) -> None:
    body = REFUSED.format(host=host, why=why).encode()
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
        + body
    )
    await writer.drain()


async def _relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(RELAY_CHUNK):
            writer.write(chunk)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        with contextlib.suppress(OSError):
            if writer.can_write_eof():
                writer.write_eof()
