"""The `oauth` block of an HTTP server in mcp.json: what it takes, and what it refuses."""

from __future__ import annotations

import json

import pytest

from ducklm.mcp.config import McpConfigError, ServerSpec, parse_mcp_config
from ducklm.mcp.variables import UnsetVariable

URL = "https://mcp.example.com/mcp"


def _one(oauth: object, **extra: object) -> ServerSpec:
    (spec,) = parse_mcp_config(
        json.dumps({"mcpServers": {"a": {"url": URL, "oauth": oauth, **extra}}})
    )
    return spec


def test_a_server_needs_no_block_and_takes_claude_codes_spelling() -> None:
    (plain,) = parse_mcp_config(json.dumps({"mcpServers": {"a": {"url": URL}}}))
    assert plain.oauth is None and not plain.static_authorization
    spec = _one({"clientId": "duck", "callbackPort": 8976})
    assert spec.oauth is not None
    assert (spec.oauth.client_id, spec.oauth.callback_port) == ("duck", 8976)
    assert spec.oauth.needs_person


def test_client_credentials_take_a_secret_or_a_key_and_fill_variables() -> None:
    spec = _one({"grant": "client_credentials", "client_id": "m", "client_secret": "${SECRET}"})
    assert spec.oauth is not None and not spec.oauth.needs_person
    filled = spec.expanded({"SECRET": "s3"})
    assert filled.oauth is not None and filled.oauth.client_secret == "s3"
    with pytest.raises(UnsetVariable, match=r"SECRET is not set \(named in oauth.client_secret\)"):
        spec.expanded({})
    keyed = _one({"grant": "client_credentials", "client_id": "m", "private_key_file": "~/k.pem"})
    assert keyed.oauth is not None and keyed.oauth.signing_algorithm == "RS256"


@pytest.mark.parametrize(
    ("oauth", "extra", "says"),
    [
        ({"scopes": ["a"]}, {}, "oauth.scopes: unknown field"),
        ({"client_secret": "s"}, {}, "'client_secret' needs the 'client_id' it belongs to"),
        ({"grant": "client_credentials"}, {}, "grant 'client_credentials' needs 'client_id'"),
        (
            {"grant": "client_credentials", "client_id": "m"},
            {},
            "needs 'client_secret' or 'private_key_file'",
        ),
        (
            {
                "grant": "client_credentials",
                "client_id": "m",
                "client_secret": "s",
                "private_key_file": "k",
            },
            {},
            "needs 'client_secret' or 'private_key_file'",
        ),
        (
            {
                "grant": "client_credentials",
                "client_id": "m",
                "client_secret": "s",
                "callback_port": 1,
            },
            {},
            "'callback_port' and 'client_metadata_url' are not for grant 'client_credentials'",
        ),
        ({"private_key_file": "k"}, {}, "'private_key_file' is not for grant 'authorization"),
        ({"client_metadata_url": "http://x/doc"}, {}, "must be an https URL with a path"),
        ({"client_metadata_url": "https://x/"}, {}, "must be an https URL with a path"),
        ({"callbackPort": 0}, {}, "oauth.callbackPort: Input should be greater than or equal"),
        ({"grant": "device"}, {}, "oauth.grant: Input should be"),
        ({"client_secret": "${DUCK_API_TOKEN}", "client_id": "c"}, {}, "DUCK_* variables"),
        ({}, {"headers": {"authorization": "Bearer t"}}, "either an 'Authorization' header or"),
    ],
)
def test_a_bad_block_names_what_is_wrong(
    oauth: object, extra: dict[str, object], says: str
) -> None:
    with pytest.raises(McpConfigError) as caught:
        _one(oauth, **extra)
    assert says in str(caught.value)
    assert "server 'a'" in str(caught.value)


def test_oauth_is_for_url_servers() -> None:
    text = json.dumps({"mcpServers": {"a": {"command": "x", "oauth": {}}}})
    with pytest.raises(McpConfigError, match="'headers' and 'oauth' are for 'url' servers"):
        parse_mcp_config(text)
