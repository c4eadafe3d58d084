"""The Starlette application: the GitLab receiver, the MCP server at /mcp, REST search, admin, health.

`create_app(settings)` opens its own `Deps` in the lifespan (PostgreSQL, Redis, Qdrant);
`create_app(settings, deps=...)` reuses the caller's, which is how `javakb serve` runs the
receiver and the worker in one process over one embedded Qdrant. The MCP app is mounted at the
root, last, so its endpoint is exactly `/mcp` (no 307 to `/mcp/`), and its lifespan runs inside ours
(without it FastMCP's session manager never starts).

Once started, the heap built so far (imports, FastMCP, clients: about 200,000 objects) is moved out
of the garbage collector's reach with `gc.freeze()`: a full collection over it took 75-150 ms,
stalling every request in flight, and none of it is garbage.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypedDict

from fastmcp.utilities.lifespan import combine_lifespans
from redis.exceptions import RedisError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Mount, Route

from app.api import api_search
from app.deps import Deps, open_deps
from app.errors import ServiceError
from app.queue import BACKFILL, enqueue_once
from app.settings import GITLAB_UNSET, Settings
from app.supervisor import WorkerHealth
from hooks.receiver import Receiver, make_endpoint
from mcp_server.auth import StaticTokens, bearer_matches
from mcp_server.server import create_server

logger = logging.getLogger(__name__)


class State(TypedDict):
    """Lifespan state: what every request sees as `request.state`."""

    deps: Deps
    receiver: Receiver
    worker_health: Callable[[], WorkerHealth] | None


def create_app(
    settings: Settings, deps: Deps | None = None, *, worker_health: Callable[[], WorkerHealth] | None = None
) -> Starlette:
    """The web application; `worker_health` reports the worker running in this process (`javakb serve`)."""
    current: dict[str, Deps] = {}

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[State]:
        if deps is not None:
            current["deps"] = deps
            _freeze_heap()
            yield {"deps": deps, "receiver": Receiver(deps), "worker_health": worker_health}
            return
        async with open_deps(settings, with_db=True, with_queue=True) as opened:
            await opened.store.ensure(await opened.index_model())
            current["deps"] = opened
            _freeze_heap()
            yield {"deps": opened, "receiver": Receiver(opened), "worker_health": worker_health}

    mcp = create_server(lambda: current["deps"], auth=StaticTokens(settings.api_tokens))
    mcp_app = mcp.http_app(path="/mcp", stateless_http=True)
    routes: list[BaseRoute] = [
        Route("/hooks/gitlab", make_endpoint(), methods=["POST"]),
        Route("/api/v1/search", api_search, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/admin/reindex", admin_reindex, methods=["POST"]),
        Route("/admin/projects", admin_projects, methods=["GET"]),
        Mount("/", app=mcp_app),
    ]
    return Starlette(routes=routes, lifespan=combine_lifespans(lifespan, mcp_app.lifespan))


def _freeze_heap() -> None:
    """Collect what is garbage now, then keep the garbage collector off everything that remains."""
    gc.collect()
    gc.freeze()


async def healthz(request: Request) -> JSONResponse:
    """Liveness: the process answers."""
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> JSONResponse:
    """Readiness: PostgreSQL, Redis and Qdrant answer, and the worker of this process (if any) runs."""
    deps: Deps = request.state.deps
    checks: dict[str, str] = {}
    try:
        await deps.require_db().ping()
        checks["postgres"] = "ok"
    except (ServiceError, OSError) as exc:
        checks["postgres"] = f"error: {exc}"
    try:
        await deps.require_queue().ping()
        checks["redis"] = "ok"
    except (ServiceError, RedisError, OSError) as exc:
        checks["redis"] = f"error: {exc}"
    try:
        await deps.store.count()
        checks["qdrant"] = "ok"
    except ServiceError as exc:
        checks["qdrant"] = f"error: {exc}"
    health: Callable[[], WorkerHealth] | None = request.state.worker_health
    if health is not None:
        checks["worker"] = health().describe()
    ready = all(v == "ok" for v in checks.values())
    return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)


def _admin_ok(request: Request) -> bool:
    deps: Deps = request.state.deps
    return bearer_matches(request.headers.get("authorization"), deps.settings.admin_tokens)


async def admin_reindex(request: Request) -> JSONResponse:
    """Backfill: `{"projects": [ids]}` or `{"all": true}`, with `"full": true` to walk whole trees."""
    if not _admin_ok(request):
        return JSONResponse({"error": "unauthorized"}, status_code=401, headers={"WWW-Authenticate": "Bearer"})
    try:
        body: Any = await request.json()
    except ValueError:
        return JSONResponse({"error": "malformed JSON"}, status_code=400)
    if not isinstance(body, dict):
        return JSONResponse({"error": "expected a JSON object"}, status_code=400)
    projects = body.get("projects")
    if not body.get("all") and not (isinstance(projects, list) and all(isinstance(p, int) for p in projects)):
        return JSONResponse({"error": 'give "projects": [ids] or "all": true'}, status_code=400)
    deps: Deps = request.state.deps
    if not deps.settings.gitlab.url:
        return JSONResponse({"error": GITLAB_UNSET}, status_code=409)
    ids = None if body.get("all") else list(projects or [])
    full = bool(body.get("full", False))
    job_id = f"backfill:{'all' if ids is None else ','.join(map(str, ids))}:{int(full)}"
    queued = await enqueue_once(deps.require_queue(), BACKFILL, job_id, ids, full)
    return JSONResponse({"status": "enqueued" if queued else "already queued", "job_id": job_id}, status_code=202)


async def admin_projects(request: Request) -> JSONResponse:
    """Every project's sync state."""
    if not _admin_ok(request):
        return JSONResponse({"error": "unauthorized"}, status_code=401, headers={"WWW-Authenticate": "Bearer"})
    deps: Deps = request.state.deps
    rows = await deps.require_db().projects()
    return JSONResponse(
        [
            {
                "id": r.id,
                "repo_path": r.repo_path,
                "default_branch": r.default_branch,
                "indexed_sha": r.indexed_sha,
                "target_sha": r.target_sha,
                "status": r.state,
                "behind": r.behind,
                "last_error": r.last_error,
                "indexed_at": r.indexed_at.isoformat() if r.indexed_at else None,
            }
            for r in rows
        ]
    )
