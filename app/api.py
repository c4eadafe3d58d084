"""REST API for scripts: `GET /api/v1/search`, through the same search module as the MCP tools.

The caller is authenticated with the same credentials as `/mcp` (`app.identity`), and every search
runs with its `Access`, inside the query.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse

from app.access import Access
from app.deps import Deps
from app.errors import GitLabUnavailableError, PayloadError
from app.identity import Credentials, bearer_token
from app.results import hit_item
from app.search import Filters
from pipeline.model import SYMBOL_TYPES

MAX_LIMIT = 50


def unauthorized() -> JSONResponse:
    """401 with the challenge RFC 6750 asks for."""
    return JSONResponse({"error": "unauthorized"}, status_code=401, headers={"WWW-Authenticate": "Bearer"})


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


def search_endpoint(credentials: Credentials) -> Callable[[Request], Awaitable[JSONResponse]]:
    """`GET /api/v1/search` bound to the app's credentials."""

    async def api_search(request: Request) -> JSONResponse:
        """`?q=...&repo=&path=&symbol_type=&stereotype=&annotation=&http_method=&limit=` → ranked results."""
        access = await caller(request, credentials)
        if isinstance(access, JSONResponse):
            return access
        return await _search(request, access)

    return api_search


async def _search(request: Request, access: Access) -> JSONResponse:
    params = request.query_params
    query = params.get("q", "").strip()
    if not query:
        return JSONResponse({"error": "q is required"}, status_code=400)
    symbol_type = params.get("symbol_type")
    if symbol_type and symbol_type not in SYMBOL_TYPES:
        return JSONResponse({"error": f"symbol_type must be one of {sorted(SYMBOL_TYPES)}"}, status_code=400)
    try:
        limit = min(MAX_LIMIT, max(1, int(params.get("limit", "10"))))
    except ValueError:
        return JSONResponse({"error": "limit must be an integer"}, status_code=400)
    filters = Filters(
        repo=params.get("repo"),
        path_prefix=params.get("path"),
        symbol_type=symbol_type,
        stereotype=params.get("stereotype"),
        annotation=params.get("annotation"),
        http_method=params.get("http_method"),
    )
    deps: Deps = request.state.deps
    try:
        hits = await deps.search.search(access, query, filters, limit)
    except PayloadError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    return JSONResponse({"query": query, "results": [hit_item(h, code=h.code) for h in hits]})
