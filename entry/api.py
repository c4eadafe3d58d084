"""REST API for scripts: search and the index status, through the same services as the MCP tools.

`GET /api/v1/search` runs the search module, `GET /api/v1/grep` its exact and pattern search (what the MCP
tool `exact_search` does); `GET /api/v1/index-status[?repo=]` answers what the MCP tool `index_status`
does (`app.sync.status`). The caller is authenticated with the same credentials as `/mcp`
(`app.auth.identity`), and every read runs with its `Access`, inside the query.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from app.auth.access import Access
from app.auth.identity import Credentials, bearer_token
from app.core import metrics
from app.core.errors import GitLabUnavailableError, PayloadError, StorageError
from app.core.refusals import RefusedError, unauthorized_error
from app.libraries.usage import with_users
from app.rest.schemas import (
    CONTEXT_PATH,
    INDEX_STATUS_PATH,
    ContextAnswer,
    ContextParams,
    GrepAnswer,
    GrepParams,
    IndexStatusAnswer,
    IndexStatusParams,
    SearchAnswer,
    SearchParams,
    validation_message,
)
from app.runtime import Deps, ServiceDeps
from app.search.context import auto_context, context_answer
from app.search.grep import GrepQuery, grep_item
from app.search.patterns import PatternError, PatternSpec
from app.search.results import hit_item
from app.sync.status import index_status
from entry.filters import filters_of

STATUS_PATH = INDEX_STATUS_PATH
CONTEXT_API_PATH = CONTEXT_PATH

P = TypeVar("P", bound=BaseModel)

REST_SEARCH = "rest_search"  # the `tool` label of `GET /api/v1/search` in javakb_tool_duration_seconds


Endpoint = Callable[[Request], Awaitable[JSONResponse]]


async def caller(request: Request, credentials: Credentials) -> Access:
    """The caller's access; refused without credentials it takes (401), or while GitLab cannot say (503)."""
    token = bearer_token(request.headers.get("authorization"))
    if token is None:
        raise unauthorized_error()
    try:
        access = await credentials.access(token)
    except GitLabUnavailableError as exc:
        raise RefusedError(503, "GitLab is unavailable; try again", {"Retry-After": "5"}) from exc
    if access is None:
        raise unauthorized_error()
    return access


async def asked(request: Request, credentials: Credentials, model: type[P]) -> tuple[Access, P]:
    """The caller's access and the query parameters read into `model`; bad parameters are refused (400)."""
    access = await caller(request, credentials)
    try:
        return access, model.model_validate(dict(request.query_params))
    except ValidationError as exc:
        raise RefusedError(400, validation_message(exc)) from exc


def endpoint(
    credentials: Credentials, model: type[P], answer: Callable[[Request, Access, P], Awaitable[JSONResponse]]
) -> Endpoint:
    """A GET endpoint bound to the app's credentials: the caller and its parameters (`asked`), then `answer`."""

    async def answered(request: Request) -> JSONResponse:
        return await answer(request, *await asked(request, credentials, model))

    return answered


def search_endpoint(credentials: Credentials) -> Endpoint:
    """`GET /api/v1/search?q=...&repo=&path=&symbol_type=&stereotype=&annotation=&http_method=&limit=`."""
    return endpoint(credentials, SearchParams, _search)


def status_endpoint(credentials: Credentials) -> Endpoint:
    """`GET /api/v1/index-status[?repo=]`."""
    return endpoint(credentials, IndexStatusParams, _index_status)


def context_endpoint(credentials: Credentials) -> Endpoint:
    """`GET /api/v1/context?task=&repo=&max_chars=`: what the MCP tool `auto_context` answers, for hooks and scripts."""
    return endpoint(credentials, ContextParams, _context)


def grep_endpoint(credentials: Credentials) -> Endpoint:
    """`GET /api/v1/grep?pattern=&regex=&case_sensitive=&repo=&path=&language=&context=&offset=&limit=`."""
    return endpoint(credentials, GrepParams, _grep)


async def _grep(request: Request, access: Access, params: GrepParams) -> JSONResponse:
    """What the MCP tool `exact_search` finds, as a page of matching lines; a refused pattern is a 400."""
    deps: Deps = request.state.deps
    spec = PatternSpec(params.pattern, regex=params.regex, case_sensitive=params.case_sensitive)
    query = GrepQuery(
        pattern=spec, repo=params.repo, path=params.path, language=params.language, context=params.context
    )
    try:
        found = await deps.search.grep(access, query, offset=params.offset, limit=params.limit)
    except PatternError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    end = params.offset + len(found.matches)
    answer = GrepAnswer(
        pattern=params.pattern,
        total=found.total,
        files=found.files,
        offset=params.offset,
        next_offset=end if end < found.total else None,
        complete=found.complete,
        stopped=found.stopped,
        results=[grep_item(m) for m in found.matches],
    )
    return JSONResponse(answer.model_dump(mode="json"))


async def _search(request: Request, access: Access, params: SearchParams) -> JSONResponse:
    """Ranked results."""
    filters = filters_of(params)
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


async def _index_status(request: Request, access: Access, params: IndexStatusParams) -> JSONResponse:
    """What the MCP tool `index_status` answers."""
    deps: ServiceDeps = request.state.deps
    try:
        items = await index_status(deps.db, access, params.repo)
    except StorageError:
        body = {"error": "PostgreSQL is unavailable; try again"}
        return JSONResponse(body, status_code=503, headers={"Retry-After": "5"})
    return JSONResponse(IndexStatusAnswer(results=items).model_dump(mode="json"))


async def _context(request: Request, access: Access, params: ContextParams) -> JSONResponse:
    """What the MCP tool `auto_context` answers."""
    deps: Deps = request.state.deps
    context = await auto_context(deps.search, access, params.task, repo=params.repo, max_chars=params.max_chars)
    answer = ContextAnswer.model_validate(context_answer(context))
    return JSONResponse(answer.model_dump(mode="json"))
