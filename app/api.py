"""REST API for scripts: `GET /api/v1/search`, through the same search module as the MCP tools."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse

from app.deps import Deps
from app.search import Filters
from mcp_server.auth import bearer_matches
from mcp_server.render import hit_item
from pipeline.model import SYMBOL_TYPES

MAX_LIMIT = 50


def bearer_ok(request: Request) -> bool:
    """Whether the request carries one of the configured API tokens."""
    deps: Deps = request.state.deps
    return bearer_matches(request.headers.get("authorization"), deps.settings.api_tokens)


async def api_search(request: Request) -> JSONResponse:
    """`?q=...&repo=&path=&symbol_type=&stereotype=&annotation=&http_method=&limit=` → ranked results with citations."""
    if not bearer_ok(request):
        return JSONResponse({"error": "unauthorized"}, status_code=401, headers={"WWW-Authenticate": "Bearer"})
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
    hits = await deps.search.search(query, filters, limit)
    return JSONResponse({"query": query, "results": [hit_item(h, code=h.code) for h in hits]})
