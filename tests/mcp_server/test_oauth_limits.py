"""Issue 24: the OAuth proxy's public endpoints are bounded (client count, sizes, per-address rates, expiry).

The served app (`create_app`) with OAuth on, over Starlette's test client; the client address of
each request comes from a test header (`PeerFromHeader`: the process edge a real peer would set),
and the clock is injected, so the registration window and the client expiry pass without sleeping.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any, Final

import pytest
from pydantic import SecretStr
from starlette.testclient import TestClient
from starlette.types import ASGIApp, Receive, Scope, Send

from app.core.access_settings import OAuthSettings
from app.core.settings import GitLabSettings, PostgresSettings, QdrantSettings, QueueSettings, Settings
from entry.web import create_app
from mcp_server.auth import CredentialVerifier, build_auth
from mcp_server.oauth_limits import CLIENTS, UPSTREAM_TOKENS, ClientLimits, oauth_paths, oversized_field
from mcp_server.server import create_server
from tests.support.tenants import ManualClock

REDIRECT: Final = "http://127.0.0.1:9/callback"
TTL: Final = 600.0


class PeerFromHeader:
    """Test edge: the request's client address is its `x-test-peer` header (uvicorn sets it from the socket)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            peer = dict(scope["headers"]).get(b"x-test-peer", b"192.0.2.1").decode()
            scope = {**scope, "client": (peer, 40000)}
        await self.app(scope, receive, send)


def oauth_settings(dsn: str, redis_url: str, **limits: Any) -> Settings:
    oauth = OAuthSettings(
        client_id="upstream-app",
        client_secret=SecretStr(secrets.token_hex(16)),
        public_url="http://127.0.0.1:8080",
        jwt_signing_key=SecretStr(secrets.token_hex(32)),
        pending_ttl_s=TTL,
        **limits,
    )
    return Settings(
        postgres=PostgresSettings(dsn=SecretStr(dsn)),
        redis=QueueSettings(url=redis_url, queue="javakb:test-oauth-limits"),
        qdrant=QdrantSettings(path=":memory:"),
        gitlab=GitLabSettings(url="http://127.0.0.1:1"),  # never called: no sign-in completes here
        oauth=oauth,
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def serve(settings: Settings, clock: ManualClock) -> TestClient:
    app = create_app(settings, clock=clock)
    app.add_middleware(PeerFromHeader)  # outermost: the address is set before any middleware reads it
    return TestClient(app, follow_redirects=False)


def register(client: TestClient, peer: str = "192.0.2.1", **fields: Any) -> Any:
    body = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", "client_name": "agent"} | fields
    return client.post("/register", json=body, headers={"x-test-peer": peer})


def authorize(client: TestClient, client_id: str) -> Any:
    params = {
        "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "s",
        "code_challenge": "c" * 43, "code_challenge_method": "S256",
    }  # fmt: skip
    return client.get("/authorize", params=params, headers={"x-test-peer": "198.51.100.7"})


@pytest.fixture
def small(clean_db: str, clean_redis: str, clock: ManualClock) -> Iterator[TestClient]:
    settings = oauth_settings(clean_db, clean_redis, max_clients=2, max_registrations_per_address=10)
    with serve(settings, clock) as client:
        yield client


def test_oversized_bodies_and_fields_are_refused_and_nothing_of_them_is_kept(small: TestClient) -> None:
    megabyte = register(small, client_name="n" * 1024 * 1024)
    huge = register(small, client_name="n" * 20 * 1024 * 1024)
    long_name = register(small, client_name="n" * 2000)
    many_uris = register(small, redirect_uris=[f"http://127.0.0.1:{p}/cb" for p in range(1000, 1030)])
    long_key = register(small, **{"k" * 2000: "v"})

    assert (megabyte.status_code, huge.status_code) == (413, 413)
    assert megabyte.json()["error"] == "invalid_request" and "8192" in megabyte.json()["error_description"]
    assert long_name.status_code == 400 and long_name.json() == {
        "error": "invalid_client_metadata",
        "error_description": "client_name is longer than 1000 characters",
    }
    assert many_uris.status_code == 400 and "redirect_uris has more than 20 items" in many_uris.text
    assert long_key.status_code == 400 and "a field name" in long_key.text
    # Nothing refused was stored: the two clients allowed are still free.
    assert [register(small).status_code for _ in range(3)] == [201, 201, 429]


def test_registrations_beyond_the_per_address_limit_get_429_until_the_window_passes(
    clean_db: str, clean_redis: str, clock: ManualClock
) -> None:
    settings = oauth_settings(clean_db, clean_redis, max_registrations_per_address=3)
    with serve(settings, clock) as client:
        first = [register(client, peer="203.0.113.1").status_code for _ in range(4)]
        refused = register(client, peer="203.0.113.1")
        other = register(client, peer="203.0.113.2")
        clock.advance(TTL)
        again = register(client, peer="203.0.113.1")

    assert first == [201, 201, 201, 429]
    assert refused.headers["retry-after"] == str(int(TTL))
    assert "too many client registrations from this address" in refused.json()["error"]
    assert other.status_code == 201  # another address has its own count
    assert again.status_code == 201


def test_registrations_beyond_the_total_get_429(small: TestClient) -> None:
    statuses = [register(small, peer=f"203.0.113.{i}").status_code for i in range(1, 5)]
    assert statuses == [201, 201, 429, 429]
    assert "as many OAuth clients as it may" in register(small, peer="203.0.113.9").json()["error"]


def test_a_client_that_never_signs_in_is_forgotten(small: TestClient, clock: ManualClock) -> None:
    client_id = register(small).json()["client_id"]
    register(small)
    assert register(small).status_code == 429  # full
    assert authorize(small, client_id).status_code == 302
    clock.advance(TTL - 1)
    assert authorize(small, client_id).status_code == 302

    clock.advance(1)
    gone = authorize(small, client_id)
    assert gone.status_code == 400 and "not registered" in gone.text  # MCP clients then register again
    assert register(small).status_code == 201  # and its place is free


async def test_a_client_that_signed_in_is_kept_past_the_window(clock: ManualClock) -> None:
    limits = ClientLimits(OAuthSettings(pending_ttl_s=TTL, max_clients=5), clock)
    await limits.put("signed", {"client_id": "signed"}, collection=CLIENTS)
    await limits.put("idle", {"client_id": "idle"}, collection=CLIENTS)
    await limits.put("token-1", {"client_id": "signed", "access_token": "t"}, collection=UPSTREAM_TOKENS)
    clock.advance(TTL)

    assert await limits.get("signed", collection=CLIENTS) == {"client_id": "signed"}
    assert await limits.get("idle", collection=CLIENTS) is None
    assert limits.clients == 1


def test_the_collections_named_are_the_proxys_own(clean_db: str, clean_redis: str) -> None:
    # Expiry and sign-in tracking key on fastmcp's collection names: an upgrade that renames them fails here.
    settings = oauth_settings(clean_db, clean_redis)
    limits = ClientLimits(settings.oauth)
    auth: Any = build_auth(settings, lambda: None, limits)  # type: ignore[arg-type,return-value]
    assert not isinstance(auth, CredentialVerifier)
    assert auth.server._client_store._default_collection == CLIENTS
    assert auth.server._upstream_token_store._default_collection == UPSTREAM_TOKENS
    assert auth.server._client_storage is limits
    routes = create_server(lambda: None, auth=auth).http_app(path="/mcp").routes  # type: ignore[arg-type,return-value]
    guarded = set(oauth_paths(routes, "/mcp"))
    assert {"/register", "/authorize", "/token", "/consent", "/auth/callback"} <= guarded
    assert "/mcp" not in guarded


@pytest.mark.parametrize(
    ("path", "method"),
    [("/register", "POST"), ("/authorize", "GET"), ("/token", "POST"), ("/consent", "GET"), ("/consent", "POST")],
)
def test_the_oauth_endpoints_are_rate_limited_per_address(
    clean_db: str, clean_redis: str, clock: ManualClock, path: str, method: str
) -> None:
    settings = oauth_settings(clean_db, clean_redis, rate_per_s=0.5, rate_burst=3)
    one = {"x-test-peer": "203.0.113.50"}
    with serve(settings, clock) as client:
        statuses = [client.request(method, path, headers=one).status_code for _ in range(4)]
        limited = client.request(method, path, headers=one)
        other = client.request(method, path, headers={"x-test-peer": "203.0.113.51"})
        mcp = client.post("/mcp", json={}, headers=one)  # /mcp has its own limit
        clock.advance(2.0)
        again = client.request(method, path, headers=one)

    assert 429 not in statuses[:3] and statuses[3] == 429
    assert limited.status_code == 429 and limited.headers["retry-after"] == "2"
    assert other.status_code != 429
    assert mcp.status_code == 401
    assert again.status_code != 429


def test_a_registration_field_report_names_the_field_never_its_value() -> None:
    assert oversized_field({"client_name": "x" * 101}, 100) == "client_name is longer than 100 characters"
    assert oversized_field({"contacts": ["a"] * 3}, 100) == "contacts has more than 2 items"
    assert oversized_field({"jwks": {"keys": [{"n": "y" * 101}]}}, 100) == "n is longer than 100 characters"
    assert oversized_field({"client_name": "ok", "redirect_uris": ["http://x"]}, 100) is None
