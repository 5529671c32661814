"""Which webhook URLs a run may name: loopback, or https to a host the person allowed.

A webhook is a request DuckLM's server makes on a client's word, with the run's outcome
(its values: the conversation) in its body. So it goes only where the person running
DuckLM already sends things: this machine (`http` or `https` to `localhost`, 127.0.0.0/8
or `::1`), or `https` to a host named in `DUCK_WEBHOOK_HOSTS`. Host names are compared
as written, never resolved: a name that resolves to loopback is not loopback here, and
no name is looked up at run creation. A refused URL is a `422` saying why.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection
from urllib.parse import SplitResult, urlsplit

MAX_URL = 4096
LOOPBACK_NAMES = frozenset({"localhost"})
NOT_ABSOLUTE = "webhook {url!r} is not a valid absolute http(s) URL"
BAD_SCHEME = "webhook {url!r}: only http and https are allowed, not {scheme!r}"
CREDENTIALS = "webhook URL with a user name or password: not allowed (it would be stored)"
NOT_ALLOWED = (
    "webhook {url!r}: host {host!r} is neither loopback nor in DUCK_WEBHOOK_HOSTS; "
    "add it there (https only) to send runs' outcomes to it"
)
PLAIN_HTTP = (
    "webhook {url!r}: http to a host that is not loopback sends the run's outcome in the "
    "clear; use https"
)
TOO_LONG = f"webhook URL longer than {MAX_URL} characters"


class WebhookRefused(ValueError):
    """A webhook URL the policy refuses; the message says why."""


def check_webhook(url: str, allowed_hosts: Collection[str]) -> str:
    """`url` if a run may send its outcome there.

    Raises:
        WebhookRefused: It may not (the message says why).
    """
    if len(url) > MAX_URL:
        raise WebhookRefused(TOO_LONG)
    parts = _split(url)
    host = (parts.hostname or "").lower()
    if is_loopback(host):
        return url
    if host not in {h.lower() for h in allowed_hosts}:
        raise WebhookRefused(NOT_ALLOWED.format(url=url, host=host))
    if parts.scheme != "https":
        raise WebhookRefused(PLAIN_HTTP.format(url=url))
    return url


def same_origin(first: str, second: str) -> bool:
    """Whether two URLs have the same scheme, host and port (a redirect that may be followed)."""
    a, b = urlsplit(first), urlsplit(second)
    return (a.scheme, a.hostname, a.port) == (b.scheme, b.hostname, b.port)


def is_loopback(host: str) -> bool:
    """Whether `host` (a URL's host, lowercased) is this machine, by name or address."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _split(url: str) -> SplitResult:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  a bad port raises here, not at delivery
    except ValueError:
        raise WebhookRefused(NOT_ABSOLUTE.format(url=url)) from None
    if not parts.scheme or not parts.hostname:
        raise WebhookRefused(NOT_ABSOLUTE.format(url=url))
    if parts.scheme not in ("http", "https"):
        raise WebhookRefused(BAD_SCHEME.format(url=url, scheme=parts.scheme))
    if parts.username is not None or parts.password is not None:
        raise WebhookRefused(CREDENTIALS)
    return parts
