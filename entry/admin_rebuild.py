"""`POST /admin/rebuild` and `GET /admin/rebuilds/{id}`: a model rebuild in service mode (`app.sync.rebuild`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from app.core.errors import ConfigError, ConflictError, StorageError
from app.core.events import MAX_ID
from app.core.states import RebuildStatus
from app.rest.rebuilds import rebuild_report
from app.rest.schemas import RebuildAccepted
from app.runtime import ServiceDeps
from app.sync import rebuild

Handler = Callable[[Request], Awaitable[JSONResponse]]


def rebuild_routes(admin_only: Callable[[Request], None]) -> list[Route]:
    """The two routes, behind the web app's admin check (`admin_only` refuses a request without an admin token)."""

    def checked(handler: Handler) -> Handler:
        async def admitted(request: Request) -> JSONResponse:
            admin_only(request)
            return await handler(request)

        return admitted

    return [
        Route("/admin/rebuild", checked(admin_rebuild), methods=["POST"]),
        Route("/admin/rebuilds/{rebuild_id:int}", checked(admin_rebuild_report), methods=["GET"]),
    ]


async def admin_rebuild(request: Request) -> JSONResponse:
    """Open a rebuild and queue its start: 202 with its id; 409 while another one runs or without GitLab."""
    deps: ServiceDeps = request.state.deps
    try:
        rebuild_id = await rebuild.request(deps)
    except (ConfigError, ConflictError) as exc:
        return JSONResponse({"error": str(exc)}, status_code=409)
    except StorageError as exc:
        return JSONResponse({"error": f"{exc}; try again"}, status_code=503)
    answer = RebuildAccepted(rebuild_id=rebuild_id, status=RebuildStatus.QUEUED.value)
    return JSONResponse(answer.model_dump(mode="json"), status_code=202)


async def admin_rebuild_report(request: Request) -> JSONResponse:
    """One rebuild's state, per-project counts, throughput and ETA."""
    deps: ServiceDeps = request.state.deps
    rebuild_id: int = request.path_params["rebuild_id"]
    db = deps.db
    row = await db.rebuild(rebuild_id) if rebuild_id <= MAX_ID else None
    if row is None:
        return JSONResponse({"error": "no such rebuild"}, status_code=404)
    progress = await db.rebuild_progress(rebuild_id)
    return JSONResponse(rebuild_report(row, progress, datetime.now(UTC)).model_dump(mode="json"))
