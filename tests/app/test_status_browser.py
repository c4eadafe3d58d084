"""The operator's page in a real headless Chromium (issue 27), on the real service and worker.

The web app runs over real HTTP (`serve_app`) on the PostgreSQL, Redis queue and fake GitLab of
`sync_env`, whose worker syncs. A push reaches the receiver as GitLab sends it; the browser is sent to
the sign-in form (nothing else shown), signs in with the admin token, sees the project `pending`,
and, after the worker ran, sees it `ok` through the page's own refresh (polled with a deadline). The
screenshot is left in the test's tmp_path, its path printed.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from testkit.sync_env import push_payload, sync_env
from tests.support.browser import Page, chromium
from tests.support.live_app import serve_app
from tests.support.sources import service_java
from tests.support.tokens import admin_token

ADMIN = "admin-token-for-tests-0123"
REPO = "acme/shop"
ROWS = "[...document.querySelectorAll('tbody tr')].map(r => [...r.cells].map(c => c.innerText))"


def state_of(page: Page, repo: str) -> str | None:
    """The state cell of `repo`'s row in the projects table, as shown (None: no such row)."""
    rows: list[list[str]] = page.evaluate(ROWS) or []
    return next((row[1] for row in rows if row and row[0] == repo and len(row) > 1), None)


def hook_headers(gitlab_url: str) -> dict[str, str]:
    """A group webhook's headers (`WebHookService#build_headers`), with sync_env's secret."""
    return {
        "X-Gitlab-Event": "Push Hook",
        "X-Gitlab-Token": "x",
        "X-Gitlab-Instance": gitlab_url,
        "X-Gitlab-Webhook-UUID": str(uuid.uuid4()),
        "X-Gitlab-Event-UUID": str(uuid.uuid4()),
        "Idempotency-Key": str(uuid.uuid4()),
        "User-Agent": "GitLab/18.6.0",
    }


@pytest.mark.integration
@pytest.mark.timeout(240)
async def test_an_admin_signs_in_and_watches_a_push_become_ok(tmp_path: Path, clean_db: str, clean_redis: str) -> None:
    async with sync_env(tmp_path / "env", clean_db, clean_redis) as env:
        project = env.gitlab.create_project(REPO)
        settings = env.settings.model_copy(update={"admin_tokens": [admin_token(ADMIN)]})
        with serve_app(settings) as app, chromium(tmp_path / "chromium") as page:
            sha = project.commit({"src/main/java/com/acme/A.java": service_java("A")}, "first")
            body: Any = push_payload(project, sha)
            async with httpx.AsyncClient(base_url=app.base_url, timeout=30) as http:
                pushed = await http.post("/hooks/gitlab", json=body, headers=hook_headers(env.gitlab.url))
            assert pushed.status_code == 202, pushed.text

            page.goto(f"{app.base_url}/admin")
            assert page.url() == f"{app.base_url}/admin/sign-in"  # no credential: the form, and nothing else
            assert REPO not in page.text() and "Admin token" in page.text()

            page.type_into("input[name=token]", ADMIN)
            page.press_enter()
            page.wait_for(lambda: page.url() == f"{app.base_url}/admin" and "Projects" in page.text(), what="sign-in")
            [cookie] = [c for c in page.cookies() if c["name"] == "javakb_admin"]
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["value"] != ADMIN
            assert "system-ui" in page.evaluate("getComputedStyle(document.body).fontFamily")  # CSP let the style in
            assert page.wait_for(lambda: state_of(page, REPO), what=f"{REPO}'s row") == "pending"
            page.screenshot(tmp_path / "status-pending.png")

            await env.work()  # the real worker syncs the push
            page.wait_for(lambda: state_of(page, REPO) == "ok", timeout_s=60, what=f"{REPO} ok after a refresh")
            assert "up to date" in page.text() and sha[:12] in page.text()
            shot = page.screenshot(tmp_path / "status-ok.png")
            print(f"screenshot: {shot}")
            assert shot.stat().st_size > 1000

            page.evaluate("document.querySelector('form[action=\"/admin/sign-out\"]').requestSubmit()")
            page.wait_for(lambda: page.url().endswith("/admin/sign-in"), what="sign-out")
            page.goto(f"{app.base_url}/admin")
            assert page.url().endswith("/admin/sign-in") and REPO not in page.text()
