"""The structured form of a hit, shared by the REST API and the MCP tools (so both cite the same fields).

`HitItem` is the one declaration of that form: the MCP tools' output schemas are derived from it.
"""

from __future__ import annotations

from typing import NotRequired

from app.search.service import Citation, Hit
from pipeline.model import Chunk
from pipeline.outbound import decode


class HitItem(Citation):
    """One hit as data: its citation, kind and the metadata an agent filters on."""

    symbol_type: str
    stereotype: str | None
    annotations: list[str]
    http: list[str]
    generated: bool
    score: float
    part: NotRequired[str]
    outbound: NotRequired[list[str]]  # the HTTP calls it makes, when it makes any (`pipeline.outbound`)
    code: NotRequired[str]


def hit_item(hit: Hit, *, code: str | None = None) -> HitItem:
    """The structured form of one hit: citation, kind and metadata an agent filters on."""
    c = hit.chunk
    # mypy cannot tell that a `**` of a TypedDict leaves the optional keys unset: they are set below.
    item: HitItem = {
        **hit.citation(),  # type: ignore[typeddict-item]
        "symbol_type": hit.symbol_type,
        "stereotype": c.stereotype,
        "annotations": list(c.annotations),
        "http": routes(c),
        "generated": c.generated,
        "score": round(hit.score, 4),
    }
    if c.part_count > 1:
        item["part"] = f"{c.part_index + 1}/{c.part_count}"
    if c.outbound:
        item["outbound"] = outbound(c)
    if code is not None:
        item["code"] = code
    return item


def outbound(chunk: Chunk) -> list[str]:
    """The HTTP calls a chunk makes, as agents read them (`GET /accounts/{name} -> accounts (feign)`)."""
    return [decode(text).describe() for text in chunk.outbound]


def routes(chunk: Chunk) -> list[str]:
    """A chunk's HTTP routes as `METHOD|METHOD /path` strings."""
    return [f"{'|'.join(chunk.http_method)} {path}" for path in chunk.http_path]
