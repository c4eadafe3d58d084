from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import redis
from pydantic import SecretStr
from starlette.testclient import TestClient

from app.settings import GitLabSettings, PostgresSettings, QdrantSettings, RedisSettings, Settings
from app.web import create_app
from hooks.auth import sign, signing_key

SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "gitlab"
SECRET = "s3cret-token"
SIGNING = "whsec_" + base64.b64encode(b"signing-key-32-bytes-long-000000").decode()
QUEUE = "javakb:test"


def sample(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SAMPLES / name).read_text())
    return data


def make_settings(dsn: str, redis_url: str, **gitlab: Any) -> Settings:
    return Settings(
        postgres=PostgresSettings(dsn=SecretStr(dsn)),
        redis=RedisSettings(url=redis_url, queue=QUEUE),
        qdrant=QdrantSettings(path=":memory:"),
        gitlab=GitLabSettings(**({"webhook_secret": SecretStr(SECRET)} | gitlab)),
    )


@pytest.fixture
def client(clean_db: str, clean_redis: str) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(clean_db, clean_redis))) as c:
        yield c


def post(client: TestClient, body: Any, key: str = "key-1", token: str | None = SECRET) -> Any:
    headers = {"Idempotency-Key": key, "X-Gitlab-Event": "System Hook"}
    if token is not None:
        headers["X-Gitlab-Token"] = token
    return client.post("/hooks/gitlab", content=json.dumps(body), headers=headers)


def fetch(dsn: str, query: str) -> list[dict[str, Any]]:
    import asyncio

    async def run() -> list[dict[str, Any]]:
        conn = await asyncpg.connect(dsn)
        try:
            return [dict(r) for r in await conn.fetch(query)]
        finally:
            await conn.close()

    return asyncio.run(run())


def queued_jobs(redis_url: str) -> set[str]:
    r = redis.Redis.from_url(redis_url)
    try:
        return {k.decode().removeprefix("arq:job:") for k in r.scan_iter("arq:job:*")}
    finally:
        r.close()


def test_a_default_branch_push_is_recorded_and_enqueued(client: TestClient, clean_db: str, clean_redis: str) -> None:
    response = post(client, sample("system_hook_push.json"))
    assert response.status_code == 202
    assert response.json()["status"] == "enqueued"
    [project] = fetch(clean_db, "SELECT * FROM projects")
    assert (project["id"], project["repo_path"], project["requested_gen"]) == (15, "mike/diaspora", 1)
    assert project["target_sha"] == "da1560886d4f094c3e6c9ef40349f7d38b5d27d7"
    [delivery] = fetch(clean_db, "SELECT * FROM deliveries")
    assert (delivery["idempotency_key"], delivery["event"], delivery["outcome"]) == ("key-1", "push", "enqueued")
    assert queued_jobs(clean_redis) == {"sync:15:1"}


def test_a_duplicate_delivery_changes_nothing(client: TestClient, clean_db: str, clean_redis: str) -> None:
    post(client, sample("system_hook_push.json"), key="same")
    again = post(client, sample("system_hook_push.json"), key="same")
    assert again.status_code == 200
    assert again.json()["status"] == "duplicate"
    assert fetch(clean_db, "SELECT requested_gen FROM projects") == [{"requested_gen": 1}]
    assert len(fetch(clean_db, "SELECT * FROM deliveries")) == 1


def test_every_new_push_gets_its_own_generation_and_job(client: TestClient, clean_db: str, clean_redis: str) -> None:
    for i in range(3):
        assert post(client, sample("system_hook_push.json"), key=f"k{i}").status_code == 202
    assert fetch(clean_db, "SELECT requested_gen FROM projects") == [{"requested_gen": 3}]
    assert queued_jobs(clean_redis) == {"sync:15:1", "sync:15:2", "sync:15:3"}


def test_webhook_uuid_is_the_fallback_key(client: TestClient, clean_db: str) -> None:
    body = json.dumps(sample("system_hook_push.json"))
    headers = {"X-Gitlab-Token": SECRET, "X-Gitlab-Webhook-UUID": "uuid-1"}
    client.post("/hooks/gitlab", content=body, headers=headers)
    assert client.post("/hooks/gitlab", content=body, headers=headers).json()["status"] == "duplicate"


def test_a_push_to_another_branch_is_answered_and_ignored(client: TestClient, clean_db: str, clean_redis: str) -> None:
    body = sample("system_hook_push.json") | {"ref": "refs/heads/feature"}
    response = post(client, body)
    assert response.status_code == 200
    assert response.json()["status"] == "ignored"
    assert fetch(clean_db, "SELECT outcome FROM deliveries") == [{"outcome": "ignored"}]
    assert fetch(clean_db, "SELECT * FROM projects") == []
    assert queued_jobs(clean_redis) == set()


@pytest.mark.parametrize(
    ("sample_name", "job_prefix"),
    [
        ("system_hook_project_destroy.json", "purge:73:"),
        ("system_hook_project_rename.json", "move:73:"),
        ("system_hook_project_transfer.json", "move:73:"),
        ("system_hook_project_update.json", "refresh:74:"),
    ],
)
def test_project_lifecycle_events_enqueue_their_job(
    client: TestClient, clean_redis: str, sample_name: str, job_prefix: str
) -> None:
    response = post(client, sample(sample_name))
    assert response.status_code == 202
    [job] = queued_jobs(clean_redis)
    assert job.startswith(job_prefix)


@pytest.mark.parametrize("token", [None, "wrong", ""])
def test_a_bad_or_missing_token_is_401(client: TestClient, clean_db: str, token: str | None) -> None:
    assert post(client, sample("system_hook_push.json"), token=token).status_code == 401
    assert fetch(clean_db, "SELECT * FROM deliveries") == []


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"{not json", "malformed JSON"), (b"[]", "not a JSON object"), (b'{"event_name": "push"}', "project")],
)
def test_malformed_bodies_are_400_with_a_reason(client: TestClient, content: bytes, reason: str) -> None:
    response = client.post("/hooks/gitlab", content=content, headers={"X-Gitlab-Token": SECRET})
    assert response.status_code == 400
    assert reason in response.json()["error"]


def test_a_body_over_the_limit_is_413(clean_db: str, clean_redis: str) -> None:
    settings = make_settings(clean_db, clean_redis, max_body_bytes=1024)
    with TestClient(create_app(settings)) as client:
        response = client.post("/hooks/gitlab", content=b"x" * 2048, headers={"X-Gitlab-Token": SECRET})
    assert response.status_code == 413


def test_a_signed_delivery_is_checked_over_the_raw_body(clean_db: str, clean_redis: str) -> None:
    settings = make_settings(clean_db, clean_redis, signing_token=SecretStr(SIGNING))
    body = json.dumps(sample("system_hook_push.json")).encode()
    with TestClient(create_app(settings)) as client:
        import time

        ts = str(int(time.time()))
        good = sign(signing_key(SIGNING), "msg-1", ts, body)
        headers = {"webhook-id": "msg-1", "webhook-timestamp": ts, "webhook-signature": good}
        assert client.post("/hooks/gitlab", content=body, headers=headers).status_code == 202
        tampered = body.replace(b"diaspora", b"diaspore")
        headers["webhook-id"] = "msg-2"
        assert client.post("/hooks/gitlab", content=tampered, headers=headers).status_code == 401


def test_without_any_configured_secret_everything_is_refused(clean_db: str, clean_redis: str) -> None:
    settings = make_settings(clean_db, clean_redis, webhook_secret=None)
    with TestClient(create_app(settings)) as client:
        assert post(client, sample("system_hook_push.json")).status_code == 401


def test_health_and_readiness(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["checks"] == {"postgres": "ok", "redis": "ok", "qdrant": "ok"}


def test_admin_endpoints_need_a_token(clean_db: str, clean_redis: str) -> None:
    settings = make_settings(clean_db, clean_redis).model_copy(update={"admin_tokens": [SecretStr("adm")]})
    with TestClient(create_app(settings)) as client:
        assert client.post("/admin/reindex", json={"all": True}).status_code == 401
        ok = client.post("/admin/reindex", json={"all": True}, headers={"Authorization": "Bearer adm"})
        assert ok.status_code == 202
        assert client.post("/admin/reindex", json={"x": 1}, headers={"Authorization": "Bearer adm"}).status_code == 400
        assert client.get("/admin/projects", headers={"Authorization": "Bearer adm"}).json() == []
    assert queued_jobs(clean_redis) == {"backfill:all:0"}
