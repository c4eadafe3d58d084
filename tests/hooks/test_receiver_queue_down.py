"""With Redis down the receiver records a delivery but cannot enqueue it: it answers `deferred`, never `enqueued`.

The service starts against a redis-server of the test's own, which is then killed: its URL points at a
closed port while the web app keeps running (a service cannot start without Redis; outages come later).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pydantic import SecretStr
from starlette.testclient import TestClient

from app.core.settings import GitLabSettings, PostgresSettings, QdrantSettings, QueueSettings, Settings
from entry.web import create_app
from testkit import payloads
from tests.support.processes import RedisServer

SECRET = "s3cret-token-of-the-hook"


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def settings_of(dsn: str, redis_url: str) -> Settings:
    return Settings(
        postgres=PostgresSettings(dsn=SecretStr(dsn)),
        redis=QueueSettings(url=redis_url, queue="javakb:test"),
        qdrant=QdrantSettings(path=":memory:"),
        gitlab=GitLabSettings(webhook_secret=SecretStr(SECRET)),
    )


def post(client: TestClient, body: Any, key: str) -> Any:
    headers = {"Idempotency-Key": key, "X-Gitlab-Event": "System Hook", "X-Gitlab-Token": SECRET}
    return client.post("/hooks/gitlab", content=json.dumps(body), headers=headers)


def recorded(dsn: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        return [row[0] for row in conn.execute("SELECT idempotency_key FROM deliveries ORDER BY idempotency_key")]


def test_with_redis_down_a_push_and_a_project_event_are_deferred_not_enqueued(
    clean_db: str, redis_server: RedisServer
) -> None:
    with TestClient(create_app(settings_of(clean_db, redis_server.url))) as client:
        before = post(client, payloads.system_hook_push(), "push-while-redis-is-up")
        redis_server.stop()  # nothing listens on its port any more
        push = post(client, payloads.system_hook_push(), "push-while-redis-is-down")
        destroy = post(client, payloads.system_hook_project_destroy(), "destroy-while-redis-is-down")
    assert (before.status_code, before.json()["status"]) == (202, "enqueued"), before.text
    for answer in (push, destroy):
        assert (answer.status_code, answer.json()["status"]) == (202, "deferred"), answer.text
        assert "Redis is unavailable" in answer.json()["detail"]
    assert "reconcile sweep" in push.json()["detail"]
    # Recorded in PostgreSQL, where the worker's reconcile sweep finds what is behind.
    assert recorded(clean_db) == ["destroy-while-redis-is-down", "push-while-redis-is-down", "push-while-redis-is-up"]
