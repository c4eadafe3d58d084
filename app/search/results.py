"""The structured form of a hit, shared by the REST API and the MCP tools (so both cite the same fields).

`HitItem` is the one declaration of that form: the MCP tools' output schemas are derived from it.
"""

from __future__ import annotations

from typing import NotRequired

from typing_extensions import TypedDict

from app.search.service import Citation, Hit
from pipeline.buildfiles import parse_library_repo_path
from pipeline.model import Chunk


class LibraryRef(TypedDict):
    """Which library version a hit on library code comes from, and which readable projects use it."""

    group: str
    artifact: str
    version: str
    used_by: list[str]


class HitItem(Citation):
    """One hit as data: its citation, kind and the metadata an agent filters on."""

    symbol_type: str
    stereotype: str | None
    annotations: list[str]
    http: list[str]
    generated: bool
    score: float
    part: NotRequired[str]
    code: NotRequired[str]
    library: NotRequired[LibraryRef]


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
    if code is not None:
        item["code"] = code
    if (library := library_ref(hit)) is not None:
        item["library"] = library
    return item


def library_ref(hit: Hit) -> LibraryRef | None:
    """The library version of a hit on library code (None for the org's code)."""
    found = parse_library_repo_path(hit.repo_path) if hit.chunk.library else None
    if found is None:
        return None
    group, artifact, version = found
    return {"group": group, "artifact": artifact, "version": version, "used_by": list(hit.used_by)}


def routes(chunk: Chunk) -> list[str]:
    """A chunk's HTTP routes as `METHOD|METHOD /path` strings."""
    return [f"{'|'.join(chunk.http_method)} {path}" for path in chunk.http_path]
