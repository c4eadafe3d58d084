"""The admin API's reads: backfill reports, projects and sync runs, each paginated by keyset.

Every list is ordered by id and cut into pages with `?after=<last id>&per_page=N` (at most 1000); a
full page answers `Link: <...?after=ID&per_page=N>; rel="next"`, as GitLab's keyset pagination does,
so the bodies stay what they were (a list of projects, a report) (docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar
from urllib.parse import urlencode

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from app.auth.identity import bearer_token, match_token
from app.core.events import MAX_ID
from app.core.refusals import RefusedError, unauthorized_error
from app.core.states import BackfillProgress, BackfillStatus, RunStatus
from app.rest.reports import backfill_report, job_state
from app.rest.schemas import BackfillSummary, PageParams, ProjectState, validation_message
from app.runtime import ServiceDeps

E = TypeVar("E")


def admin_ok(request: Request) -> bool:
    """Whether the request carries one of the admin tokens (stored as sha256 digests)."""
    deps: ServiceDeps = request.state.deps
    token = bearer_token(request.headers.get("authorization"))
    return token is not None and match_token(token, deps.settings.admin_tokens) is not None


def admin_only(request: Request) -> None:
    """Refuses (401) a request without an admin token."""
    if not admin_ok(request):
        raise unauthorized_error()


def page_of(request: Request) -> PageParams:
    """The page asked for; a bad one is refused (400)."""
    try:
        return PageParams.model_validate(dict(request.query_params))
    except ValidationError as exc:
        raise RefusedError(400, validation_message(exc)) from exc


def admin_page(request: Request) -> PageParams:
    """An admin list's page: refused without an admin token (401), or when bad (400)."""
    admin_only(request)
    return page_of(request)


def choice(request: Request, name: str, choices: Iterable[E], shown: Callable[[E], str] = str) -> E | None:
    """The query parameter `name` as one of `choices` (spelled as `shown` spells it, any case); None when absent.

    Anything else is refused (400) with the choices named.
    """
    wanted = request.query_params.get(name)
    if wanted is None:
        return None
    options = list(choices)
    found = next((c for c in options if shown(c).lower() == wanted.lower()), None)
    if found is None:
        raise RefusedError(400, f"{name}: one of {', '.join(shown(c) for c in options)}")
    return found


def paged(request: Request, body: Any, page: PageParams, ids: Sequence[int]) -> JSONResponse:
    """The answer, with `Link: rel="next"` when the page is full (the next one may be empty)."""
    headers = {}
    if len(ids) == page.per_page:
        query = dict(request.query_params) | {"after": str(ids[-1]), "per_page": str(page.per_page)}
        headers["Link"] = f'<{request.url.replace(query=urlencode(query))}>; rel="next"'
    return JSONResponse(body, headers=headers)


def project_state(row: Any) -> ProjectState:
    """A `ProjectRow` as the API shows it: `state`, not the stored status (`ok` only when nothing waits)."""
    shown = {"status": "state"}
    return ProjectState.model_validate(
        {name: getattr(row, shown.get(name, name)) for name in ProjectState.model_fields}
    )


async def admin_projects(request: Request) -> JSONResponse:
    """Every project's sync state, by id, one page at a time."""
    page = admin_page(request)
    deps: ServiceDeps = request.state.deps
    rows = await deps.db.projects_page(page.after, page.per_page)
    body = [project_state(r).model_dump(mode="json") for r in rows]
    return paged(request, body, page, [r.id for r in rows])


async def admin_project(request: Request) -> JSONResponse:
    """One project's sync state."""
    admin_only(request)
    project_id: int = request.path_params["project_id"]
    deps: ServiceDeps = request.state.deps
    row = await deps.db.project(project_id) if project_id <= MAX_ID else None
    if row is None:
        return JSONResponse({"error": "no such project"}, status_code=404)
    return JSONResponse(project_state(row).model_dump(mode="json"))


async def admin_jobs(request: Request) -> JSONResponse:
    """Sync runs of every project, oldest first, `?status=running|done|failed|pending` to keep one kind."""
    page = admin_page(request)
    status = choice(request, "status", RunStatus, lambda s: s.value.lower())
    deps: ServiceDeps = request.state.deps
    rows = await deps.db.runs_page(status, page.after, page.per_page)
    body = [job_state(r).model_dump(mode="json") for r in rows]
    return paged(request, body, page, [int(r["id"]) for r in rows])


async def admin_backfills(request: Request) -> JSONResponse:
    """Every backfill, oldest first, `?status=queued|running|done|failed` to keep one kind."""
    page = admin_page(request)
    status = choice(request, "status", BackfillStatus)
    deps: ServiceDeps = request.state.deps
    rows = await deps.db.backfills_page(status, page.after, page.per_page)
    shown = {"full": "full_sync", "force": "force_embed"}
    body = [
        BackfillSummary.model_validate({k: r[shown.get(k, k)] for k in BackfillSummary.model_fields}).model_dump(
            mode="json"
        )
        for r in rows
    ]
    return paged(request, body, page, [int(r["id"]) for r in rows])


async def admin_backfill(request: Request) -> JSONResponse:
    """One backfill's progress (projects by state, files, chunks, throughput, ETA) and a page of its projects."""
    page = admin_page(request)
    state = choice(request, "state", BackfillProgress)
    backfill_id: int = request.path_params["backfill_id"]
    deps: ServiceDeps = request.state.deps
    db = deps.db
    row = await db.backfill(backfill_id) if backfill_id <= MAX_ID else None
    if row is None:
        return JSONResponse({"error": "no such backfill"}, status_code=404)
    results = await db.backfill_projects(backfill_id, after=page.after, limit=page.per_page, state=state)
    report = await backfill_report(db, row, results)
    return paged(request, report.model_dump(mode="json"), page, [r["project_id"] for r in results])
