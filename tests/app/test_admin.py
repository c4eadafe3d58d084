"""Admin API (issue 9): strictly validated bodies, and a backfill that reports each project's outcome."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from entry.web import create_app
from testkit.sync_env import SyncEnv
from tests.hooks.test_receiver import fetch, make_settings, queued_jobs
from tests.support.tokens import admin_token

ADMIN = "admin-token-for-tests-0123"
AUTH = {"Authorization": f"Bearer {ADMIN}"}
SRC = "src/main/java/com/acme/"


@pytest.fixture
def client(clean_db: str, clean_redis: str) -> Iterator[TestClient]:
    settings = make_settings(clean_db, clean_redis, url="https://gitlab.example.com")
    with TestClient(create_app(settings.model_copy(update={"admin_tokens": [admin_token(ADMIN)]}))) as c:
        yield c


INVALID: dict[str, Any] = {
    "a boolean as an id": {"projects": [True]},
    "a string as a boolean": {"all": "no"},
    "a float as an id": {"projects": [1.5]},
    "a string as an id": {"projects": ["1"]},
    "an id above int64": {"projects": [2**63]},
    "a negative id": {"projects": [-3]},
    "an empty list": {"projects": []},
    "both targets": {"projects": [1], "all": True},
    "no target": {"full": True},
    "all false": {"all": False},
    "an unknown field": {"all": True, "x": 1},
    "a list body": [1, 2],
    "a string as full": {"all": True, "full": "yes"},
}


@pytest.mark.parametrize("body", list(INVALID.values()), ids=list(INVALID))
def test_invalid_reindex_bodies_are_400_and_queue_nothing(
    client: TestClient, clean_db: str, clean_redis: str, body: Any
) -> None:
    response = client.post("/admin/reindex", json=body, headers=AUTH)
    assert response.status_code == 400, response.text
    assert response.json()["error"]
    assert fetch(clean_db, "SELECT id FROM backfills") == []
    assert queued_jobs(clean_redis) == set()


@pytest.mark.parametrize("content", [b"[" * 100_000, b"{not json", b"", b'{"all": true' + b" " * 10])
def test_malformed_or_deeply_nested_json_is_400(client: TestClient, clean_redis: str, content: bytes) -> None:
    response = client.post("/admin/reindex", content=content, headers=AUTH)
    assert response.status_code == 400
    assert queued_jobs(clean_redis) == set()


def test_errors_do_not_echo_unbounded_input(client: TestClient) -> None:
    response = client.post("/admin/reindex", json={"k" * 100_000: 1, "all": True}, headers=AUTH)
    assert response.status_code == 400
    assert len(response.text) < 500


def test_an_accepted_reindex_answers_its_backfill_id(client: TestClient, clean_db: str, clean_redis: str) -> None:
    response = client.post("/admin/reindex", json={"projects": [5, 3, 5], "full": True}, headers=AUTH)
    assert response.status_code == 202
    backfill_id = response.json()["backfill_id"]
    assert response.json() == {"backfill_id": backfill_id, "status": "queued"}
    [job_id] = queued_jobs(clean_redis)
    assert re.fullmatch(rf"backfill:{backfill_id}:[0-9a-f]{{12}}", job_id)  # the row's id and its job token
    report = client.get(f"/admin/backfills/{backfill_id}", headers=AUTH).json()
    assert (report["status"], report["projects"], report["full"], report["results"]) == ("queued", [5, 3], True, [])


@pytest.mark.parametrize("path", ["/admin/backfills/424242", f"/admin/backfills/{2**70}"])
def test_an_unknown_backfill_is_404(client: TestClient, path: str) -> None:
    assert client.get(path, headers=AUTH).status_code == 404


def test_backfill_reports_need_the_admin_token(client: TestClient) -> None:
    assert client.get("/admin/backfills/1").status_code == 401


async def test_one_unknown_id_does_not_fail_the_backfill_of_the_others(env: SyncEnv) -> None:
    known = env.gitlab.create_project("acme/known")
    known.commit({SRC + "A.java": "package com.acme; class A { int a() { return 1; } }"}, "init")
    settings = env.settings.model_copy(update={"admin_tokens": [admin_token(ADMIN)]})
    with TestClient(create_app(settings)) as client:
        accepted = client.post("/admin/reindex", json={"projects": [987654, known.id]}, headers=AUTH)
        assert accepted.status_code == 202
        await env.work()
        report = client.get(f"/admin/backfills/{accepted.json()['backfill_id']}", headers=AUTH).json()
    assert report["status"] == "done"
    assert report["counts"] == {"requested": 1, "not_found": 1}
    outcomes = {r["project_id"]: r["outcome"] for r in report["results"]}
    assert outcomes == {known.id: "requested", 987654: "not_found"}
    await env.audit(known)
