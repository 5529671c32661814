"""Which webhook URLs a run may name: loopback, or https to a host the person allowed.

A webhook is a request DuckLM's server makes on a client's word, with the run's outcome
(its values: the conversation) in its body. So it goes only where the person running
DuckLM already sends things: this machine (`http` or `https` to `localhost`, 127.0.0.0/8
or `::1`), or `https` to a host named in `DUCK_WEBHOOK_HOSTS`. The rule is the one an
MCP server's OAuth obeys too (`ducklm/kit/url_policy.py`): names compared as written,
never resolved, and none looked up at run creation. A refused URL is a `422` saying why.
"""

from __future__ import annotations

from collections.abc import Collection

from ducklm.kit.url_policy import UrlPolicy, UrlRefused, host_names, same_origin

__all__ = ["WebhookRefused", "check_webhook", "same_origin"]

NOT_ALLOWED = (
    "neither loopback nor in DUCK_WEBHOOK_HOSTS; add it there (https only) to send runs' "
    "outcomes to it"
)

WebhookRefused = UrlRefused
"""A webhook URL the policy refuses; the message says why."""


def check_webhook(url: str, allowed_hosts: Collection[str]) -> str:
    """`url` if a run may send its outcome there.

    Raises:
        WebhookRefused: It may not (the message says why).
    """
    policy = UrlPolicy(what="webhook", refusal=NOT_ALLOWED, hosts=host_names(allowed_hosts))
    return policy.check(url)
