"""Hostile and malformed deliveries (issue 9): a clear 4xx, nothing recorded, nothing queued."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr, ValidationError
from starlette.requests import Request
from starlette.testclient import TestClient

from app.core.errors import PayloadError, SignatureError
from app.core.events import GitLabEvent
from app.core.settings import GitLabSettings
from app.sync.deliveries import DeliveryRecorder
from entry.deps import open_service
from entry.web import create_app
from hooks.auth import sign, signing_key
from hooks.events import SyncRequested
from hooks.receiver import accept_delivery
from testkit import payloads
from tests.hooks.test_receiver import (
    SECRET,
    SIGNING,
    afetch,
    fetch,
    make_settings,
    post,
    push_event,
    queued_jobs,
)

PUSH = payloads.system_hook_push()


@pytest.fixture
def client(clean_db: str, clean_redis: str) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(clean_db, clean_redis))) as c:
        yield c


def assert_nothing_kept(dsn: str, redis_url: str) -> None:
    assert fetch(dsn, "SELECT idempotency_key FROM deliveries") == []
    assert fetch(dsn, "SELECT id FROM projects") == []
    assert queued_jobs(redis_url) == set()


@pytest.mark.parametrize("empty", ["", "   "])
def test_an_empty_webhook_secret_is_unset_so_an_empty_token_is_refused(
    clean_db: str, clean_redis: str, empty: str
) -> None:
    settings = make_settings(clean_db, clean_redis, webhook_secret=SecretStr(empty))
    assert settings.gitlab.webhook_secret is None
    with TestClient(create_app(settings)) as client:
        assert post(client, PUSH, token=empty).status_code == 401
    assert_nothing_kept(clean_db, clean_redis)


def test_an_empty_signing_key_is_unset() -> None:
    assert GitLabSettings(signing_token=SecretStr("")).signing_token is None


@pytest.mark.parametrize("malformed", ["whsec_", "whsec_***", "not-a-whsec-key"])
def test_a_malformed_signing_key_refuses_to_start(malformed: str) -> None:
    with pytest.raises(ValidationError, match="signing token"):
        GitLabSettings(signing_token=SecretStr(malformed))


def _with(**changes: Any) -> dict[str, Any]:
    return PUSH | changes


UNSTORABLE = {
    "project id above int64": _with(project_id=2**63),
    "project id far above int64": _with(project_id=2**70),
    "negative project id": _with(project_id=-1),
    "NUL in the path": _with(project=PUSH["project"] | {"path_with_namespace": "mike/dia\x00spora"}),
    "lone surrogate in the ref": _with(ref="refs/heads/\ud800"),
    "NUL in the sha": _with(after="da15\x00"),
    "NUL in the default branch": _with(project=PUSH["project"] | {"default_branch": "ma\x00ster"}),
    "NUL in an unknown event name": {"event_name": "x\x00y"},
}


@pytest.mark.parametrize("body", list(UNSTORABLE.values()), ids=list(UNSTORABLE))
def test_values_postgresql_cannot_store_are_400_not_deferred(
    client: TestClient, clean_db: str, clean_redis: str, body: dict[str, Any]
) -> None:
    response = post(client, body)
    assert response.status_code == 400, response.text
    assert_nothing_kept(clean_db, clean_redis)


@pytest.mark.parametrize("key", ["k" * 8000, "k\x7f"])
def test_an_unstorable_idempotency_key_is_400(client: TestClient, clean_db: str, clean_redis: str, key: str) -> None:
    response = post(client, PUSH, key=key)
    assert response.status_code == 400
    assert "idempotency-key" in response.json()["error"]
    assert_nothing_kept(clean_db, clean_redis)


async def test_a_bad_row_in_a_batch_fails_alone_and_its_neighbours_are_recorded(
    clean_db: str, clean_redis: str
) -> None:
    # The edge refuses these already; this is the last line, should one slip through.
    bad = SyncRequested(
        event=GitLabEvent.PUSH, project_id=7, repo_path="a/\x00", default_branch=None, ref="r", after="s"
    )
    async with open_service(make_settings(clean_db, clean_redis)) as deps:
        receiver = DeliveryRecorder(deps)
        calls = [receiver.handle(push_event(1, "s1"), "good-1"), receiver.handle(bad, "bad")]
        calls += [receiver.handle(push_event(2, "s2"), "good-2"), receiver.handle(push_event(1, "s3"), "good-3")]
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
    assert isinstance(outcomes[1], PayloadError)
    assert [o[0] for o in outcomes if isinstance(o, tuple)] == ["enqueued"] * 3
    keys = await afetch(clean_db, "SELECT idempotency_key FROM deliveries ORDER BY 1")
    assert [r["idempotency_key"] for r in keys] == ["good-1", "good-2", "good-3"]
    assert queued_jobs(clean_redis) == {"sync:1:1", "sync:1:2", "sync:2:1"}


@pytest.mark.parametrize("depth", [10_000, 200_000])
def test_json_nested_beyond_the_recursion_limit_is_400(client: TestClient, clean_db: str, depth: int) -> None:
    response = client.post("/hooks/gitlab", content=b"[" * depth, headers={"X-Gitlab-Token": SECRET})
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["error"] or "malformed JSON" in response.json()["error"]
    assert fetch(clean_db, "SELECT * FROM deliveries") == []


def signed_client(dsn: str, redis_url: str) -> TestClient:
    return TestClient(create_app(make_settings(dsn, redis_url, signing_token=SecretStr(SIGNING))))


def signed_headers_for(body: bytes, webhook_id: str, ts: str | None = None) -> dict[str, str]:
    ts = ts or str(int(time.time()))
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": ts,
        "webhook-signature": sign(signing_key(SIGNING), webhook_id, ts, body),
    }


def test_a_timestamp_of_hundreds_of_digits_is_401(clean_db: str, clean_redis: str) -> None:
    body = json.dumps(PUSH).encode()
    with signed_client(clean_db, clean_redis) as client:
        response = client.post("/hooks/gitlab", content=body, headers=signed_headers_for(body, "m1", "9" * 400))
    assert response.status_code == 401
    assert_nothing_kept(clean_db, clean_redis)


def test_a_signed_delivery_is_deduplicated_on_its_signed_id_not_on_fresh_keys(clean_db: str, clean_redis: str) -> None:
    # A captured signed project_destroy replayed in the tolerance window with new Idempotency-Keys.
    body = json.dumps(payloads.system_hook_project_destroy()).encode()
    headers = signed_headers_for(body, "msg-destroy")
    with signed_client(clean_db, clean_redis) as client:
        first = client.post("/hooks/gitlab", content=body, headers=headers | {"Idempotency-Key": "fresh-1"})
        replay = client.post("/hooks/gitlab", content=body, headers=headers | {"Idempotency-Key": "fresh-2"})
    assert (first.status_code, replay.json()["status"]) == (202, "duplicate")
    assert fetch(clean_db, "SELECT idempotency_key FROM deliveries") == [{"idempotency_key": "msg-destroy"}]
    assert len(queued_jobs(clean_redis)) == 1


def _request(headers: dict[str, str], received: list[str]) -> Request:
    async def receive() -> dict[str, Any]:
        received.append("body")
        return {"type": "http.request", "body": b"{}", "more_body": False}

    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    return Request({"type": "http", "method": "POST", "path": "/hooks/gitlab", "headers": raw}, receive)


@pytest.mark.parametrize(
    ("gitlab", "headers"),
    [
        ({"webhook_secret": SecretStr(SECRET)}, {"X-Gitlab-Token": "wrong"}),
        ({"webhook_secret": SecretStr(SECRET)}, {}),
        ({"signing_token": SecretStr(SIGNING)}, {"webhook-id": "m"}),
        (
            {"signing_token": SecretStr(SIGNING)},
            {"webhook-id": "m", "webhook-timestamp": "1", "webhook-signature": "v1,x"},
        ),
        ({}, {"X-Gitlab-Token": SECRET}),
    ],
    ids=["wrong token", "no token", "signature headers missing", "timestamp out of window", "nothing configured"],
)
async def test_the_body_is_not_read_before_the_headers_authenticate(
    gitlab: dict[str, Any], headers: dict[str, str]
) -> None:
    received: list[str] = []
    with pytest.raises(SignatureError):
        await accept_delivery(_request(headers, received), GitLabSettings(**gitlab), time.time())
    assert received == []
