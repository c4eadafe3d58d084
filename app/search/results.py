"""The structured and the text form of a hit, shared by the REST API, the MCP tools and `auto_context`.

`HitItem` is the one declaration of the structured form: the MCP tools' output schemas are derived
from it. `hit_block` and `hit_line` are the one text form of a hit (with and without its code), so
every answer cites a hit alike.
"""

from __future__ import annotations

from typing import NotRequired

from typing_extensions import TypedDict

from app.search.hits import Citation, Hit
from app.search.untrusted import fence_for
from pipeline.buildfiles import parse_library_repo_path
from pipeline.model import Chunk
from pipeline.outbound import decode


class LibraryRef(TypedDict):
    """Which library version a hit on library code comes from, and which readable projects use it."""

    group: str
    artifact: str
    version: str
    used_by: list[str]


class HitItem(Citation):
    """One hit as data: its citation, kind and the metadata an agent filters on.

    No score: a search's order is made by several steps (fusion of ranked lists, boosts, bounded moves, a
    cross-encoder), none of them one score of the hit, and the store's score shown beside that order read as
    a rank it was not (9.5 above 19.4); an exact lookup has none. The order is the answer (issue 28).
    """

    symbol_type: str
    stereotype: str | None
    annotations: list[str]
    http: list[str]
    generated: bool
    part: NotRequired[str]
    outbound: NotRequired[list[str]]  # the HTTP calls it makes, when it makes any (`pipeline.outbound`)
    code: NotRequired[str]
    library: NotRequired[LibraryRef]
    declared_in: NotRequired[str]  # the bodiless declaration it implements, shown as this one hit (`app.search.fold`)


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
    }
    if c.part_count > 1:
        item["part"] = f"{c.part_index + 1}/{c.part_count}"
    if c.outbound:
        item["outbound"] = outbound(c)
    if code is not None:
        item["code"] = code
    if (library := library_ref(hit)) is not None:
        item["library"] = library
    if hit.declaration is not None:
        item["declared_in"] = hit.declaration.qualified_name
    return item


def outbound(chunk: Chunk) -> list[str]:
    """The HTTP calls a chunk makes, as agents read them (`GET /accounts/{name} -> accounts (feign)`)."""
    return [decode(text).describe() for text in chunk.outbound]


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


def excerpt(code: str, lines: int) -> str:
    """The first `lines` lines of a chunk's code, with a marker when more follow."""
    all_lines = code.splitlines()
    if len(all_lines) <= lines:
        return code
    return "\n".join(all_lines[:lines]) + f"\n    // ... {len(all_lines) - lines} more lines"


def kind_label(hit: Hit) -> str:
    """What a hit is: its symbol type, Spring role, and whether a generator wrote it."""
    c = hit.chunk
    return hit.symbol_type + (f", {c.stereotype}" if c.stereotype else "") + (", generated" if c.generated else "")


def place_floor(repo_path: str, file_path: str) -> int:
    """Characters every entry of a hit takes at least: `place` starts with `repo:path:`, in both forms."""
    return len(repo_path) + len(file_path) + 2


def place(hit: Hit) -> str:
    """Where a hit is: repository, file, lines, commit and GitLab project, when known; a library's version and users."""
    c = hit.chunk
    library = library_ref(hit)
    return (
        f"{hit.repo_path}:{hit.file_path}:{hit.line_start}-{hit.line_end}"
        + (f" @ {hit.commit_sha[:12]}" if hit.commit_sha else "")
        + (f" (project {c.gitlab_project_id})" if c.gitlab_project_id is not None else "")
        + (f" (library, version {library['version']}; used by: {', '.join(hit.used_by) or 'none you can read'})"
           if library else "")
    )  # fmt: skip


def hit_line(rank: int, hit: Hit) -> str:
    """A hit on one line, without its code: its qualified name, kind, citation and routes."""
    http = routes(hit.chunk)
    return (
        f"{rank}. {hit.qualified_name} ({kind_label(hit)}) {place(hit)}"
        + (f" http: {', '.join(http)}" if http else "")
        + (f" declared in {hit.declaration.qualified_name}" if hit.declaration is not None else "")
    )


def hit_block(rank: int, hit: Hit, code: str) -> str:
    """A hit with its code in a fenced block, under a header of its name, kind, signature and citation."""
    http = routes(hit.chunk)
    lines = [f"{rank}. {hit.qualified_name} ({kind_label(hit)})", f"   {hit.signature}", f"   {place(hit)}"]
    if http:
        lines.append(f"   http: {', '.join(http)}")
    if hit.chunk.outbound:
        lines.append(f"   calls over http: {', '.join(outbound(hit.chunk))}")
    if hit.declaration is not None:
        lines.append(f"   declared in {hit.declaration.qualified_name} {place(hit.declaration)}")
    if hit.permalink:
        lines.append(f"   {hit.permalink}")
    fence = fence_for(code)
    lines.append(f"{fence}java\n{code}\n{fence}")
    return "\n".join(lines)
