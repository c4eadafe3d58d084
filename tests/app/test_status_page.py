"""The operator's page over HTTP (issue 27): who may see it, its sign-in and session cookie, its headers.

The real app (`create_app`) on real PostgreSQL and Redis; the browser's view is tests/app/test_status_browser.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from app.console.html import CSP
from app.console.model import read_projects
from app.db import Database
from entry.web import create_app
from tests.hooks.test_receiver import make_settings
from tests.support.tokens import admin_token

ADMIN = "admin-token-for-tests-0123"
OTHER = "another-admin-token-for-tests-4567"
SECRET_PROJECT = "acme/secret-project"


@pytest.fixture
def settings(clean_db: str, clean_redis: str):  # type: ignore[no-untyped-def]
    return make_settings(clean_db, clean_redis).model_copy(update={"admin_tokens": [admin_token(ADMIN)]})


@pytest.fixture
def client(settings) -> Iterator[TestClient]:  # type: ignore[no-untyped-def]
    with TestClient(create_app(settings), follow_redirects=False) as c:
        yield c


def sign_in(client: TestClient, token: str = ADMIN) -> str:
    response = client.post("/admin/sign-in", data={"token": token})
    assert response.status_code == 303 and response.headers["location"] == "/admin", response.text
    return response.cookies["javakb_admin"]


def test_without_a_credential_the_page_sends_to_sign_in_and_shows_nothing(client: TestClient) -> None:
    for headers in ({}, {"Authorization": "Bearer not-an-admin-token"}):
        response = client.get("/admin", headers=headers)
        assert response.status_code == 303 and response.headers["location"] == "/admin/sign-in"
        assert response.content == b""
    client.cookies.set("javakb_admin", "x" * 43, path="/admin")  # a session id no sign-in handed out
    assert client.get("/admin").status_code == 303
    assert client.get("/").headers["location"] == "/admin"
    form = client.get("/admin/sign-in")
    assert form.status_code == 200 and 'name="token"' in form.text and "Projects" not in form.text
    assert form.headers["content-security-policy"] == CSP


def test_a_wrong_token_is_refused_and_opens_no_session(client: TestClient) -> None:
    for token in ("", "wrong", "x" * 10_000):
        response = client.post("/admin/sign-in", data={"token": token})
        assert response.status_code == 401, token[:10]
        assert "set-cookie" not in response.headers
        assert "not an admin token" in response.text


def test_signing_in_sets_a_strict_httponly_cookie_and_shows_the_page(client: TestClient) -> None:
    response = client.post("/admin/sign-in", data={"token": ADMIN})
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/admin" in cookie
    assert "secure" not in cookie  # plain http: a Secure cookie would never come back
    assert ADMIN not in response.headers["set-cookie"]  # an opaque id, never the token
    page = client.get("/admin")
    assert page.status_code == 200 and "Projects: 0" in page.text and "Queue" in page.text
    for name, value in {
        "content-security-policy": CSP,
        "x-content-type-options": "nosniff",
        "cache-control": "no-store",
        "x-frame-options": "DENY",
    }.items():
        assert page.headers[name] == value
    assert client.get("/admin/sign-in").headers["location"] == "/admin"  # signed in already
    assert client.get("/admin/projects").status_code == 401  # the REST API takes no cookie (no CSRF there)


def test_over_https_the_cookie_is_secure(settings) -> None:  # type: ignore[no-untyped-def]
    with TestClient(create_app(settings), base_url="https://testserver", follow_redirects=False) as c:
        response = c.post("/admin/sign-in", data={"token": ADMIN})
        assert "secure" in response.headers["set-cookie"].lower()


def test_the_admin_bearer_sees_the_page_too(client: TestClient) -> None:
    page = client.get("/admin", headers={"Authorization": f"Bearer {ADMIN}"})
    assert page.status_code == 200 and "java-kb-indexer" in page.text


def test_signing_out_ends_the_session(client: TestClient) -> None:
    session = sign_in(client)
    response = client.post("/admin/sign-out")
    assert response.status_code == 303 and response.headers["location"] == "/admin/sign-in"
    client.cookies.clear()
    client.cookies.set("javakb_admin", session, path="/admin")  # the old id, replayed
    assert client.get("/admin").status_code == 303


def test_removing_the_admin_token_ends_its_sessions(settings, client: TestClient) -> None:  # type: ignore[no-untyped-def]
    session = sign_in(client)
    rotated = settings.model_copy(update={"admin_tokens": [admin_token(OTHER)]})
    with TestClient(create_app(rotated), follow_redirects=False) as other:  # same Redis, the token gone
        other.cookies.set("javakb_admin", session, path="/admin")
        assert other.get("/admin").status_code == 303
    assert client.get("/admin").status_code == 200  # where the token is still configured


async def test_the_page_reads_every_state_but_counts_only_the_listed(clean_db: str) -> None:
    db = await Database.connect(clean_db)
    try:
        await db._execute(
            """
            INSERT INTO projects (id, repo_path, default_branch, indexed_sha, head_sha, requested_gen, done_gen,
                                  status, last_error)
            VALUES (1, 'acme/fine', 'main', 'a', 'a', 1, 1, 'ok', NULL),
                   (2, 'acme/late', 'main', 'a', 'a', 2, 1, 'ok', NULL),
                   (3, 'acme/broken', 'main', NULL, NULL, 1, 1, 'failed', 'GitLab answered 500')
            """
        )
        await db._execute(
            "INSERT INTO file_manifest (project_id, path, blob_sha, chunk_ids) VALUES (1, 'A.java', 'b', ARRAY['c1'])"
        )
        assert [r.files for r in await db.statuses(everything=True, counts=False)] == [0, 0, 0]
        projects = await read_projects(db)
    finally:
        await db.close()
    assert [p["repo"] for p in projects.listed] == ["acme/broken", "acme/late", "acme/fine"]
    assert projects.states == {"failed": 1, "pending": 1, "ok": 1} and projects.total == 3
    assert [p["files"] for p in projects.listed] == [0, 0, 1]  # the listed ones are counted
    assert projects.listed[0]["last_error"] == "GitLab answered 500"
