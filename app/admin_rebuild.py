"""`POST /admin/rebuild` and `GET /admin/rebuilds/{id}`: a model rebuild in service mode (`app.sync.rebuild`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from redis.exceptions import RedisError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from app.core.errors import ConflictError
from app.core.events import MAX_ID
from app.core.settings import GITLAB_UNSET
from app.core.states import RebuildProjectStatus, RebuildStatus
from app.db import RebuildProgress, RebuildRow
from app.deps import Deps
from app.schemas import RebuildAccepted, RebuildFailure, RebuildReport
from app.sync.queue import REBUILD, enqueue_once, rebuild_job_id

Handler = Callable[[Request], Awaitable[JSONResponse]]


def rebuild_routes(is_admin: Callable[[Request], bool], refuse: Callable[[], JSONResponse]) -> list[Route]:
    """The two routes, behind the web app's admin check (`refuse` answers a request without an admin token)."""

    def admin_only(handler: Handler) -> Handler:
        async def checked(request: Request) -> JSONResponse:
            return await handler(request) if is_admin(request) else refuse()

        return checked

    return [
        Route("/admin/rebuild", admin_only(admin_rebuild), methods=["POST"]),
        Route("/admin/rebuilds/{rebuild_id:int}", admin_only(admin_rebuild_report), methods=["GET"]),
    ]


async def admin_rebuild(request: Request) -> JSONResponse:
    """Open a rebuild and queue its start: 202 with its id; 409 while another one runs or without GitLab."""
    deps: Deps = request.state.deps
    if not deps.settings.gitlab.url:
        return JSONResponse({"error": GITLAB_UNSET}, status_code=409)
    db = deps.require_db()
    try:
        rebuild_id = await db.create_rebuild()
    except ConflictError as exc:
        return JSONResponse({"error": str(exc)}, status_code=409)
    try:
        await enqueue_once(deps.require_queue(), REBUILD, rebuild_job_id(rebuild_id), rebuild_id)
    except (RedisError, OSError) as exc:
        await db.set_rebuild_status(rebuild_id, RebuildStatus.FAILED, error=f"the queue is unavailable: {exc}")
        return JSONResponse({"error": "the queue is unavailable, try again"}, status_code=503)
    answer = RebuildAccepted(rebuild_id=rebuild_id, status=RebuildStatus.QUEUED.value)
    return JSONResponse(answer.model_dump(mode="json"), status_code=202)


async def admin_rebuild_report(request: Request) -> JSONResponse:
    """One rebuild's state, per-project counts, throughput and ETA."""
    deps: Deps = request.state.deps
    rebuild_id: int = request.path_params["rebuild_id"]
    db = deps.require_db()
    row = await db.rebuild(rebuild_id) if rebuild_id <= MAX_ID else None
    if row is None:
        return JSONResponse({"error": "no such rebuild"}, status_code=404)
    progress = await db.rebuild_progress(rebuild_id)
    return JSONResponse(report(row, progress, datetime.now(UTC)).model_dump(mode="json"))


def report(row: RebuildRow, progress: RebuildProgress, now: datetime) -> RebuildReport:
    """The answer, with the rate so far and the time left at that rate (pure)."""
    rate, eta = None, None
    if row.started_at is not None:
        elapsed = ((row.finished_at or now) - row.started_at).total_seconds()
        rate = progress.chunks / elapsed if elapsed > 0 else None
        pending = progress.projects.get(RebuildProjectStatus.PENDING, 0)
        done = sum(progress.projects.values()) - pending
        if row.status == RebuildStatus.BUILDING and done and elapsed > 0:
            eta = elapsed / done * pending
    return RebuildReport.model_validate(
        {
            "id": row.id,
            "status": row.status,
            "collection": row.collection,
            "previous": row.previous,
            "embedding_model": row.embedding_model,
            "dimension": row.dimension,
            "error": row.error,
            "created_at": row.created_at,
            "started_at": row.started_at,
            "finished_at": row.finished_at,
            "projects": progress.projects,
            "files": progress.files,
            "chunks": progress.chunks,
            "chunks_per_s": rate,
            "eta_s": eta,
            "failed": [RebuildFailure(project_id=p, detail=d) for p, d in progress.failed],
        }
    )
