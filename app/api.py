"""REST API for scripts: `GET /api/v1/search`, through the same search module as the MCP tools."""

from __future__ import annotations

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from app.deps import Deps
from app.schemas import SearchParams, validation_message
from app.search import Filters
from mcp_server.auth import bearer_matches
from mcp_server.render import hit_item


def bearer_ok(request: Request) -> bool:
    """Whether the request carries one of the configured API tokens."""
    deps: Deps = request.state.deps
    return bearer_matches(request.headers.get("authorization"), deps.settings.api_tokens)


async def api_search(request: Request) -> JSONResponse:
    """`?q=...&repo=&path=&symbol_type=&stereotype=&annotation=&http_method=&limit=` → ranked results with citations."""
    if not bearer_ok(request):
        return JSONResponse({"error": "unauthorized"}, status_code=401, headers={"WWW-Authenticate": "Bearer"})
    try:
        params = SearchParams.model_validate(dict(request.query_params))
    except ValidationError as exc:
        return JSONResponse({"error": validation_message(exc)}, status_code=400)
    query = params.q
    filters = Filters(
        repo=params.repo,
        path_prefix=params.path,
        symbol_type=params.symbol_type,
        stereotype=params.stereotype,
        annotation=params.annotation,
        http_method=params.http_method,
    )
    limit = params.limit
    deps: Deps = request.state.deps
    hits = await deps.search.search(query, filters, limit)
    return JSONResponse({"query": query, "results": [hit_item(h, code=h.code) for h in hits]})
