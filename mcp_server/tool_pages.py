"""How a tool's answer becomes a page and a `ToolResult`.

Set answers (the code of the first few members), set windows, the handlers a call site reaches,
one-line entries, and the citations they show.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fastmcp.tools import ToolResult
from mcp.types import TextContent

from app.core.states import ProjectStatus
from app.search.endpoints import AskedRoute
from app.search.hits import Hit, Member
from app.search.links import CallSite, Targets, describe
from app.search.results import place_floor
from mcp_server.render import (
    SET_CODE_FIRST,
    Entry,
    Note,
    Rendered,
    echo,
    most_shown,
    page,
    render_hits,
    render_window,
)


def set_page(
    hits: Sequence[Hit], header: str, offset: int, code: bool, budget: int, *, excerpt_lines: int | None,
    notes: Sequence[Note] | None = None,
) -> Rendered:  # fmt: skip
    """A set answer: one citation line per member, the code of the first few (of all with `code`)."""
    code_first = None if code else SET_CODE_FIRST
    return render_hits(
        hits, budget=budget, excerpt_lines=excerpt_lines, header=header, offset=offset, code_first=code_first,
        notes=notes,
    )  # fmt: skip


def shows_within(budget: int) -> Callable[[Sequence[Member]], int]:
    """How many of some set members a page of `budget` characters shows at most (each entry takes its place)."""

    def shows(members: Sequence[Member]) -> int:
        return most_shown((place_floor(m.repo_path, m.file_path) for m in members), budget)

    return shows


def set_window_page(
    window: Sequence[Hit], total: int, header: str, offset: int, code: bool, budget: int, *, excerpt_lines: int | None,
    notes: Sequence[Note] | None = None,
) -> Rendered:  # fmt: skip
    """`set_page` of an answer of `total` hits given only those from `offset` on that the page can show."""
    code_first = None if code else SET_CODE_FIRST
    return render_window(
        window, total=total, budget=budget, excerpt_lines=excerpt_lines, header=header, offset=offset,
        code_first=code_first, notes=notes,
    )  # fmt: skip


def match_notes(callers: Sequence[Hit], exact: Sequence[str]) -> list[Note]:
    """Each caller's `match`; a line only on one matched by its receiver type's simple name alone (the rarer)."""
    keys = set(exact)
    return [
        Note((), {"match": RECEIVER_TYPE})
        if not keys.isdisjoint(hit.chunk.calls_fq)
        else Note(("matched only by the simple name of its receiver's type",), {"match": TYPE_NAME})
        for hit in callers
    ]


def targets_page(found: Targets, caller: str, offset: int, code: bool, budget: int) -> tuple[Rendered, dict[str, Any]]:
    """The handlers a call site reaches, each with its evidence; the calls no URI is known for, in the header."""
    notes = [
        Note(
            (f"serves {t.route.describe()} called by {t.caller.qualified_name}", f"evidence: {'; '.join(t.evidence)}"),
            {"called_as": t.route.describe(), "caller": t.caller.qualified_name, "evidence": list(t.evidence)},
        )
        for t in found.targets
    ]
    unresolved = [f"{c.qualified_name}: {r.describe()}" for c, r in found.unresolved]
    header = f"Handlers reached by {echo(caller)}:"
    if unresolved:
        header += "\nCalls whose URI the code does not fix: " + "; ".join(unresolved)
    hits = [t.hit for t in found.targets]
    return set_page(hits, header, offset, code, budget, excerpt_lines=None, notes=notes), {"unresolved": unresolved}


def lines_page(lines: Sequence[str], items: Sequence[Any], offset: int, budget: int, *, header: str = "") -> Rendered:
    """A page of one-line entries."""
    entries = [Entry(line, item, "\n") for line, item in zip(lines, items, strict=True)][offset:]
    return page(entries, total=len(lines), offset=offset, budget=budget, header=header)


def tool_result(rendered: Rendered, extra: dict[str, Any] | None = None, **more: Any) -> ToolResult:
    """The page as the tool's result: its text, and its data with `extra` and `more` added."""
    extra = {**(extra or {}), **more}
    return ToolResult(content=[TextContent(type="text", text=rendered.text)], structured_content=rendered.data(**extra))


def cite(hit: Hit) -> str:
    """A hit's name and where it is, lines, commit and project included."""
    place = f"{hit.repo_path}:{hit.file_path}:{hit.line_start}-{hit.line_end}"
    return f"{hit.qualified_name} ({cited_place(hit, place)})"


def cited_place(hit: Hit, place: str) -> str:
    """A place in the index with the commit and GitLab project it comes from, when known."""
    project = hit.chunk.gitlab_project_id
    return (
        place
        + (f" @ {hit.commit_sha[:12]}" if hit.commit_sha else "")
        + (f" (project {project})" if project is not None else "")
    )


def repo_item(path: str, chunks: int, generated: int, row: Any) -> dict[str, Any]:
    """One repository of `list_repos`: its chunk counts and, when PostgreSQL knows it, its sync state."""
    return {
        "repo": path,
        "project_id": getattr(row, "id", None),
        "chunks": chunks,
        "generated_chunks": generated,
        "default_branch": getattr(row, "default_branch", None),
        "indexed_sha": getattr(row, "indexed_sha", None),
        "indexed_at": row.indexed_at.isoformat() if row is not None and row.indexed_at else None,
        "status": getattr(row, "state", ProjectStatus.OK if chunks else ProjectStatus.PENDING),
        "last_error": getattr(row, "last_error", None),
    }


def route_header(route: AskedRoute, text: str) -> str:
    """The route an answer is about, as read (`GET /things/{id}`), and from what when the text said more."""
    read = echo(route.describe())
    if text.strip() == route.path:
        return read
    dropped = f"; its {route.conflict} gave way to http_method" if route.conflict else ""
    return f"{read} (read from {echo(text)!r}{dropped})"


def call_site_notes(sites: Sequence[CallSite]) -> list[Note]:
    """What each call site of an endpoint adds to its hit: how it reaches it, or why it is only a candidate."""
    return [
        Note(
            s.evidence
            or (
                f"reaches it with {', '.join(describe(s.routes))}"
                + (f" through {s.through.qualified_name}" if s.through else ""),
            ),
            {
                "reaches_with": describe(s.routes),
                "through": s.through.qualified_name if s.through else None,
                **({"evidence": list(s.evidence)} if s.evidence else {}),
            },
        )
        for s in sites
    ]


def candidates_said(sites: Sequence[CallSite]) -> str:
    """A header's word on the unresolved candidates among the call sites (listed last), if any."""
    count = sum(1 for s in sites if s.evidence)
    if not count:
        return ""
    fixed = len(sites) - count
    return f" ({fixed} whose URI the code fixes; {count} unresolved candidate{'s' * (count > 1)}, last, with evidence)"


RECEIVER_TYPE = "receiver type"
"""A caller whose receiver's declared type resolved to the method's type (`calls_fq`)."""
TYPE_NAME = "type name"
"""A caller matched by the simple name of its receiver's type only: another type may share that name."""


SHOWN_TYPES = 30
"""Declaring types an answer names when there are too many to list the callers of each."""


def callers_by_type_page(
    name: str,
    declared: Sequence[str],
    groups: Sequence[tuple[str, Sequence[tuple[Hit, bool]]]],
    offset: int,
    code: bool,
    budget: int,
) -> tuple[Rendered, dict[str, Any]]:
    """Callers of a bare method name several types declare: the types first, then each one's callers, marked.

    Without `groups` (too many types to look each up) the answer names the types and asks which one.
    """
    method = echo(name.split("(", 1)[0])
    example = f"{declared[0].rsplit('.', 1)[-1]}.{method}"
    if not groups:
        more = f" (and {len(declared) - SHOWN_TYPES} more)" if len(declared) > SHOWN_TYPES else ""
        text = (
            f"{method} is declared by {len(declared)} types, too many to list the callers of each: name one, "
            f"e.g. get_callers(name={example!r}). The types: {', '.join(declared[:SHOWN_TYPES])}{more}."
        )
        return Rendered(text=text, items=[], total=0, offset=0, next_offset=None), {"declared_by": list(declared)}
    counts = "; ".join(f"{owner}: {len(found)}" for owner, found in groups)
    header = (
        f"{method} is declared by {len(groups)} types, so its callers are listed per type ({counts}); "
        f"name one (get_callers(name={example!r})) to ask about it alone. Callers:"
    )
    hits: list[Hit] = []
    notes: list[Note] = []
    for owner, found in groups:
        for hit, resolved in found:
            match = RECEIVER_TYPE if resolved else TYPE_NAME
            how = "its receiver's type resolved" if resolved else "only by the simple name of its receiver's type"
            hits.append(hit)
            notes.append(Note((f"calls {owner}.{method} ({how})",), {"declared_by": owner, "match": match}))
    rendered = set_page(hits, header, offset, code, budget, excerpt_lines=12, notes=notes)
    return rendered, {"declared_by": [owner for owner, _ in groups]}
