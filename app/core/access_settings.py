"""Who may call the service: bearer token models (stored as digests), MCP OAuth, and the caller limits.

Sections of `app.core.settings.Settings` (`service_tokens`, `oauth`, `access`, ...), read wherever a caller is judged.
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, Field, SecretStr

ALL_REPOS = "*"
"""A service token's `repos` entry that reads every repository."""


def token_digest(token: str) -> str:
    """The sha256 hex digest of a token: how tokens are stored in settings and keyed in caches."""
    return hashlib.sha256(token.encode()).hexdigest()


class AdminToken(BaseModel):
    """A bearer token for `/admin/*`, stored as its sha256 (`javakb token --admin` prints one)."""

    name: str = Field(min_length=1, description="Who holds it (shown in logs, never the token)")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="sha256 hex digest of the token")


class ServiceToken(AdminToken):
    """A bearer token for `/mcp` and `/api/v1/*` limited to repository path prefixes (`javakb token` prints one)."""

    repos: list[str] = Field(
        min_length=1, description="Repository paths or group prefixes ending in '/'; '*' reads everything"
    )


class IndexJobToken(AdminToken):
    """A bearer token for `POST /api/v1/index-jobs` of one project (`javakb token --project ID` prints one)."""

    project_id: int = Field(ge=1, description="The GitLab project this token may ask to index, and no other")


class OAuthSettings(BaseModel):
    """MCP OAuth with GitLab as the identity provider (a GitLab OAuth application with scope `read_api`)."""

    client_id: str | None = Field(default=None, description="The GitLab OAuth application's id")
    client_secret: SecretStr | None = Field(default=None, description="The GitLab OAuth application's secret")
    public_url: str | None = Field(
        default=None, description="This service's public base URL, e.g. https://kb.example.com"
    )
    jwt_signing_key: SecretStr | None = Field(default=None, description="Signs the tokens the proxy issues to clients")
    scopes: list[str] = Field(default_factory=lambda: ["read_api"], description="GitLab scopes asked for")
    require_consent: bool = Field(default=True, description="Show a consent page before a new MCP client is let in")
    max_clients: int = Field(
        default=10_000, ge=1, description="Registered MCP clients kept at most; registration answers 429 beyond"
    )
    max_registrations_per_address: int = Field(
        default=20, ge=1, description="Registrations one client address may make per `pending_ttl_s`"
    )
    pending_ttl_s: float = Field(
        default=900.0, gt=0, description="A registered client that completes no sign-in in this time is forgotten"
    )
    max_body_bytes: int = Field(
        default=8192, ge=1024, description="Larger requests to the OAuth endpoints (/register, /token, ...) get 413"
    )
    max_field_chars: int = Field(
        default=1000,
        ge=64,
        description="Longest string a registration may carry; lists at most a 50th of it in items (20); beyond: 400",
    )
    rate_per_s: float = Field(
        default=2.0, gt=0, description="Requests per second per client address to the OAuth endpoints"
    )
    rate_burst: int = Field(default=60, ge=1, description="Bucket size of the OAuth endpoints' per-address limit")

    @property
    def enabled(self) -> bool:
        """Whether the OAuth proxy is served (client id, secret and public URL all set)."""
        return bool(self.client_id and self.client_secret and self.public_url)


class AccessSettings(BaseModel):
    """Permission caching, rate limits and query caps for `/mcp` and `/api/v1/*`."""

    ttl_s: float = Field(default=60.0, gt=0, description="How long a GitLab identity's readable projects are cached")
    rate_per_s: float = Field(default=10.0, gt=0, description="Requests per second per credential (token bucket)")
    rate_burst: int = Field(default=60, ge=1, description="Bucket size: requests a credential may send at once")
    max_query_chars: int = Field(default=2000, ge=16, description="Longer search queries are refused")
    max_query_terms: int = Field(default=64, ge=1, description="Queries with more words are refused")
    refresh_every_s: float = Field(
        default=60.0, gt=0, description="Least time between two agent refreshes (`refresh_repo`) of one project"
    )
    visibility_every_s: float = Field(
        default=15.0,
        gt=0,
        description="How often GitLab is asked which projects changed visibility (at most half of `ttl_s`), so a"
        " project made private leaves every cached access within `ttl_s` even without its `project_update` hook",
    )
