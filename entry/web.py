"""The Starlette application: the GitLab receiver, the MCP server at /mcp, REST search, admin, health.

`create_app(settings)` opens its own `ServiceDeps` in the lifespan (PostgreSQL, Redis, Qdrant);
`create_app(settings, deps=...)` reuses the caller's, which is how `javakb serve` runs the
receiver and the worker in one process over one embedded Qdrant: given `Deps` without PostgreSQL or
Redis, it refuses at once with a `ConfigError` (`app.runtime.service_deps`). The MCP app is mounted at the
root, last, so its endpoint is exactly `/mcp` (no 307 to `/mcp/`), and its lifespan runs inside ours
(without it FastMCP's session manager never starts).

Once started, the heap built so far (imports, FastMCP, clients: about 200,000 objects) is moved out
of the garbage collector's reach with `gc.freeze()`: a full collection over it took 75-150 ms,
stalling every request in flight, and none of it is garbage.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib import metadata
from typing import TypedDict

from fastmcp.utilities.lifespan import combine_lifespans
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from app.auth.identity import Credentials, OpenSet, build_credentials
from app.auth.ratelimit import RateLimitMiddleware, TokenBuckets
from app.auth.visibility import build_refresh, open_set
from app.core.bodies import BodyTooLargeError, read_body
from app.core.context import RequestIds
from app.core.errors import QueueUnavailableError, ServiceError
from app.core.metrics import CONTENT_TYPE
from app.core.refusals import RefusedError, answer_refused, unauthorized_error
from app.core.settings import GITLAB_UNSET, Settings
from app.core.states import BackfillStatus
from app.jobs.queue import BACKFILL, backfill_job_id, enqueue_once
from app.jobs.redis import ping
from app.ops.scrape import scrape, scrape_status
from app.ops.supervisor import WorkerHealth
from app.ops.system_hook import RECEIVER_PATH
from app.rest.openapi import openapi_document, public_document
from app.rest.schemas import (
    GREP_PATH,
    ReindexAccepted,
    ReindexRequest,
    validation_message,
)
from app.runtime import Deps, ServiceDeps, service_deps
from app.sync.deliveries import DeliveryRecorder
from entry.admin import (
    admin_backfill,
    admin_backfills,
    admin_jobs,
    admin_ok,
    admin_only,
    admin_project,
    admin_projects,
)
from entry.admin_rebuild import rebuild_routes
from entry.api import (
    CODE_API_PATH,
    CONFIG_API_PATH,
    CONTEXT_API_PATH,
    IMPACT_API_PATH,
    STATUS_PATH,
    code_endpoint,
    config_endpoint,
    context_endpoint,
    grep_endpoint,
    impact_endpoint,
    search_endpoint,
    status_endpoint,
)
from entry.deps import open_service
from entry.status_page import status_routes
from hooks.index_jobs import JOBS_PATH, get_index_job, post_index_job
from hooks.receiver import make_endpoint
from mcp_server.auth import PlainBearerChallenge, UnavailableAs503, build_auth
from mcp_server.oauth_limits import ClientLimits, OAuthGuard, oauth_paths
from mcp_server.server import create_server

logger = logging.getLogger(__name__)

ADMIN_MAX_BODY_BYTES = 1024 * 1024  # 10,000 ids are about 100 KB


class State(TypedDict):
    """Lifespan state: what every request sees as `request.state`."""

    deps: ServiceDeps
    receiver: DeliveryRecorder
    worker_health: Callable[[], WorkerHealth] | None


RATE_LIMITED = ("/mcp", "/api/v1", "/admin/sign-in")


def create_app(
    settings: Settings,
    deps: Deps | None = None,
    *,
    clock: Callable[[], float] = time.monotonic,
    worker_health: Callable[[], WorkerHealth] | None = None,
) -> Starlette:
    """The web application.

    `clock` drives the permission cache and the rate limits (tests inject it); `worker_health`
    reports the worker running in this process (`javakb serve`).
    """
    given = service_deps(deps) if deps is not None else None
    current: dict[str, ServiceDeps] = {}
    credentials = _credentials(settings, lambda: current["deps"], clock)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[State]:
        if given is not None:
            current["deps"] = given
            _freeze_heap()
            yield {"deps": given, "receiver": DeliveryRecorder(given), "worker_health": worker_health}
            return
        async with open_service(settings) as service:
            await service.store.ensure(await service.index_model())
            current["deps"] = service
            _freeze_heap()
            yield {"deps": service, "receiver": DeliveryRecorder(service), "worker_health": worker_health}

    oauth_limits = ClientLimits(settings.oauth, clock)
    mcp = create_server(lambda: current["deps"], auth=build_auth(settings, lambda: credentials, oauth_limits))
    mcp_app = mcp.http_app(path="/mcp", stateless_http=True)
    description = openapi_document(_version())
    public = public_document(description)

    async def openapi_json(request: Request) -> JSONResponse:
        return JSONResponse(description if admin_ok(request) else public)

    routes: list[BaseRoute] = [
        Route("/openapi.json", openapi_json, methods=["GET"]),
        Route(RECEIVER_PATH, make_endpoint(), methods=["POST"]),
        Route("/api/v1/search", search_endpoint(credentials), methods=["GET"]),
        Route(GREP_PATH, grep_endpoint(credentials), methods=["GET"]),
        Route(JOBS_PATH, post_index_job, methods=["POST"]),
        Route(JOBS_PATH + "/{job_id:int}", get_index_job, methods=["GET"]),
        Route(STATUS_PATH, status_endpoint(credentials), methods=["GET"]),
        Route(CONTEXT_API_PATH, context_endpoint(credentials), methods=["GET"]),
        Route(CONFIG_API_PATH, config_endpoint(credentials), methods=["GET"]),
        Route(CODE_API_PATH, code_endpoint(credentials), methods=["GET"]),
        Route(IMPACT_API_PATH, impact_endpoint(credentials), methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/metrics", metrics_endpoint, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/admin/reindex", admin_reindex, methods=["POST"]),
        Route("/admin/projects", admin_projects, methods=["GET"]),
        Route("/admin/projects/{project_id:int}", admin_project, methods=["GET"]),
        Route("/admin/jobs", admin_jobs, methods=["GET"]),
        Route("/admin/backfills", admin_backfills, methods=["GET"]),
        Route("/admin/backfills/{backfill_id:int}", admin_backfill, methods=["GET"]),
        *rebuild_routes(admin_only),
        *status_routes(),  # the operator's page: `/`, `/admin`, its sign-in
        Mount("/", app=UnavailableAs503(mcp_app if settings.oauth.enabled else PlainBearerChallenge(mcp_app))),
    ]
    # A request refused below its endpoint (credentials, parameters, a page) is answered here, once.
    app = Starlette(
        routes=routes,
        lifespan=combine_lifespans(lifespan, mcp_app.lifespan),
        exception_handlers={RefusedError: answer_refused},
    )
    buckets = TokenBuckets(settings.access.rate_per_s, settings.access.rate_burst, clock)
    app.add_middleware(RateLimitMiddleware, buckets=buckets, prefixes=RATE_LIMITED)
    if settings.oauth.enabled:
        oauth_buckets = TokenBuckets(settings.oauth.rate_per_s, settings.oauth.rate_burst, clock)
        paths = oauth_paths(mcp_app.routes, "/mcp")
        app.add_middleware(OAuthGuard, paths=paths, limits=oauth_limits, buckets=oauth_buckets)
    app.state.oauth_limits = oauth_limits  # what the OAuth proxy holds (tests, and a look from a debugger)
    app.add_middleware(RequestIds)  # outermost: every line a request logs carries its id
    return app


def _credentials(settings: Settings, get_deps: Callable[[], ServiceDeps], clock: Callable[[], float]) -> Credentials:
    refresh = build_refresh(
        settings, lambda: get_deps().http, lambda rows: get_deps().db.set_projects_access(rows), clock
    )

    async def open_projects() -> OpenSet:
        return await open_set(get_deps().db.open_projects, refresh)

    return build_credentials(settings, lambda: get_deps().http, open_projects, clock=clock)


def _version() -> str:
    try:
        return metadata.version("java-kb-indexer")
    except metadata.PackageNotFoundError:  # running from a checkout that was not installed
        return "0"


def _freeze_heap() -> None:
    """Collect what is garbage now, then keep the garbage collector off everything that remains."""
    gc.collect()
    gc.freeze()


async def metrics_endpoint(request: Request) -> Response:
    """Prometheus text exposition of this process (`app.ops.scrape`), for a metrics token."""
    deps: ServiceDeps = request.state.deps
    status = scrape_status(deps.settings, request.headers.get("authorization"))
    if status == 404:
        return JSONResponse({"error": "not found"}, status_code=404)
    if status == 401:
        raise unauthorized_error()
    return Response(await scrape(deps), media_type=CONTENT_TYPE)


async def healthz(request: Request) -> JSONResponse:
    """Liveness: the process answers."""
    return JSONResponse({"status": "ok"})


def is_ready(checks: dict[str, str]) -> bool:
    """Whether this pod belongs in the Service: it can take GitLab's deliveries, and its own worker runs.

    The receiver records a delivery in PostgreSQL, or defers it to Redis while PostgreSQL is down
    (`202 deferred`), and refuses it only with both down: so PostgreSQL *or* Redis must answer. An
    outage of a store every pod shares (PostgreSQL, Redis alone, Qdrant) is reported as `degraded`
    but keeps the pod ready: taking every pod out of the Service would turn the receiver's 202 into
    the ingress's 503 and lose the push. The worker of this process (`javakb serve`) is the pod's own.
    """
    takes_deliveries = checks.get("postgres") == "ok" or checks.get("redis") == "ok"
    return takes_deliveries and checks.get("worker", "ok") == "ok"


async def readyz(request: Request) -> JSONResponse:
    """Readiness (`is_ready`), with every dependency's state: `degraded` when any is not ok.

    Anyone reaching the port sees states only (`ok` or `error`); the error text (addresses, driver
    messages) is shown to a metrics or admin token alone (`readiness_detail`).
    """
    checks = await _checks(request)
    ready = is_ready(checks)
    degraded = any(v != "ok" for v in checks.values())
    if not readiness_detail(request):
        checks = {name: "ok" if state == "ok" else "error" for name, state in checks.items()}
    return JSONResponse({"ready": ready, "degraded": degraded, "checks": checks}, status_code=200 if ready else 503)


def readiness_detail(request: Request) -> bool:
    """Whether the caller may read why a dependency failed: it holds a metrics or an admin token."""
    deps: ServiceDeps = request.state.deps
    return scrape_status(deps.settings, request.headers.get("authorization")) == 200 or admin_ok(request)


async def _checks(request: Request) -> dict[str, str]:
    deps: ServiceDeps = request.state.deps
    checks: dict[str, str] = {}
    try:
        await deps.db.ping()
        checks["postgres"] = "ok"
    except (ServiceError, OSError) as exc:
        checks["postgres"] = f"error: {exc}"
    try:
        await ping(deps.queue)
        checks["redis"] = "ok"
    except ServiceError as exc:  # QueueUnavailableError (app.jobs.redis), or no queue opened
        checks["redis"] = f"error: {exc}"
    try:
        await deps.store.count()
        checks["qdrant"] = "ok"
    except ServiceError as exc:
        checks["qdrant"] = f"error: {exc}"
    health: Callable[[], WorkerHealth] | None = request.state.worker_health
    if health is not None:
        checks["worker"] = health().describe()
    return checks


async def admin_reindex(request: Request) -> JSONResponse:
    """Backfill `{"project"}`, `{"group", "include_subgroups"}`, `{"all": true}` or `{"projects": [ids]}`.

    `"full": true` walks whole trees, `"force": true` also embeds unchanged chunks again. Answers 202
    with the backfill's id at once (the worker resolves the target); `GET /admin/backfills/{id}`
    reports its progress and each project's outcome.
    """
    admin_only(request)
    try:
        asked = ReindexRequest.model_validate_json(await read_body(request, ADMIN_MAX_BODY_BYTES))
    except BodyTooLargeError as exc:
        return JSONResponse({"error": str(exc)}, status_code=413)
    except ValidationError as exc:
        return JSONResponse({"error": validation_message(exc)}, status_code=400)
    deps: ServiceDeps = request.state.deps
    if not deps.settings.gitlab.url:
        return JSONResponse({"error": GITLAB_UNSET}, status_code=409)
    db = deps.db
    opened = await db.create_backfill(asked.project_ids, asked.full, asked.target, asked.force)
    backfill_id = opened.id
    try:
        args = (asked.project_ids, asked.full, backfill_id)
        await enqueue_once(deps.queue, BACKFILL, backfill_job_id(backfill_id, opened.job_token), *args)
    except QueueUnavailableError as exc:
        await db.set_backfill_status(backfill_id, BackfillStatus.FAILED, f"the queue is unavailable: {exc}")
        return JSONResponse({"error": "the queue is unavailable, try again"}, status_code=503)
    answer = ReindexAccepted(backfill_id=backfill_id, status=BackfillStatus.QUEUED.value)
    return JSONResponse(answer.model_dump(mode="json"), status_code=202)
