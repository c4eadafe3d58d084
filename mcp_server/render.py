"""Agent-facing rendering of hits: compact text within a character budget, plus structured data.

The budget cuts whole results, never mid-line, and says how many were left out, so an agent can
ask again with a larger budget or narrower filters instead of reading a truncated method.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.search.results import hit_item, routes
from app.search.service import Hit

DEFAULT_BUDGET = 12_000
DEFAULT_EXCERPT_LINES = 30
ECHO_CHARS = 120
"""At most this much of a caller's input is echoed back, so an answer never grows with the input."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Rendered:
    """Text for the model, the same results as data, and how many results the budget left out."""

    text: str
    items: list[dict[str, Any]]
    omitted: int


def excerpt(code: str, lines: int) -> str:
    """The first `lines` lines of a chunk's code, with a marker when more follow."""
    all_lines = code.splitlines()
    if len(all_lines) <= lines:
        return code
    return "\n".join(all_lines[:lines]) + f"\n    // ... {len(all_lines) - lines} more lines"


def echo(text: str, limit: int = ECHO_CHARS) -> str:
    """User input as shown back in a header or an error, cut to `limit` characters."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def render_hits(
    hits: Sequence[Hit], *, budget: int = DEFAULT_BUDGET, excerpt_lines: int | None = DEFAULT_EXCERPT_LINES,
    header: str = "",
) -> Rendered:  # fmt: skip
    """Render hits until the budget is spent; `excerpt_lines=None` shows whole code.

    A result goes in only if it fits together with the note that would follow it, so the text stays
    within the budget. The one exception is the first result: an answer beats an empty reply, so it
    is shown whole even when it alone is over budget, followed by the shortest note.
    """
    blocks: list[str] = [header] if header else []
    items: list[dict[str, Any]] = []
    used = len(header)
    short = False
    for rank, hit in enumerate(hits, 1):
        code = hit.code if excerpt_lines is None else excerpt(hit.code, excerpt_lines)
        block = _block(rank, hit, code)
        cost = len(block) + (len(_SEPARATOR) if blocks else 0)
        remaining = len(hits) - rank
        reserve = len(_SEPARATOR) + len(_omitted_note(remaining)) if remaining else 0
        if used + cost + reserve > budget and items:
            break
        if used + cost + reserve > budget:
            short = True
        blocks.append(block)
        items.append(hit_item(hit, code=code))
        used += cost
    omitted = len(hits) - len(items)
    if omitted:
        blocks.append(f"[+{omitted} more]" if short else _omitted_note(omitted))
    if not hits:
        blocks.append("No results.")
    return Rendered(text=_SEPARATOR.join(blocks), items=items, omitted=omitted)


_SEPARATOR = "\n\n"


def _omitted_note(count: int) -> str:
    return f"[{count} more results left out by the output budget: raise max_chars or narrow the filters]"


def _block(rank: int, hit: Hit, code: str) -> str:
    c = hit.chunk
    kind = hit.symbol_type + (f", {c.stereotype}" if c.stereotype else "")
    http = routes(c)
    lines = [
        f"{rank}. {hit.qualified_name} ({kind})",
        f"   {hit.signature}",
        f"   {hit.repo_path}:{hit.file_path}:{hit.line_start}-{hit.line_end}"
        + (f" @ {hit.commit_sha[:12]}" if hit.commit_sha else "")
        + (f" (project {c.gitlab_project_id})" if c.gitlab_project_id is not None else ""),
    ]
    if http:
        lines.append(f"   http: {', '.join(http)}")
    if hit.permalink:
        lines.append(f"   {hit.permalink}")
    lines.append("```java\n" + code + "\n```")
    return "\n".join(lines)
