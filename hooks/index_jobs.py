"""Index jobs: the trigger for projects without a system hook (issue 14), beside the webhook receiver.

- `POST /api/v1/index-jobs` `{project_id, commit_sha}`: a CI job asks to index its project. It is
  authenticated by its `CI_JOB_TOKEN` in `JOB-TOKEN`, which GitLab itself vouches for
  (`app.auth.job_token`), or by an index-job token of the settings (`JAVAKB_INDEX_JOB_TOKENS`, one
  project each); either way the token's project must be `project_id`, and a job token's pipeline
  must be at `commit_sha`. Credentials are checked before the body is read. 202 with the job's id
  (200 with the same id for a request seen before); `app.sync.requests` records and enqueues it.
- `GET /api/v1/index-jobs/{id}`: its state, for the same project's tokens (or an admin token);
  anyone else gets 404, as for an id that does not exist.

Like the receiver, it answers 401 for missing or refused credentials, 400/413 for a bad body, and 503
only when it could not record the request (GitLab or PostgreSQL down).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from app.auth.identity import bearer_token, match_token
from app.auth.job_token import JOB_TOKEN_HEADER, verify_job_token
from app.core.bodies import BodyTooLargeError, read_body
from app.core.errors import GitLabAuthError, GitLabNotFoundError, GitLabUnavailableError, StorageError
from app.core.events import MAX_ID
from app.core.refusals import RefusedError, refusal, unauthorized_error
from app.core.settings import GITLAB_UNSET
from app.core.states import RequestSource
from app.db import IndexRequestRow
from app.rest.schemas import INDEX_JOBS_PATH, IndexJobAnswer, IndexJobRequest, validation_message
from app.runtime import ServiceDeps
from app.sync.requests import request_index_job, request_state

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 4096  # {"project_id": ..., "commit_sha": ...} is under 150 bytes
MAX_TOKEN_CHARS = 1024  # GitLab's job tokens (`glcbt-...`, or a JWT) are far shorter
JOBS_PATH = INDEX_JOBS_PATH


@dataclass(frozen=True, slots=True, kw_only=True)
class JobCaller:
    """Who asks for an index job: the one project its token is for (None: an admin, any project)."""

    project_id: int | None
    source: RequestSource
    name: str
    sha: str | None = None  # a CI job's pipeline commit
    ref: str | None = None  # a CI job's branch (`refs/tags/<name>` for a tag pipeline)


def _error(status: int, message: str, **headers: str) -> JSONResponse:
    return refusal(RefusedError(status, message, headers))


def plausible_token(token: str) -> bool:
    """Whether a header value may be a GitLab token: printable ASCII, at most `MAX_TOKEN_CHARS`."""
    return len(token) <= MAX_TOKEN_CHARS and token.isascii() and token.isprintable() and " " not in token


async def job_caller(request: Request, *, admin: bool = False) -> JobCaller:
    """The caller of an index-job endpoint; refused (401), or while GitLab cannot say (503)."""
    deps: ServiceDeps = request.state.deps
    settings = deps.settings
    job_token = request.headers.get(JOB_TOKEN_HEADER)
    if job_token:
        if not settings.gitlab.url or not plausible_token(job_token):
            raise unauthorized_error()  # never forwarded to GitLab: what no GitLab token looks like
        try:
            job = await verify_job_token(deps.http, settings.gitlab.url, job_token, settings.gitlab.timeout_s)
        except GitLabAuthError as exc:
            logger.warning("index job refused: GitLab does not know the job token")
            raise unauthorized_error() from exc
        except GitLabUnavailableError as exc:
            logger.warning("index job: cannot check a job token: %s", exc)
            raise RefusedError(503, "GitLab is unavailable; try again", {"Retry-After": "5"}) from exc
        ref = f"refs/tags/{job.ref}" if job.tag and job.ref else job.ref
        return JobCaller(
            project_id=job.project_id, source=RequestSource.CI_JOB, name=f"ci_job:{job.id}", sha=job.sha, ref=ref
        )
    token = bearer_token(request.headers.get("authorization"))
    if token is not None:
        entry = match_token(token, settings.index_job_tokens)
        if entry is not None:
            return JobCaller(
                project_id=entry.project_id, source=RequestSource.INDEX_TOKEN, name=f"index_token:{entry.name}"
            )
        if admin and (held := match_token(token, settings.admin_tokens)) is not None:
            return JobCaller(project_id=None, source=RequestSource.INDEX_TOKEN, name=f"admin:{held.name}")
    raise unauthorized_error()


async def post_index_job(request: Request) -> JSONResponse:
    """`POST /api/v1/index-jobs`: record and enqueue a sync of the caller's project."""
    who = await job_caller(request)
    try:
        asked = IndexJobRequest.model_validate_json(await read_body(request, MAX_BODY_BYTES))
    except BodyTooLargeError as exc:
        return _error(413, str(exc))
    except ValidationError as exc:
        return _error(400, validation_message(exc))
    if asked.project_id != who.project_id:
        return _error(403, f"this token may only index project {who.project_id}")
    if who.sha is not None and who.sha != asked.commit_sha:
        return _error(403, f"this job token's pipeline is at {who.sha}, not at commit_sha")
    deps: ServiceDeps = request.state.deps
    if deps.gitlab is None:
        return _error(409, GITLAB_UNSET)
    try:
        project = await deps.gitlab.project(asked.project_id)
        row, fresh = await request_index_job(deps, project, asked.commit_sha, who.source, who.name, who.ref)
        answer = await _answer(deps, row)
    except GitLabNotFoundError:
        return _error(404, "GitLab does not know this project (or the service's token cannot see it)")
    except (GitLabUnavailableError, GitLabAuthError, StorageError) as exc:
        logger.warning("index job for project %s not recorded: %s", asked.project_id, exc)
        return _error(503, "not recorded; try again", **{"Retry-After": "5"})
    return JSONResponse(answer.model_dump(mode="json"), status_code=202 if fresh else 200)


async def get_index_job(request: Request) -> JSONResponse:
    """`GET /api/v1/index-jobs/{id}`: one index job's state, for its project's tokens or an admin."""
    who = await job_caller(request, admin=True)
    request_id: int = request.path_params["job_id"]
    deps: ServiceDeps = request.state.deps
    try:
        row = await deps.db.index_request(request_id) if request_id <= MAX_ID else None
        if row is None or (who.project_id is not None and row.project_id != who.project_id):
            return _error(404, "no such index job")
        answer = await _answer(deps, row)
    except StorageError as exc:
        logger.warning("index job %s not read: %s", request_id, exc)
        return _error(503, "PostgreSQL is unavailable; try again", **{"Retry-After": "5"})
    return JSONResponse(answer.model_dump(mode="json"))


async def _answer(deps: ServiceDeps, row: IndexRequestRow) -> IndexJobAnswer:
    project = await deps.db.project(row.project_id)
    state, error = request_state(row, project)
    return IndexJobAnswer(
        id=row.id,
        project_id=row.project_id,
        commit_sha=row.commit_sha,
        state=state.value,
        generation=row.generation,
        indexed_sha=project.indexed_sha if project is not None else None,
        error=error,
        created_at=row.created_at,
    )
