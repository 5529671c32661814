"""The webhook URL policy: loopback (http or https), or https to an allowed host."""

from __future__ import annotations

import re

import pytest

from ducklm.server.agent_protocol.webhooks.policy import WebhookRefused, check_webhook, same_origin

ALLOWED = ["hooks.example.com"]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/hook",
        "https://127.0.0.2/hook",
        "http://localhost/hook",
        "http://LOCALHOST:9/x",
        "http://[::1]:8000/hook",
        "https://hooks.example.com/run-done",
        "https://HOOKS.example.com/run-done",
    ],
)
def test_allowed(url: str) -> None:
    assert check_webhook(url, ALLOWED) == url


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://hooks.example.com/x", "use https"),
        ("https://evil.example.com/x", "neither loopback nor in DUCK_WEBHOOK_HOSTS"),
        ("https://hooks.example.com.evil.net/x", "neither loopback nor in DUCK_WEBHOOK_HOSTS"),
        ("http://10.0.0.1/x", "neither loopback nor in DUCK_WEBHOOK_HOSTS"),
        ("http://169.254.169.254/latest", "neither loopback nor in DUCK_WEBHOOK_HOSTS"),
        ("http://0.0.0.0:80/x", "neither loopback nor in DUCK_WEBHOOK_HOSTS"),
        ("file:///etc/passwd", "absolute http(s) URL"),
        ("gopher://127.0.0.1/x", "only http and https"),
        ("/threads", "absolute http(s) URL"),
        ("http://user:secret@127.0.0.1/x", "user name or password"),
        ("http://127.0.0.1:99999/x", "absolute http(s) URL"),
        ("http://127.0.0.1/" + "x" * 5000, "longer than"),
    ],
)
def test_refused_saying_why(url: str, why: str) -> None:
    with pytest.raises(WebhookRefused, match=re.escape(why)):
        check_webhook(url, ALLOWED)


def test_a_password_is_not_repeated_in_the_refusal() -> None:
    with pytest.raises(WebhookRefused) as refused:
        check_webhook("http://user:secret@127.0.0.1/x", ALLOWED)
    assert "secret" not in str(refused.value)


def test_same_origin_is_scheme_host_and_port() -> None:
    assert same_origin("http://127.0.0.1:5/a", "http://127.0.0.1:5/b?c")
    assert not same_origin("http://127.0.0.1:5/a", "http://localhost:5/a")
    assert not same_origin("http://127.0.0.1:5/a", "http://127.0.0.1:6/a")
    assert not same_origin("http://127.0.0.1:5/a", "https://127.0.0.1:5/a")
