"""REST API for scripts: search and the index status, through the same services as the MCP tools.

`GET /api/v1/search` runs the search module; `GET /api/v1/index-status[?repo=]` answers what the MCP
tool `index_status` does (`app.sync.status`). The caller is authenticated with the same credentials
as `/mcp` (`app.auth.identity`), and every read runs with its `Access`, inside the query.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from app.auth.access import Access
from app.auth.challenge import unauthorized
from app.auth.identity import Credentials, bearer_token
from app.core import metrics
from app.core.errors import GitLabUnavailableError, PayloadError, StorageError
from app.libraries.usage import with_users
from app.rest.schemas import (
    CONTEXT_PATH,
    INDEX_STATUS_PATH,
    ContextAnswer,
    ContextParams,
    IndexStatusAnswer,
    IndexStatusParams,
    SearchAnswer,
    SearchParams,
    validation_message,
)
from app.runtime import Deps, ServiceDeps
from app.search.context import auto_context, context_answer
from app.search.results import hit_item
from app.search.scoping import Filters
from app.sync.status import index_status

STATUS_PATH = INDEX_STATUS_PATH
CONTEXT_API_PATH = CONTEXT_PATH

P = TypeVar("P", bound=BaseModel)

REST_SEARCH = "rest_search"  # the `tool` label of `GET /api/v1/search` in javakb_tool_duration_seconds


async def caller(request: Request, credentials: Credentials) -> Access | JSONResponse:
    """The caller's access, or the response that refuses it (401, or 503 while GitLab cannot say)."""
    token = bearer_token(request.headers.get("authorization"))
    if token is None:
        return unauthorized()
    try:
        access = await credentials.access(token)
    except GitLabUnavailableError:
        body = {"error": "GitLab is unavailable; try again"}
        return JSONResponse(body, status_code=503, headers={"Retry-After": "5"})
    return unauthorized() if access is None else access


async def asked(request: Request, credentials: Credentials, model: type[P]) -> tuple[Access, P] | JSONResponse:
    """The caller's access and the query parameters read into `model`, or the response that refuses them."""
    access = await caller(request, credentials)
    if isinstance(access, JSONResponse):
        return access
    try:
        return access, model.model_validate(dict(request.query_params))
    except ValidationError as exc:
        return JSONResponse({"error": validation_message(exc)}, status_code=400)


def search_endpoint(credentials: Credentials) -> Callable[[Request], Awaitable[JSONResponse]]:
    """`GET /api/v1/search` bound to the app's credentials."""

    async def api_search(request: Request) -> JSONResponse:
        """`?q=...&repo=&path=&symbol_type=&stereotype=&annotation=&http_method=&limit=` → ranked results."""
        found = await asked(request, credentials, SearchParams)
        return found if isinstance(found, JSONResponse) else await _search(request, *found)

    return api_search


async def _search(request: Request, access: Access, params: SearchParams) -> JSONResponse:
    filters = Filters(
        repo=params.repo,
        path_prefix=params.path,
        symbol_type=params.symbol_type,
        stereotype=params.stereotype,
        annotation=params.annotation,
        http_method=params.http_method,
    )
    deps: Deps = request.state.deps
    started, outcome = time.perf_counter(), "error"
    try:
        hits = await deps.search.within(params.scope).search(access, params.q, filters, params.limit)
        hits = await with_users(deps.db, access, hits)
        outcome = "ok"
    except PayloadError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    finally:
        metrics.TOOL_SECONDS.labels(tool=REST_SEARCH, outcome=outcome).observe(time.perf_counter() - started)
    answer = SearchAnswer(query=params.q, results=[hit_item(h, code=h.code) for h in hits])
    return JSONResponse(answer.model_dump(mode="json"))


def status_endpoint(credentials: Credentials) -> Callable[[Request], Awaitable[JSONResponse]]:
    """`GET /api/v1/index-status` bound to the app's credentials."""

    async def api_index_status(request: Request) -> JSONResponse:
        found = await asked(request, credentials, IndexStatusParams)
        if isinstance(found, JSONResponse):
            return found
        access, params = found
        deps: ServiceDeps = request.state.deps
        try:
            items = await index_status(deps.db, access, params.repo)
        except StorageError:
            body = {"error": "PostgreSQL is unavailable; try again"}
            return JSONResponse(body, status_code=503, headers={"Retry-After": "5"})
        return JSONResponse(IndexStatusAnswer(results=items).model_dump(mode="json"))

    return api_index_status


def context_endpoint(credentials: Credentials) -> Callable[[Request], Awaitable[JSONResponse]]:
    """`GET /api/v1/context?task=&repo=&max_chars=`: what the MCP tool `auto_context` answers, for hooks and scripts."""

    async def api_context(request: Request) -> JSONResponse:
        found = await asked(request, credentials, ContextParams)
        if isinstance(found, JSONResponse):
            return found
        access, params = found
        deps: Deps = request.state.deps
        context = await auto_context(deps.search, access, params.task, repo=params.repo, max_chars=params.max_chars)
        answer = ContextAnswer.model_validate(context_answer(context))
        return JSONResponse(answer.model_dump(mode="json"))

    return api_context
