"""The receiver applies the indexing scope's path rules: an out-of-scope push is answered, recorded, not queued."""

from __future__ import annotations

from starlette.testclient import TestClient

from app.core.settings import ScopeSettings
from entry.web import create_app
from testkit import payloads
from tests.hooks.test_receiver import fetch, make_settings, post, queued_jobs


def test_a_push_out_of_scope_is_answered_200_ignored_with_the_reason(clean_db: str, clean_redis: str) -> None:
    settings = make_settings(clean_db, clean_redis).model_copy(update={"scope": ScopeSettings(allow=("acme",))})
    with TestClient(create_app(settings)) as client:
        response = post(client, payloads.system_hook_push())  # mike/diaspora
    assert response.status_code == 200
    assert response.json() == {
        "status": "ignored",
        "detail": "out of scope: under none of the allowed prefixes",
    }
    [delivery] = fetch(clean_db, "SELECT outcome, detail, project_id FROM deliveries")
    assert delivery == {"outcome": "ignored", "detail": response.json()["detail"], "project_id": 15}
    assert fetch(clean_db, "SELECT id FROM projects") == []
    assert queued_jobs(clean_redis) == set()


def test_a_destroy_out_of_scope_still_reaches_the_worker(clean_db: str, clean_redis: str) -> None:
    settings = make_settings(clean_db, clean_redis).model_copy(update={"scope": ScopeSettings(deny=("mike",))})
    body = {"event_name": "project_destroy", "project_id": 15, "path_with_namespace": "mike/diaspora"}
    with TestClient(create_app(settings)) as client:
        response = post(client, body)
    assert response.status_code == 202
    assert [j.split(":")[0] for j in queued_jobs(clean_redis)] == ["purge"]
