"""Where DuckLM sends a request on someone else's word: one URL rule for every such door.

Two doors fetch URLs that come from outside: a webhook (a client names it with a run)
and an MCP server's OAuth (the server names its protected resource metadata, its
authorization servers and their endpoints, and may redirect). Either could point DuckLM
at the cloud's metadata service (`169.254.169.254`) or a private network, so both obey
one rule. A URL passes when it is

- loopback (`localhost`, 127.0.0.0/8, `::1`) over http or https, where the door allows
  this machine (webhooks do; an MCP server's OAuth only when that server is on it);
- on the origin the person named (an MCP server's own scheme, host and port);
- https to a host the person named (`DUCK_WEBHOOK_HOSTS`; an MCP server's own host, its
  `oauth.issuer` and `oauth.hosts`).

Nothing else: link-local, private and public addresses and names alike need naming. Host
names are compared as written, never resolved (a name that resolves to loopback is not
loopback here), and a URL with a user name or password is refused (it would be stored or
sent on). A refused URL raises `UrlRefused`, whose message says why.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import SplitResult, urlsplit

MAX_URL = 4096
LOOPBACK_NAMES = frozenset({"localhost"})
NOT_ABSOLUTE = "{what} {url!r} is not a valid absolute http(s) URL"
BAD_SCHEME = "{what} {url!r}: only http and https are allowed, not {scheme!r}"
CREDENTIALS = "{what} URL with a user name or password: not allowed"
NOT_ALLOWED = "{what} {url!r}: host {host!r} is {refusal}"
PLAIN_HTTP = "{what} {url!r}: http to a host that is not loopback goes in the clear; use https"
TOO_LONG = "{what} URL longer than {max} characters"


class UrlRefused(ValueError):
    """A URL the policy refuses; the message says why."""


@dataclass(frozen=True, kw_only=True)
class UrlPolicy:
    """Where one door may send requests."""

    what: str
    """What the URL is for, as a refusal names it (`webhook`, `MCP server 'x' OAuth`)."""
    refusal: str
    """Why a host that is not allowed is not, and how to allow it (after `host 'h' is`)."""
    hosts: frozenset[str] = frozenset()
    """Hosts the person named (lower-case): https to them passes."""
    origin: str | None = None
    """An origin the person named (`scheme://host:port`): any URL on it passes."""
    loopback: bool = True
    """Whether this machine (http or https) passes."""
    _origin: tuple[str, str, int | None] | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        if self.origin is not None:
            object.__setattr__(self, "_origin", _origin_of(urlsplit(self.origin)))

    def check(self, url: str) -> str:
        """`url` if the door may send a request there.

        Raises:
            UrlRefused: It may not (the message says why, never a password).
        """
        if len(url) > MAX_URL:
            raise UrlRefused(TOO_LONG.format(what=self.what, max=MAX_URL))
        parts = self._split(url)
        host = (parts.hostname or "").lower()
        if self._origin is not None and _origin_of(parts) == self._origin:
            return url
        if self.loopback and is_loopback(host):
            return url
        if host not in self.hosts:
            shown = NOT_ALLOWED.format(what=self.what, url=url, host=host, refusal=self.refusal)
            raise UrlRefused(shown)
        if parts.scheme != "https":
            raise UrlRefused(PLAIN_HTTP.format(what=self.what, url=url))
        return url

    def _split(self, url: str) -> SplitResult:
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018  a bad port raises here, not when the request is sent
        except ValueError:
            raise UrlRefused(NOT_ABSOLUTE.format(what=self.what, url=url)) from None
        if not parts.scheme or not parts.hostname:
            raise UrlRefused(NOT_ABSOLUTE.format(what=self.what, url=url))
        if parts.scheme not in ("http", "https"):
            raise UrlRefused(BAD_SCHEME.format(what=self.what, url=url, scheme=parts.scheme))
        if parts.username is not None or parts.password is not None:
            raise UrlRefused(CREDENTIALS.format(what=self.what))
        return parts


def host_names(names: Iterable[str | None]) -> frozenset[str]:
    """Hosts as a policy compares them: lower-case, without IPv6 brackets; blanks dropped."""
    return frozenset(
        n.strip().lower().removeprefix("[").removesuffix("]") for n in names if n and n.strip()
    )


def same_origin(first: str, second: str) -> bool:
    """Whether two URLs have the same scheme, host and port (a redirect that may be followed)."""
    return _origin_of(urlsplit(first)) == _origin_of(urlsplit(second))


def is_loopback(host: str) -> bool:
    """Whether `host` (a URL's host, lowercased) is this machine, by name or address."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _origin_of(parts: SplitResult) -> tuple[str, str, int | None]:
    try:
        port = parts.port
    except ValueError:
        port = None
    return (parts.scheme.lower(), (parts.hostname or "").lower(), port)
