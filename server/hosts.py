"""Which host names this server answers to: exact names only (the DNS rebinding defence).

DNS rebinding points a name the attacker owns (`127.0.0.1.attacker.example`) at this
machine, so the browser lets the attacker's page read the answers. The only defence is
the `Host` header, and only exact matching works: anything that merely starts like a
loopback name can be registered by anyone. So a name passes when it is an IP literal
that `ipaddress` parses as loopback (which already refuses `127.1`, `2130706433`,
`0x7f.1`, `0177.0.0.1`), exactly `localhost`, or exactly one of the allowed names.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

LOCALHOST = "localhost"
DEFAULT_PORTS = {"http": 80, "https": 443}


def host_name(host_header: str) -> str | None:
    """The name of a `Host` header without its port, lower-cased; `None` if malformed.

    `[::1]:8000` -> `::1`, `LocalHost:80` -> `localhost`, `::1` (IPv6 without its
    brackets) -> `None`, `a:b` (a port that is not a number) -> `None`.
    """
    host = host_header.strip().lower()
    if host.startswith("["):
        inner, bracket, port = host[1:].partition("]")
        # Brackets hold IPv6 literals only (a URL cannot bracket a name or IPv4).
        if not bracket or ":" not in inner or not _is_port(port, after_colon=True):
            return None
        return inner
    name, colon, port = host.partition(":")
    if colon and not _is_port(port):
        return None
    return name or None


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only: a bind address or a `Host` header's name.

    True for `localhost` and IP literals in 127.0.0.0/8 or `::1` (bracketed or not).
    IPv4-mapped (`::ffff:127.0.0.1`) and zoned (`::1%lo`) forms are refused: nobody
    types them, and every extra spelling accepted is one more to get wrong.
    """
    name = host.strip().lower()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if name == LOCALHOST:
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and (address.ipv4_mapped or address.scope_id):
        return False
    return address.is_loopback


def normal_names(names: Iterable[str]) -> frozenset[str]:
    """`DUCK_ALLOWED_HOSTS` entries as `host_name` returns names (lower-case, no brackets)."""
    return frozenset(n.strip().lower().removeprefix("[").removesuffix("]") for n in names)


def is_allowed_host(host_header: str, allowed: frozenset[str]) -> bool:
    """Whether a request's `Host` header is loopback or exactly one of `allowed`.

    `localhost.` (a trailing dot) is refused: it is another name in DNS, which a
    resolver may answer for, and no browser sends it unless a person types it.
    """
    name = host_name(host_header)
    return name is not None and (is_loopback(name) or name in allowed)


def absolute_target(raw_path: bytes) -> tuple[str, str, bytes] | None:
    """An absolute-form target's scheme, authority and path, else `None`.

    `http://Evil.example:80/a` -> (`http`, `evil.example:80`, `/a`); a bare
    `http://host` has the path `/`. The path is as sent (percent-encoded).
    """
    for scheme in ("http", "https"):
        prefix = f"{scheme}://".encode()
        if raw_path[: len(prefix)].lower() == prefix:
            authority, slash, path = raw_path[len(prefix) :].partition(b"/")
            return scheme, authority.decode("latin-1").lower(), slash + path or b"/"
    return None


def same_authority(authority: str, host_header: str, scheme: str) -> bool:
    """Whether a target's authority names exactly the `Host` header's host and port.

    A port left out is the scheme's own (80 for http, 443 for https); a user name
    (`http://user@host/`) never matches: a request target may not carry one.
    """
    if "@" in authority:
        return False
    default = DEFAULT_PORTS[scheme]
    target = _endpoint(authority, default)
    return target is not None and target == _endpoint(host_header, default)


def _endpoint(authority: str, default_port: int) -> tuple[str, int] | None:
    name = host_name(authority)
    if name is None:
        return None
    text = authority.strip().lower()
    tail = text.rsplit("]", 1)[1] if text.startswith("[") else text.partition(name)[2]
    return name, int(tail[1:]) if tail[1:] else default_port


def _is_port(text: str, *, after_colon: bool = False) -> bool:
    if after_colon:  # what follows `]`: nothing, or `:` and the port
        if not text:
            return True
        if not text.startswith(":"):
            return False
        text = text[1:]
    # ASCII digits only: str.isdigit() also accepts "²" and other scripts' digits.
    return text.isascii() and text.isdigit() and len(text) <= 5
