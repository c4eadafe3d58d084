"""Triggers without a system hook (issue 14), end to end on the fake GitLab, real PostgreSQL and Redis:
a group webhook's push and a CI job's `POST /api/v1/index-jobs`, each synced by the real worker and
audited against git; forged, foreign and finished tokens refused with nothing recorded.

The web app runs over real HTTP (`serve_app`) on the same PostgreSQL, Redis queue and fake GitLab as
the worker of `sync_env`; each has its own embedded store (the app only records and enqueues).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest_asyncio
import yaml

from testkit.fake_gitlab import FakeProject
from testkit.payloads import ADMIN as HOOK_USER
from testkit.payloads import HookProject, RefChange, repository_update_body
from testkit.sync_env import SyncEnv, push_payload, sync_env
from tests.hooks.test_receiver import afetch
from tests.support.live_app import LiveApp, serve_app
from tests.support.sources import service_java as service
from tests.support.tokens import admin_token, index_job_token, service_token

SRC = "src/main/java/com/acme/"
SECRET = "x"  # sync_env's webhook secret
INDEX_TOKEN = "index-job-token-for-tests-0123"
ADMIN = "admin-token-for-tests-0123"
READER = "reader-of-acme-shop-token-0123"
JOBS = "/api/v1/index-jobs"


@dataclass
class Live:
    env: SyncEnv
    app: LiveApp
    http: httpx.AsyncClient
    project: FakeProject  # acme/shop, the project INDEX_TOKEN is for
    other: FakeProject  # acme/other

    async def group_hook(
        self, body: Mapping[str, Any], *, key: str | None = None, token: str = SECRET
    ) -> httpx.Response:
        """A delivery as a group webhook sends it (`WebHookService#build_headers` for a GroupHook)."""
        key = key or str(uuid.uuid4())
        headers = {
            "X-Gitlab-Event": "Push Hook",
            "X-Gitlab-Token": token,
            "X-Gitlab-Instance": self.env.gitlab.url,
            "X-Gitlab-Webhook-UUID": str(uuid.uuid4()),
            "X-Gitlab-Event-UUID": str(uuid.uuid4()),
            "Idempotency-Key": key,
            "User-Agent": "GitLab/18.6.0",
        }
        return await self.http.post("/hooks/gitlab", json=body, headers=headers)

    async def index_job(self, body: Any, **headers: str) -> httpx.Response:
        return await self.http.post(JOBS, json=body, headers=headers)

    async def rows(self, query: str) -> list[dict[str, Any]]:
        return await afetch(self.env.settings.postgres.dsn.get_secret_value(), query)


@pytest_asyncio.fixture
async def live(tmp_path: Path, clean_db: str, clean_redis: str) -> AsyncIterator[Live]:
    async with sync_env(tmp_path, clean_db, clean_redis) as env:
        project = env.gitlab.create_project("acme/shop")
        other = env.gitlab.create_project("acme/other")
        settings = env.settings.model_copy(
            update={
                "index_job_tokens": [index_job_token(INDEX_TOKEN, project.id)],
                "admin_tokens": [admin_token(ADMIN)],
                "service_tokens": [service_token(READER, ["acme/shop"])],
            }
        )
        with serve_app(settings) as app:
            async with httpx.AsyncClient(base_url=app.base_url, timeout=30) as http:
                yield Live(env=env, app=app, http=http, project=project, other=other)


# --- group webhooks --------------------------------------------------------------------------------------------------


async def test_a_group_webhook_push_is_synced_end_to_end(live: Live) -> None:
    sha = live.project.commit({SRC + "A.java": service("A")}, "first")
    response = await live.group_hook(push_payload(live.project, sha), key="group-1")
    assert response.status_code == 202, response.text
    assert response.json()["status"] == "enqueued"
    await live.env.work()
    await live.env.audit(live.project)
    assert (await live.env.deps.db.project(live.project.id)).indexed_sha == sha  # type: ignore[union-attr]


async def test_a_group_webhook_resend_is_a_duplicate_and_a_wrong_token_is_refused(live: Live) -> None:
    sha = live.project.commit({SRC + "A.java": service("A")}, "first")
    body = push_payload(live.project, sha)
    assert (await live.group_hook(body, key="k")).status_code == 202
    again = await live.group_hook(body, key="k")  # GitLab's "Resend request" keeps the Idempotency-Key
    assert again.status_code == 200 and again.json()["status"] == "duplicate"
    assert (await live.group_hook(body, token="wrong")).status_code == 401
    assert len(await live.rows("SELECT * FROM deliveries")) == 1


async def test_a_group_webhook_push_to_another_branch_is_ignored(live: Live) -> None:
    live.project.commit({SRC + "A.java": service("A")}, "first")
    live.project.create_branch("feature", live.project.head())
    sha = live.project.commit({SRC + "B.java": service("B")}, "on feature", branch="feature")
    response = await live.group_hook(push_payload(live.project, sha, ref="refs/heads/feature"))
    assert response.status_code == 200 and response.json()["status"] == "ignored"
    assert await live.rows("SELECT * FROM projects") == []


async def test_one_push_reported_by_a_system_hook_and_a_group_hook_is_synced_once(live: Live) -> None:
    sha = live.project.commit({SRC + "A.java": service("A")}, "first")
    hook_project = HookProject(
        id=live.project.id, name="shop", namespace="acme", path_with_namespace="acme/shop", default_branch="main"
    )
    system = repository_update_body(
        hook_project, HOOK_USER, [RefChange(before="0" * 40, after=sha, ref="refs/heads/main")]
    )
    assert (await live.env.deliver(system)) == "enqueued"
    assert (await live.group_hook(push_payload(live.project, sha))).status_code == 202
    await live.env.work()
    assert len(await live.env.runs(live.project.id)) == 1  # two deliveries, one run that did work
    await live.env.audit(live.project)


# --- index jobs: CI job tokens -------------------------------------------------------------------------------------


async def test_a_ci_job_token_indexes_its_project_and_reports_the_state(live: Live) -> None:
    sha = live.project.commit({SRC + "A.java": service("A")}, "first")
    token = live.env.gitlab.start_job(live.project)
    response = await live.index_job({"project_id": live.project.id, "commit_sha": sha}, **{"JOB-TOKEN": token})
    assert response.status_code == 202, response.text
    job = response.json()
    assert job["state"] == "queued" and job["project_id"] == live.project.id and job["commit_sha"] == sha
    assert (await live.http.get(f"{JOBS}/{job['id']}", headers={"JOB-TOKEN": token})).json()["state"] == "queued"
    await live.env.work()
    done = (await live.http.get(f"{JOBS}/{job['id']}", headers={"JOB-TOKEN": token})).json()
    assert done["state"] == "done" and done["indexed_sha"] == sha and done["error"] is None
    await live.env.audit(live.project)
    runs = await live.rows("SELECT trigger FROM index_jobs")
    assert [r["trigger"] for r in runs] == ["index_job"]
    assert "/api/v4/job" in [path for _, path in live.env.gitlab.calls]  # GitLab vouched for the token


async def test_a_retried_ci_job_gets_the_same_id_and_asks_for_nothing_new(live: Live) -> None:
    sha = live.project.commit({SRC + "A.java": service("A")}, "first")
    token = live.env.gitlab.start_job(live.project)
    body = {"project_id": live.project.id, "commit_sha": sha}
    first = await live.index_job(body, **{"JOB-TOKEN": token})
    second = await live.index_job(body, **{"JOB-TOKEN": live.env.gitlab.start_job(live.project)})  # a retried job
    assert (first.status_code, second.status_code) == (202, 200)
    assert first.json()["id"] == second.json()["id"]
    assert [r["requested_gen"] for r in await live.rows("SELECT requested_gen FROM projects")] == [1]


async def test_an_index_job_and_a_push_for_one_commit_are_one_run(live: Live) -> None:
    sha = live.project.commit({SRC + "A.java": service("A")}, "first")
    assert (await live.group_hook(push_payload(live.project, sha))).status_code == 202
    token = live.env.gitlab.start_job(live.project)
    job = await live.index_job({"project_id": live.project.id, "commit_sha": sha}, **{"JOB-TOKEN": token})
    assert job.status_code == 202 and job.json()["generation"] == 2  # the push had generation 1
    await live.env.work()
    assert len(await live.env.runs(live.project.id)) == 1  # coalesced: the second job found the work done
    assert (await live.http.get(f"{JOBS}/{job.json()['id']}", headers={"JOB-TOKEN": token})).json()["state"] == "done"


async def test_forged_finished_and_foreign_job_tokens_are_refused_and_record_nothing(live: Live) -> None:
    sha = live.project.commit({SRC + "A.java": service("A")}, "first")
    live.other.commit({SRC + "B.java": service("B")}, "other")
    body = {"project_id": live.project.id, "commit_sha": sha}
    assert (await live.index_job(body, **{"JOB-TOKEN": "glcbt-forged"})).status_code == 401
    finished = live.env.gitlab.start_job(live.project)
    live.env.gitlab.ci_jobs.finish(finished)
    assert (await live.index_job(body, **{"JOB-TOKEN": finished})).status_code == 401
    foreign = await live.index_job(body, **{"JOB-TOKEN": live.env.gitlab.start_job(live.other)})
    assert foreign.status_code == 403 and f"project {live.other.id}" in foreign.json()["error"]
    elsewhere = live.env.gitlab.start_job(live.project, sha="f" * 40)
    at_other_commit = await live.index_job(body, **{"JOB-TOKEN": elsewhere})
    assert at_other_commit.status_code == 403
    assert (await live.index_job(body)).status_code == 401  # no credential at all
    for odd in (b"x" * 5000, b"tok en", "caf\u00e9".encode("latin-1")):  # never sent on to GitLab
        calls = len(live.env.gitlab.calls)
        assert (await live.http.post(JOBS, json=body, headers={b"JOB-TOKEN": odd})).status_code == 401
        assert len(live.env.gitlab.calls) == calls
    assert await live.rows("SELECT * FROM index_requests") == []
    assert await live.rows("SELECT * FROM projects") == []


async def test_a_ci_job_on_another_branch_is_recorded_as_ignored(live: Live) -> None:
    live.project.commit({SRC + "A.java": service("A")}, "first")
    live.project.create_branch("feature", live.project.head())
    sha = live.project.commit({SRC + "B.java": service("B")}, "on feature", branch="feature")
    token = live.env.gitlab.start_job(live.project, sha=sha, ref="feature")
    response = await live.index_job({"project_id": live.project.id, "commit_sha": sha}, **{"JOB-TOKEN": token})
    assert response.status_code == 202
    assert response.json()["state"] == "ignored" and "feature is not the default branch" in response.json()["error"]
    assert await live.rows("SELECT * FROM projects") == []


# --- index jobs: index-job tokens ----------------------------------------------------------------------------------


async def test_an_index_job_token_indexes_only_its_own_project(live: Live) -> None:
    sha = live.project.commit({SRC + "A.java": service("A")}, "first")
    other_sha = live.other.commit({SRC + "B.java": service("B")}, "other")
    auth = {"Authorization": f"Bearer {INDEX_TOKEN}"}
    ok = await live.index_job({"project_id": live.project.id, "commit_sha": sha}, **auth)
    assert ok.status_code == 202, ok.text
    refused = await live.index_job({"project_id": live.other.id, "commit_sha": other_sha}, **auth)
    assert refused.status_code == 403
    wrong = await live.index_job({"project_id": live.project.id, "commit_sha": sha}, Authorization="Bearer nope")
    assert wrong.status_code == 401
    await live.env.work()
    state = await live.http.get(f"{JOBS}/{ok.json()['id']}", headers=auth)
    assert state.json()["state"] == "done"
    assert (
        await live.http.get(f"{JOBS}/{ok.json()['id']}", headers={"Authorization": f"Bearer {ADMIN}"})
    ).status_code == 200
    assert [r["project_id"] for r in await live.rows("SELECT project_id FROM index_requests")] == [live.project.id]


async def test_another_projects_job_is_not_found(live: Live) -> None:
    sha = live.project.commit({SRC + "A.java": service("A")}, "first")
    ok = await live.index_job({"project_id": live.project.id, "commit_sha": sha}, Authorization=f"Bearer {INDEX_TOKEN}")
    foreign = live.env.gitlab.start_job(live.other, sha=live.other.commit({SRC + "B.java": service("B")}, "b"))
    assert (await live.http.get(f"{JOBS}/{ok.json()['id']}", headers={"JOB-TOKEN": foreign})).status_code == 404
    assert (await live.http.get(f"{JOBS}/999999", headers={"Authorization": f"Bearer {ADMIN}"})).status_code == 404


async def test_bad_index_job_bodies_are_400(live: Live) -> None:
    auth = {"Authorization": f"Bearer {INDEX_TOKEN}"}
    for body in (
        {"project_id": live.project.id},
        {"project_id": str(live.project.id), "commit_sha": "a" * 40},
        {"project_id": live.project.id, "commit_sha": "not-a-sha"},
        {"project_id": live.project.id, "commit_sha": "A" * 40},
        {"project_id": True, "commit_sha": "a" * 40},
        {"project_id": live.project.id, "commit_sha": "a" * 40, "extra": 1},
        [1, 2],
    ):
        response = await live.index_job(body, **auth)
        assert response.status_code == 400, (body, response.text)
    big = await live.http.post(JOBS, content=b"{" + b" " * 10_000 + b"}", headers=auth)
    assert big.status_code == 413
    assert await live.rows("SELECT * FROM index_requests") == []


# --- the status over REST, and what an index-job token may not do ----------------------------------------------------


async def test_the_rest_status_shows_the_readers_projects_and_an_index_token_reads_nothing(live: Live) -> None:
    for project in (live.project, live.other):
        await live.env.push(project, {SRC + "A.java": service("A")})
    await live.env.work()
    reader = {"Authorization": f"Bearer {READER}"}
    answer = await live.http.get("/api/v1/index-status", headers=reader)
    assert answer.status_code == 200
    [item] = answer.json()["results"]
    assert item["repo"] == "acme/shop" and item["gitlab_head"] == item["indexed_sha"] == live.project.head()
    hidden = await live.http.get("/api/v1/index-status", params={"repo": "acme/other"}, headers=reader)
    assert hidden.json() == {"results": []}
    as_index_token = {"Authorization": f"Bearer {INDEX_TOKEN}"}
    assert (await live.http.get("/api/v1/index-status", headers=as_index_token)).status_code == 401
    assert (await live.http.get("/api/v1/search", params={"q": "run"}, headers=as_index_token)).status_code == 401


# --- the .gitlab-ci.yml include, run as a runner would -------------------------------------------------------------

CI_INCLUDE = Path(__file__).resolve().parents[2] / "docs" / "ci" / "java-kb-index.gitlab-ci.yml"


def include_job() -> dict[str, Any]:
    job: dict[str, Any] = yaml.safe_load(CI_INCLUDE.read_text())["java-kb-index"]
    return job


def test_the_include_runs_only_on_the_default_branch_without_blocking_the_pipeline() -> None:
    job = include_job()
    assert job["rules"] == [{"if": "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH && $JAVA_KB_URL"}]
    assert job["allow_failure"] is True and job["stage"] == ".post"
    assert job["image"]["entrypoint"] == [""]  # curl's image has curl as its entrypoint: a runner needs a shell


async def run_include(live: Live, **variables: str) -> subprocess.CompletedProcess[str]:
    """The include's script under `sh`, with the variables a runner sets (`set -e`, as runners run it)."""
    script = "set -e\n" + "\n".join(include_job()["script"])
    environment = {"PATH": os.environ["PATH"], "JAVA_KB_URL": live.app.base_url + "/", **variables}
    return await asyncio.to_thread(
        subprocess.run, ["sh", "-c", script], env=environment, capture_output=True, text=True, timeout=60, check=False
    )


async def test_the_include_indexes_the_commit_with_the_jobs_own_token(live: Live) -> None:
    sha = live.project.commit({SRC + "A.java": service("A")}, "first")
    ran = await run_include(
        live,
        CI_JOB_TOKEN=live.env.gitlab.start_job(live.project),
        CI_PROJECT_ID=str(live.project.id),
        CI_COMMIT_SHA=sha,
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["state"] == "queued"
    await live.env.work()
    await live.env.audit(live.project)


async def test_the_include_uses_an_index_job_token_when_given_and_fails_on_refusal(live: Live) -> None:
    sha = live.project.commit({SRC + "A.java": service("A")}, "first")
    variables = {"CI_JOB_TOKEN": "glcbt-unused", "CI_PROJECT_ID": str(live.project.id), "CI_COMMIT_SHA": sha}
    ran = await run_include(live, **variables, JAVA_KB_INDEX_TOKEN=INDEX_TOKEN)
    assert ran.returncode == 0, ran.stderr
    refused = await run_include(live, **variables)  # a job token GitLab never issued
    assert refused.returncode != 0 and "unauthorized" in refused.stdout
