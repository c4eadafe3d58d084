"""Per-credential rate limits on `/mcp` and `/api/v1/*`: a token bucket per caller, 429 with Retry-After."""

from __future__ import annotations

from typing import Final

from pydantic import SecretStr
from starlette.testclient import TestClient

from app.auth.ratelimit import TokenBuckets
from app.core.access_settings import AccessSettings
from app.core.settings import PostgresSettings, QdrantSettings, QueueSettings, Settings
from entry.web import create_app
from tests.support.tenants import ManualClock
from tests.support.tokens import service_token

ONE: Final = "token-one"
TWO: Final = "token-two"


def test_a_bucket_allows_the_burst_then_says_how_long_to_wait() -> None:
    clock = ManualClock()
    buckets = TokenBuckets(rate=2.0, burst=3, clock=clock)

    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a") == 0.5
    assert buckets.take("b") == 0.0  # another caller has its own bucket
    clock.advance(0.5)
    assert buckets.take("a") == 0.0
    assert buckets.take("a") > 0.0


def test_a_bucket_refills_to_the_burst_and_no_further() -> None:
    clock = ManualClock()
    buckets = TokenBuckets(rate=1.0, burst=2, clock=clock)
    buckets.take("a")
    clock.advance(3600)

    assert [buckets.take("a") == 0.0 for _ in range(3)] == [True, True, False]


def settings(dsn: str, redis_url: str) -> Settings:
    return Settings(
        postgres=PostgresSettings(dsn=SecretStr(dsn)),
        redis=QueueSettings(url=redis_url, queue="javakb:test-rate"),
        qdrant=QdrantSettings(path=":memory:"),
        service_tokens=[service_token(ONE, name="one"), service_token(TWO, name="two")],
        access=AccessSettings(rate_per_s=0.5, rate_burst=2),
    )


def test_rest_and_mcp_answer_429_with_retry_after_per_credential(clean_db: str, clean_redis: str) -> None:
    clock = ManualClock()
    one = {"Authorization": f"Bearer {ONE}"}
    with TestClient(create_app(settings(clean_db, clean_redis), clock=clock)) as client:
        assert client.get("/api/v1/search", params={"q": "owner"}, headers=one).status_code == 200
        assert client.post("/mcp", json={}, headers=one).status_code != 429  # MCP spends the same bucket
        limited = client.get("/api/v1/search", params={"q": "owner"}, headers=one)
        mcp_limited = client.post("/mcp", json={}, headers=one)
        other = client.get("/api/v1/search", params={"q": "owner"}, headers={"Authorization": f"bearer {TWO}"})
        health = client.get("/healthz", headers=one)
        clock.advance(2.0)
        again = client.get("/api/v1/search", params={"q": "owner"}, headers=one)

    assert limited.status_code == 429
    assert limited.headers["retry-after"] == "2"
    assert mcp_limited.status_code == 429
    assert other.status_code == 200
    assert health.status_code == 200  # only /mcp and /api/v1 are limited
    assert again.status_code == 200


def test_requests_without_a_token_share_their_address_bucket(clean_db: str, clean_redis: str) -> None:
    with TestClient(create_app(settings(clean_db, clean_redis), clock=ManualClock())) as client:
        statuses = [client.get("/api/v1/search", params={"q": "x"}).status_code for _ in range(3)]

    assert statuses == [401, 401, 429]
