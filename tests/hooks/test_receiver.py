from __future__ import annotations

import asyncio
import base64
import json
import pickle
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, cast

import asyncpg
import pytest
import redis
from arq.connections import ArqRedis
from pydantic import SecretStr
from starlette.testclient import TestClient

from app.core.errors import StorageError
from app.core.events import GitLabEvent
from app.core.settings import GitLabSettings, PostgresSettings, QdrantSettings, QueueSettings, Settings
from app.db import KeyedPush
from app.sync.deliveries import DeliveryRecorder
from entry.deps import open_service
from entry.web import create_app, is_ready
from hooks.auth import sign, signing_key
from hooks.events import SyncRequested
from testkit import payloads
from testkit.standins import ByRole, Method
from tests.support.pg_outage import postgres_down, set_outage
from tests.support.tokens import admin_token

SECRET = "s3cret-token"
SIGNING = "whsec_" + base64.b64encode(b"signing-key-32-bytes-long-000000").decode()
QUEUE = "javakb:test"
UNUSED_PORT = 1  # nothing listens there: a Redis that is down


def make_settings(dsn: str, redis_url: str, **gitlab: Any) -> Settings:
    return Settings(
        postgres=PostgresSettings(dsn=SecretStr(dsn)),
        redis=QueueSettings(url=redis_url, queue=QUEUE),
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


async def afetch(dsn: str, query: str) -> list[dict[str, Any]]:
    conn = await asyncpg.connect(dsn)
    try:
        return [dict(r) for r in await conn.fetch(query)]
    finally:
        await conn.close()


def fetch(dsn: str, query: str) -> list[dict[str, Any]]:
    return asyncio.run(afetch(dsn, query))


def queued_jobs(redis_url: str) -> set[str]:
    r = redis.Redis.from_url(redis_url)
    try:
        return {k.decode().removeprefix("arq:job:") for k in r.scan_iter("arq:job:*")}
    finally:
        r.close()


def test_a_default_branch_push_is_recorded_and_enqueued(client: TestClient, clean_db: str, clean_redis: str) -> None:
    response = post(client, payloads.system_hook_push())
    assert response.status_code == 202
    assert response.json()["status"] == "enqueued"
    [project] = fetch(clean_db, "SELECT * FROM projects")
    assert (project["id"], project["repo_path"], project["requested_gen"]) == (15, "mike/diaspora", 1)
    assert project["target_sha"] == "da1560886d4f094c3e6c9ef40349f7d38b5d27d7"
    [delivery] = fetch(clean_db, "SELECT * FROM deliveries")
    assert (delivery["idempotency_key"], delivery["event"], delivery["outcome"]) == ("key-1", "push", "enqueued")
    assert queued_jobs(clean_redis) == {"sync:15:1"}


def test_a_duplicate_delivery_changes_nothing(client: TestClient, clean_db: str, clean_redis: str) -> None:
    post(client, payloads.system_hook_push(), key="same")
    again = post(client, payloads.system_hook_push(), key="same")
    assert again.status_code == 200
    assert again.json()["status"] == "duplicate"
    assert fetch(clean_db, "SELECT requested_gen FROM projects") == [{"requested_gen": 1}]
    assert len(fetch(clean_db, "SELECT * FROM deliveries")) == 1


def test_every_new_push_gets_its_own_generation_and_job(client: TestClient, clean_db: str, clean_redis: str) -> None:
    for i in range(3):
        assert post(client, payloads.system_hook_push(), key=f"k{i}").status_code == 202
    assert fetch(clean_db, "SELECT requested_gen FROM projects") == [{"requested_gen": 3}]
    assert queued_jobs(clean_redis) == {"sync:15:1", "sync:15:2", "sync:15:3"}


def test_webhook_uuid_is_the_fallback_key(client: TestClient, clean_db: str) -> None:
    body = json.dumps(payloads.system_hook_push())
    headers = {"X-Gitlab-Token": SECRET, "X-Gitlab-Webhook-UUID": "uuid-1"}
    client.post("/hooks/gitlab", content=body, headers=headers)
    assert client.post("/hooks/gitlab", content=body, headers=headers).json()["status"] == "duplicate"


def test_a_push_to_another_branch_is_answered_and_ignored(client: TestClient, clean_db: str, clean_redis: str) -> None:
    body = payloads.system_hook_push() | {"ref": "refs/heads/feature"}
    response = post(client, body)
    assert response.status_code == 200
    assert response.json()["status"] == "ignored"
    assert fetch(clean_db, "SELECT outcome FROM deliveries") == [{"outcome": "ignored"}]
    assert fetch(clean_db, "SELECT * FROM projects") == []
    assert queued_jobs(clean_redis) == set()


@pytest.mark.parametrize(
    ("build", "job_prefix"),
    [
        (payloads.system_hook_project_destroy, "purge:73:"),
        (payloads.system_hook_project_rename, "move:73:"),
        (payloads.system_hook_project_transfer, "move:73:"),
        (payloads.system_hook_project_update, "refresh:74:"),
    ],
)
def test_project_lifecycle_events_enqueue_their_job(
    client: TestClient, clean_redis: str, build: Callable[[], payloads.ProjectEventBody], job_prefix: str
) -> None:
    response = post(client, build())
    assert response.status_code == 202
    [job] = queued_jobs(clean_redis)
    assert job.startswith(job_prefix)


@pytest.mark.parametrize("token", [None, "wrong", ""])
def test_a_bad_or_missing_token_is_401(client: TestClient, clean_db: str, token: str | None) -> None:
    assert post(client, payloads.system_hook_push(), token=token).status_code == 401
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
    body = json.dumps(payloads.system_hook_push()).encode()
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
        assert post(client, payloads.system_hook_push()).status_code == 401


def test_health_and_readiness(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {
        "ready": True,
        "degraded": False,
        "checks": {"postgres": "ok", "redis": "ok", "qdrant": "ok"},
    }


def test_with_postgresql_down_the_pod_stays_ready_and_says_degraded(client: TestClient, clean_db: str) -> None:
    # Every web pod shares PostgreSQL: leaving the Service would turn `202 deferred` into the ingress's 503.
    asyncio.run(set_outage(clean_db, down=True))
    try:
        ready = client.get("/readyz")
        deferred = post(client, payloads.system_hook_push(), key="while-degraded")
    finally:
        asyncio.run(set_outage(clean_db, down=False))
    assert (ready.status_code, ready.json()["ready"], ready.json()["degraded"]) == (200, True, True)
    checks = ready.json()["checks"]
    assert checks["postgres"] == "error"  # the reason is for a metrics or admin token (tests/app/test_observability)
    assert (checks["redis"], checks["qdrant"]) == ("ok", "ok")
    assert (deferred.status_code, deferred.json()["status"]) == (202, "deferred")
    assert client.get("/readyz").json()["degraded"] is False  # and whole again once it is back


@pytest.mark.parametrize(
    ("checks", "ready"),
    [
        ({"postgres": "ok", "redis": "ok", "qdrant": "ok"}, True),
        ({"postgres": "error: down", "redis": "ok", "qdrant": "ok"}, True),
        ({"postgres": "ok", "redis": "error: down", "qdrant": "error: down"}, True),
        ({"postgres": "error: down", "redis": "error: down", "qdrant": "ok"}, False),  # the receiver answers 503
        ({"postgres": "ok", "redis": "ok", "qdrant": "ok", "worker": "error: worker stopped"}, False),
    ],
)
def test_readiness_needs_a_store_for_deliveries_and_this_process_s_worker(checks: dict[str, str], ready: bool) -> None:
    assert is_ready(checks) is ready


def test_admin_endpoints_need_a_token(clean_db: str, clean_redis: str) -> None:
    settings = make_settings(clean_db, clean_redis, url="https://gitlab.example.com")
    settings = settings.model_copy(update={"admin_tokens": [admin_token("adm")]})
    with TestClient(create_app(settings)) as client:
        assert client.post("/admin/reindex", json={"all": True}).status_code == 401
        ok = client.post("/admin/reindex", json={"all": True}, headers={"Authorization": "Bearer adm"})
        assert ok.status_code == 202
        assert client.post("/admin/reindex", json={"x": 1}, headers={"Authorization": "Bearer adm"}).status_code == 400
        assert client.get("/admin/projects", headers={"Authorization": "Bearer adm"}).json() == []
    [job_id] = queued_jobs(clean_redis)
    assert job_id.startswith(f"backfill:{ok.json()['backfill_id']}:")  # the row's id, then its job token


def test_a_backfill_without_gitlab_configured_is_refused_with_what_to_set(clean_db: str, clean_redis: str) -> None:
    settings = make_settings(clean_db, clean_redis).model_copy(update={"admin_tokens": [admin_token("adm")]})
    with TestClient(create_app(settings)) as client:
        refused = client.post("/admin/reindex", json={"all": True}, headers={"Authorization": "Bearer adm"})
    assert refused.status_code == 409
    assert "JAVAKB_GITLAB__URL" in refused.json()["error"]
    assert queued_jobs(clean_redis) == set()


async def test_concurrent_pushes_share_round_trips_and_keep_every_generation(clean_db: str, clean_redis: str) -> None:
    # 60 pushes over 3 projects, all in flight at once, with a resend racing its original and a
    # key recorded earlier: each project gets generations 1..n in arrival order, one job each.
    batch_sizes: list[int] = []
    counting = False

    def counted(record: Method) -> Method:
        async def count(pushes: Sequence[KeyedPush]) -> list[int | None]:
            if counting:
                batch_sizes.append(len(pushes))
            return cast("list[int | None]", await record(pushes))

        return count

    wrap = ByRole({"db": {"record_sync_deliveries": counted}})
    async with open_service(make_settings(clean_db, clean_redis), wrap=wrap) as deps:
        receiver = DeliveryRecorder(deps, max_batch=16)
        assert (await receiver.handle(push_event(1, "sha-early"), "early"))[0] == "enqueued"
        counting = True
        keys = [f"k{i}" for i in range(60)]
        events = [push_event(1 + i % 3, f"sha-{i}") for i in range(60)]
        calls = [receiver.handle(e, k) for e, k in zip(events, keys, strict=True)]
        calls.insert(6, receiver.handle(events[5], "k5"))  # a resend in the same batch as its original
        calls.append(receiver.handle(push_event(1, "sha-late"), "early"))  # seen before
        outcomes = await asyncio.gather(*calls)
    duplicates = [outcomes.pop(6), outcomes.pop()]
    assert [o[0] for o in duplicates] == ["duplicate", "duplicate"]
    assert [o[0] for o in outcomes] == ["enqueued"] * 60
    assert batch_sizes == [15, 16, 16, 14]  # 62 deliveries, 4 round trips; the resend is not sent
    gens = [int(o[1].split("generation ")[1].rstrip(")")) for o in outcomes[:60]]
    assert gens[0::3] == list(range(2, 22))  # project 1 had generation 1 already
    assert gens[1::3] == list(range(1, 21))
    assert gens[2::3] == list(range(1, 21))
    projects = await afetch(clean_db, "SELECT id, requested_gen, target_sha FROM projects ORDER BY id")
    assert projects == [
        {"id": 1, "requested_gen": 21, "target_sha": "sha-57"},
        {"id": 2, "requested_gen": 20, "target_sha": "sha-58"},
        {"id": 3, "requested_gen": 20, "target_sha": "sha-59"},
    ]
    assert await afetch(clean_db, "SELECT count(*) AS n FROM deliveries") == [{"n": 61}]
    expected = {f"sync:1:{g}" for g in range(1, 22)} | {f"sync:{p}:{g}" for p in (2, 3) for g in range(1, 21)}
    assert queued_jobs(clean_redis) == expected


async def test_a_batch_keeps_the_last_default_branch_it_names(clean_db: str, clean_redis: str) -> None:
    # As one by one: a push without a default branch (a first push) does not erase the known one.
    async with open_service(make_settings(clean_db, clean_redis)) as deps:
        db = deps.db
        branches = ["main", None, "develop", None]
        pushes = [
            (
                f"b{i}",
                SyncRequested(
                    event=GitLabEvent.PUSH, project_id=9, repo_path="acme/x", default_branch=b, ref="r", after=f"s{i}"
                ),
            )
            for i, b in enumerate(branches)
        ]
        assert await db.record_sync_deliveries(pushes) == [1, 2, 3, 4]
        assert await db.record_sync_deliveries([("b9", replace(pushes[0][1], default_branch=None))]) == [5]
        [row] = await afetch(clean_db, "SELECT default_branch, target_sha, requested_gen FROM projects")
    assert row == {"default_branch": "develop", "target_sha": "s0", "requested_gen": 5}


def test_with_postgresql_down_a_push_is_deferred_to_the_worker_whole(
    client: TestClient, clean_db: str, clean_redis: str
) -> None:
    # GitLab never resends on its own: a 503 would lose the push. It is queued for the worker.
    asyncio.run(set_outage(clean_db, down=True))
    try:
        deferred = post(client, payloads.system_hook_push(), key="during-outage")
    finally:
        asyncio.run(set_outage(clean_db, down=False))
    assert deferred.status_code == 202
    assert deferred.json()["status"] == "deferred"
    assert queued_jobs(clean_redis) == {"replay:during-outage"}
    assert fetch(clean_db, "SELECT * FROM deliveries") == []
    job = replay_job(clean_redis, "replay:during-outage")
    assert job["f"] == "replay_delivery"
    event, key = job["a"]
    assert (event.project_id, event.after, key) == (15, "da1560886d4f094c3e6c9ef40349f7d38b5d27d7", "during-outage")


async def test_with_postgresql_and_redis_down_the_delivery_is_refused(clean_db: str, clean_redis: str) -> None:
    async with open_service(make_settings(clean_db, clean_redis)) as deps:
        no_redis = replace(deps, queue=ArqRedis(host="127.0.0.1", port=UNUSED_PORT))
        async with postgres_down(clean_db):
            with pytest.raises(StorageError, match="queue is unavailable"):
                await DeliveryRecorder(no_redis).handle_or_defer(push_event(1, "sha"), "k")
        assert await DeliveryRecorder(deps).handle_or_defer(push_event(1, "sha"), "k") == (
            "enqueued",
            "sync of project 1 (generation 1)",
        )


def push_event(project_id: int, after: str) -> SyncRequested:
    return SyncRequested(
        event=GitLabEvent.PUSH,
        project_id=project_id,
        repo_path=f"acme/p{project_id}",
        default_branch="main",
        ref="refs/heads/main",
        after=after,
    )


def replay_job(redis_url: str, job_id: str) -> dict[str, Any]:
    r = redis.Redis.from_url(redis_url)
    try:
        raw = r.get(f"arq:job:{job_id}")
    finally:
        r.close()
    assert isinstance(raw, bytes)
    job: dict[str, Any] = pickle.loads(raw)
    return job
