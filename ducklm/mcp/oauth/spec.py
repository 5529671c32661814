"""The `oauth` block of an HTTP server in `mcp.json`.

A server behind OAuth needs no block at all: DuckLM discovers its authorization server
and registers itself (dynamic client registration) when the person runs `ducklm mcp
login NAME`. The block is for what discovery cannot know: a client registered by hand
(`client_id`, `client_secret`, `callback_port`, as Claude Code's `clientId` and
`callbackPort`), a client ID metadata document DuckLM's person hosts
(`client_metadata_url`), or a machine's own credentials (`grant: client_credentials`
with a secret or a private key file), which need no person. Scopes are not configured:
the server names the ones it needs (its `WWW-Authenticate` header or its metadata) and
asks again for more when a call needs them (step-up). Where discovery may lead is the
person's to say: the server's own host, `issuer`'s, and `hosts` (`oauth/reach.py`).
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, model_validator

NOT_FOR_GRANT = "{fields} {verb} for grant {grant!r}"
NEEDS_ONE_SECRET = "grant 'client_credentials' needs 'client_secret' or 'private_key_file'"


class OAuthSpec(BaseModel):
    """How DuckLM gets a token for one server."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    grant: Literal["authorization_code", "client_credentials"] = "authorization_code"
    """`authorization_code`: a person signs in (`ducklm mcp login`); `client_credentials`:
    DuckLM's own credentials, no person."""
    client_id: str | None = Field(default=None, alias="clientId", min_length=1)
    """A client registered by hand; registered dynamically when unset."""
    client_secret: str | None = Field(default=None, alias="clientSecret", min_length=1)
    """Its secret (write `${VAR}`: the file is not the place for it)."""
    token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post", "none"] = (
        "client_secret_basic"
    )
    """How a configured secret is sent to the token endpoint."""
    callback_port: int | None = Field(default=None, alias="callbackPort", ge=1, le=65535)
    """The loopback port of the redirect, when the client was registered with a fixed one."""
    client_metadata_url: str | None = Field(default=None, alias="clientMetadataUrl")
    """An https URL of a client ID metadata document, used where the server supports it."""
    private_key_file: str | None = None
    """client_credentials: a PEM private key that signs the client's assertion."""
    signing_algorithm: Literal["RS256", "ES256", "PS256", "EdDSA"] = "RS256"
    """client_credentials with a key: the assertion's algorithm."""
    issuer: str | None = None
    """The authorization server the configured credentials belong to; they go nowhere else."""
    hosts: tuple[str, ...] = ()
    """Hosts besides the server's own (and `issuer`'s) that its OAuth may reach, over https:
    an authorization server elsewhere. Any other host the server names is refused."""

    @model_validator(mode="after")
    def _fits_grant(self) -> OAuthSpec:
        if self.client_metadata_url is not None and not _is_metadata_url(self.client_metadata_url):
            raise ValueError("'client_metadata_url' must be an https URL with a path")
        if self.issuer is not None and not self.issuer.startswith(("http://", "https://")):
            raise ValueError("'issuer' must be the authorization server's http(s) URL")
        if self.grant == "client_credentials":
            return self._client_credentials()
        if self.client_secret is not None and self.client_id is None:
            raise ValueError("'client_secret' needs the 'client_id' it belongs to")
        if self.private_key_file is not None:
            raise ValueError(_not_for("'private_key_file'", self.grant))
        return self

    def _client_credentials(self) -> OAuthSpec:
        if self.client_id is None:
            raise ValueError("grant 'client_credentials' needs 'client_id'")
        if (self.client_secret is None) == (self.private_key_file is None):
            raise ValueError(
                "grant 'client_credentials' needs 'client_secret' or 'private_key_file'"
            )
        if self.callback_port is not None or self.client_metadata_url is not None:
            raise ValueError(_not_for("'callback_port' and 'client_metadata_url'", self.grant))
        if self.token_endpoint_auth_method == "none":
            raise ValueError("grant 'client_credentials' authenticates: not 'none'")
        return self

    @property
    def needs_person(self) -> bool:
        """Whether a person signs in to get the first token."""
        return self.grant == "authorization_code"


def _not_for(fields: str, grant: str) -> str:
    verb = "are not" if " and " in fields else "is not"
    return NOT_FOR_GRANT.format(fields=fields, verb=verb, grant=grant)


def _is_metadata_url(url: str) -> bool:
    parsed = urlparse(url)
    return parsed.scheme == "https" and bool(parsed.netloc) and parsed.path not in ("", "/")
