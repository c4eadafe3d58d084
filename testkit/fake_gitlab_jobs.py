"""CI jobs of the fake GitLab: a job token per running job, and `GET /api/v4/job` that answers with its job.

GitLab (doc/api/jobs.md, "Get job tokens job"; `lib/api/ci/jobs.rb` `get '/job'`) authenticates the
`JOB-TOKEN` header (or `job_token` parameter) as the running job it belongs to and answers with the
job entity (`Entities::Ci::Job`: id, status, ref, tag, pipeline{id, project_id, ref, sha, status},
web_url, ...). A token whose job is not running, or one GitLab never issued, gets
`401 {"message": "401 Unauthorized"}`.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]


@dataclass
class FakeJob:
    """One CI job: its project, pipeline commit and ref, and whether it still runs."""

    id: int
    pipeline_id: int
    project_id: int
    sha: str
    ref: str
    tag: bool = False
    status: str = "running"


class CiJobs:
    """The running and finished jobs, by token."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, FakeJob] = {}
        self._next = 1

    def start(self, project_id: int, sha: str, ref: str, *, tag: bool = False) -> tuple[str, FakeJob]:
        """A new running job and its `CI_JOB_TOKEN` (GitLab's `glcbt-` prefix)."""
        with self._lock:
            job = FakeJob(
                id=self._next, pipeline_id=1000 + self._next, project_id=project_id, sha=sha, ref=ref, tag=tag
            )
            self._next += 1
            token = "glcbt-" + secrets.token_hex(16)
            self._jobs[token] = job
        return token, job

    def finish(self, token: str, status: str = "success") -> None:
        """The job ended: its token is no longer valid."""
        with self._lock:
            self._jobs[token].status = status

    def answer(self, method: str, path: str, token: str, base_url: str) -> tuple[int, Json]:
        """What GitLab answers a request authenticated by a job token (only `GET /api/v4/job` here)."""
        with self._lock:
            job = self._jobs.get(token)
        if job is None or job.status != "running":
            return 401, {"message": "401 Unauthorized"}
        if method != "GET" or path != "/api/v4/job":
            return 403, {"message": "403 Forbidden"}
        return 200, job_entity(job, base_url)


def job_entity(job: FakeJob, base_url: str) -> Json:
    """`Entities::Ci::Job` as `GET /job` renders it (the fields a client reads; users and runners left out)."""
    return {
        "id": job.id,
        "status": job.status,
        "stage": "index",
        "name": "java-kb-index",
        "ref": job.ref,
        "tag": job.tag,
        "allow_failure": True,
        "pipeline": {
            "id": job.pipeline_id,
            "iid": job.pipeline_id,
            "project_id": job.project_id,
            "sha": job.sha,
            "ref": job.ref,
            "status": job.status,
            "source": "push",
        },
        "web_url": f"{base_url}/-/jobs/{job.id}",
        "project": {"ci_job_token_scope_enabled": True},
        "user": None,
    }
