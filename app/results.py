"""The structured form of a hit, shared by the REST API and the MCP tools (so both cite the same fields)."""

from __future__ import annotations

from typing import Any

from app.search import Hit


def hit_item(hit: Hit, *, code: str | None = None) -> dict[str, Any]:
    """The structured form of one hit: citation, kind and metadata an agent filters on."""
    p = hit.payload
    item: dict[str, Any] = {
        **hit.citation(),
        "symbol_type": hit.symbol_type,
        "stereotype": p.get("stereotype"),
        "annotations": p.get("annotations", []),
        "http": routes(p),
        "score": round(hit.score, 4),
    }
    if p.get("part_count", 1) > 1:
        item["part"] = f"{p.get('part_index', 0) + 1}/{p['part_count']}"
    if code is not None:
        item["code"] = code
    return item


def routes(payload: dict[str, Any]) -> list[str]:
    """A chunk's HTTP routes as `METHOD|METHOD /path` strings."""
    methods = payload.get("http_method") or []
    return [f"{'|'.join(methods)} {path}" for path in payload.get("http_path") or []]
