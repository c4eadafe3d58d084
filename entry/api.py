"""REST API for scripts: search and the index status, through the same services as the MCP tools.

`GET /api/v1/search` runs the search module, `GET /api/v1/grep` its exact and pattern search (what the MCP
tool `exact_search` does); `GET /api/v1/index-status[?repo=]` answers what the MCP tool `index_status`
does (`app.sync.status`). The caller is authenticated with the same credentials as `/mcp`
(`app.auth.identity`), and every read runs with its `Access`, inside the query.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from app.auth.access import Access
from app.auth.identity import Credentials, bearer_token
from app.core import metrics
from app.core.errors import GitLabUnavailableError, PayloadError, StorageError
from app.core.refusals import RefusedError, unauthorized_error
from app.gitlab.files import file_reader
from app.libraries.usage import with_users
from app.rest.config_schemas import CONFIG_PATH, ConfigAnswer, ConfigParams
from app.rest.schemas import (
    CODE_PATH,
    CONTEXT_PATH,
    IMPACT_PATH,
    INDEX_STATUS_PATH,
    CodeAnswer,
    CodeParams,
    ContextAnswer,
    ContextParams,
    GrepAnswer,
    GrepParams,
    ImpactAnswer,
    ImpactParams,
    IndexStatusAnswer,
    IndexStatusParams,
    SearchAnswer,
    SearchParams,
    validation_message,
)
from app.runtime import Deps, ServiceDeps
from app.search.code import MAX_FILE_BYTES, code_item
from app.search.config import config_item
from app.search.context import auto_context, context_answer
from app.search.grep import GrepQuery, grep_item
from app.search.impact import NoSeedError, impact_of
from app.search.impact_items import impact_item
from app.search.patterns import PatternError, PatternSpec
from app.search.results import hit_item
from app.search.scoping import SearchScope, Where
from app.sync.status import index_status
from entry.filters import filters_of

STATUS_PATH = INDEX_STATUS_PATH
CONTEXT_API_PATH = CONTEXT_PATH
CONFIG_API_PATH = CONFIG_PATH
CODE_API_PATH = CODE_PATH
IMPACT_API_PATH = IMPACT_PATH

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
        query: dict[str, Any] = dict(request.query_params)
        for name in getattr(model, "repeated", ()):  # a parameter that may repeat (`?changes=a&changes=b`)
            query[name] = request.query_params.getlist(name) or None
        return access, model.model_validate(query)
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


def config_endpoint(credentials: Credentials) -> Endpoint:
    """`GET /api/v1/config?key=&repo=&path=`: what the MCP tool `find_config` answers (issue 29)."""
    return endpoint(credentials, ConfigParams, _config)


async def _config(request: Request, access: Access, params: ConfigParams) -> JSONResponse:
    """Where a configuration key is set and who reads it, within what the caller may read."""
    deps: Deps = request.state.deps
    found = await deps.search.find_config(access, params.key, params.repo, path_prefix=params.path)
    items = [config_item(u) for u in (*found.settings, *found.readers)]
    return JSONResponse(ConfigAnswer(key=found.key, results=items).model_dump(mode="json"))


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
        items = await index_status(deps.db, access, params.repo, deps.settings.chunking.to_config())
    except StorageError:
        body = {"error": "PostgreSQL is unavailable; try again"}
        return JSONResponse(body, status_code=503, headers={"Retry-After": "5"})
    return JSONResponse(IndexStatusAnswer(results=items).model_dump(mode="json"))


async def _context(request: Request, access: Access, params: ContextParams) -> JSONResponse:
    """What the MCP tool `auto_context` answers."""
    deps: Deps = request.state.deps
    where = Where(repo=params.repo)
    context = await auto_context(deps.search, access, params.task, where=where, max_chars=params.max_chars)
    answer = ContextAnswer.model_validate(context_answer(context))
    return JSONResponse(answer.model_dump(mode="json"))


def code_endpoint(credentials: Credentials) -> Endpoint:
    """`GET /api/v1/code?repo=&path=&start_line=&end_line=`: what the MCP tool `read_code` answers."""
    return endpoint(credentials, CodeParams, _code)


def impact_endpoint(credentials: Credentials) -> Endpoint:
    """`GET /api/v1/impact?symbol=|changes=path:start-end...&repo=&hops=`: what the MCP tool `impact` answers."""
    return endpoint(credentials, ImpactParams, _impact)


async def _code(request: Request, access: Access, params: CodeParams) -> JSONResponse:
    """A page of a file's lines; 404 alike for a file that is not indexed and one the caller may not read."""
    deps: Deps = request.state.deps
    token = bearer_token(request.headers.get("authorization"))
    source = file_reader(deps.http, deps.settings.gitlab, access.subject, token, max_bytes=MAX_FILE_BYTES)
    search = deps.search.within(SearchScope.ALL)
    try:
        found = await search.read_code(access, params.repo, params.path, params.start_line, params.end_line, source)
    except PayloadError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    except GitLabUnavailableError:
        return JSONResponse(
            {"error": "GitLab is unavailable; try again"}, status_code=503, headers={"Retry-After": "5"}
        )
    if found is None:
        return JSONResponse({"error": "No such indexed file"}, status_code=404)
    return JSONResponse(CodeAnswer.model_validate(code_item(found)).model_dump(mode="json"))


async def _impact(request: Request, access: Access, params: ImpactParams) -> JSONResponse:
    """The impact of a symbol or of changed lines."""
    deps: Deps = request.state.deps
    try:
        found = await impact_of(deps.search, access, params.symbol, params.changes, params.repo, params.hops)
    except NoSeedError as exc:
        return JSONResponse({"error": str(exc)}, status_code=404)
    except PayloadError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    return JSONResponse(ImpactAnswer.model_validate(impact_item(found)).model_dump(mode="json"))
