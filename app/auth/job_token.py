"""GitLab CI job tokens: who sent `JOB-TOKEN`, asked of GitLab itself (`GET /api/v4/job`).

GitLab answers `GET /job` with the job a `CI_JOB_TOKEN` belongs to (doc/api/jobs.md, "Get job
tokens job"), including `pipeline.project_id`, `pipeline.sha` and the job's `ref`. A job token is
valid only while its job runs, and GitLab answers 401 for any other (a forged, revoked or finished
job's token). Nothing is cached: a CI job sends its token once or twice, and a cache would keep a
finished job's token valid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from app.core.errors import GitLabAuthError, GitLabUnavailableError

JOB_TOKEN_HEADER = "job-token"
"""The header a CI job sends its `CI_JOB_TOKEN` in (GitLab's own name, case-insensitive)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CiJob:
    """The job a CI job token belongs to, as GitLab reports it."""

    id: int
    project_id: int
    sha: str | None
    ref: str | None
    tag: bool


def ci_job(body: Any) -> CiJob:
    """The job of a `GET /job` answer (pure); `GitLabUnavailableError` for a body GitLab would not send."""
    pipeline = body.get("pipeline") if isinstance(body, dict) else None
    if not isinstance(pipeline, dict) or not isinstance(body.get("id"), int):
        raise GitLabUnavailableError("GitLab /job answered an unexpected body")
    project_id = pipeline.get("project_id")
    if isinstance(project_id, bool) or not isinstance(project_id, int):
        raise GitLabUnavailableError("GitLab /job answered without pipeline.project_id")
    sha, ref = pipeline.get("sha"), body.get("ref")
    return CiJob(
        id=body["id"],
        project_id=project_id,
        sha=sha if isinstance(sha, str) else None,
        ref=ref if isinstance(ref, str) else None,
        tag=body.get("tag") is True,
    )


async def verify_job_token(http: httpx.AsyncClient, gitlab_url: str, token: str, timeout_s: float) -> CiJob:
    """The running job `token` belongs to.

    Raises:
        GitLabAuthError: GitLab does not know the token (forged, or its job is not running).
        GitLabUnavailableError: GitLab did not answer, or not as documented.
    """
    url = f"{gitlab_url.rstrip('/')}/api/v4/job"
    try:
        response = await http.get(url, headers={"JOB-TOKEN": token}, timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise GitLabUnavailableError(f"GitLab did not answer: {type(exc).__name__}") from exc
    if response.status_code in (401, 403, 404):
        raise GitLabAuthError("GitLab refused the job token")
    if response.status_code != 200:
        raise GitLabUnavailableError(f"GitLab answered {response.status_code}")
    try:
        return ci_job(response.json())
    except ValueError as exc:
        raise GitLabUnavailableError("GitLab answered something that is not JSON") from exc
