"""The structured form of a hit, shared by the REST API and the MCP tools (so both cite the same fields)."""

from __future__ import annotations

from typing import Any

from app.search.service import Hit
from pipeline.model import Chunk


def hit_item(hit: Hit, *, code: str | None = None) -> dict[str, Any]:
    """The structured form of one hit: citation, kind and metadata an agent filters on."""
    c = hit.chunk
    item: dict[str, Any] = {
        **hit.citation(),
        "symbol_type": hit.symbol_type,
        "stereotype": c.stereotype,
        "annotations": list(c.annotations),
        "http": routes(c),
        "score": round(hit.score, 4),
    }
    if c.part_count > 1:
        item["part"] = f"{c.part_index + 1}/{c.part_count}"
    if code is not None:
        item["code"] = code
    return item


def routes(chunk: Chunk) -> list[str]:
    """A chunk's HTTP routes as `METHOD|METHOD /path` strings."""
    return [f"{'|'.join(chunk.http_method)} {path}" for path in chunk.http_path]
