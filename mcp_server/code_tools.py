"""`read_code(repo, path, start_line?, end_line?)` and `impact(symbol | changes, hops)` (issue 28).

Thin over `app.search.code` and `app.search.impact`, each read with the caller's `Access` inside the
query: a file or a repository the caller may not read answers exactly as one that does not exist, and
an impact path never runs through code the caller may not read. `read_code` reads the file from GitLab
at the indexed commit with the caller's own GitLab token when it holds one (`app.gitlab.files`), else
shows the lines the index holds; the lines are indexed text, fenced as untrusted (`fence_for`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastmcp.exceptions import ToolError
from fastmcp.server.dependencies import get_access_token
from fastmcp.tools import ToolResult
from mcp.types import TextContent
from pydantic import Field

from app.auth.access import Access
from app.core.errors import GitLabUnavailableError, PayloadError
from app.gitlab.files import file_reader
from app.runtime import Deps
from app.search.code import MAX_FILE_BYTES, MAX_LINES, CodeLines, code_item
from app.search.impact import DEFAULT_HOPS, MAX_CHANGES, MAX_HOPS, Impact, impact_of
from app.search.impact_items import impact_item
from app.search.scoping import SearchScope
from app.search.untrusted import fence_for
from mcp_server.render import echo
from mcp_server.status_tools import MISS_LEVEL
from mcp_server.tool_params import Language, OneRepo, Repo, bad_language

FilePath = Annotated[str, Field(description="The file's path in the repository, as results cite it.", max_length=1024)]
Line = Annotated[int | None, Field(ge=1, description=f"1-based line; at most {MAX_LINES} lines per call.")]
Hops = Annotated[int, Field(ge=0, le=MAX_HOPS, description="How many levels of callers to follow.")]
Changes = Annotated[
    list[Annotated[str, Field(max_length=1100)]] | None,
    Field(max_length=MAX_CHANGES, description="Instead of symbol: changed lines as 'path:start-end' (with repo)."),
]


def not_found(repo: str, path: str) -> str:
    """The one answer for a file that is not indexed, in a repository that is not, or that the caller may not read."""
    return f"No indexed file {echo(path)!r} in {echo(repo)!r}."


def miss(message: str) -> ToolError:
    """A refusal or a miss, logged at INFO (`mcp_server.server.miss`)."""
    return ToolError(message, log_level=MISS_LEVEL)


class CodeTools:
    """`read_code` and `impact`, thin over the search module."""

    def __init__(self, get_deps: Callable[[], Deps], access: Callable[[], Access]) -> None:
        self.get_deps = get_deps
        self._access = access

    async def read_code(
        self, repo: OneRepo, path: FilePath, start_line: Line = None, end_line: Line = None
    ) -> ToolResult:
        """The lines of an indexed file at the indexed commit, with the declarations they hold; paged by start_line.

        Example: read_code(repo="acme/shop", path="core/src/main/java/com/acme/OwnerService.java", start_line=1)
        """
        deps = self.get_deps()
        access = self._access()
        source = code_source(deps, access, _caller_token())
        try:
            found = await deps.search.within(SearchScope.ALL).read_code(
                access, repo, path, start_line, end_line, source
            )
        except PayloadError as exc:
            raise miss(f"{exc}; got {echo(path)!r}.") from exc
        except GitLabUnavailableError as exc:
            raise miss("GitLab is unavailable; try again.") from exc
        if found is None:
            raise miss(not_found(repo, path))
        return ToolResult(
            content=[TextContent(type="text", text=code_text(found))], structured_content=whole(dict(code_item(found)))
        )

    async def impact(
        self,
        symbol: Annotated[str | None, Field(description="A method or type: Type.method, qualified, or a type.")] = None,
        changes: Changes = None,
        repo: Repo = None,
        hops: Hops = DEFAULT_HOPS,
        language: Language = None,
    ) -> ToolResult:
        """What a change reaches: its callers (transitively), the HTTP endpoints they serve, the remote call sites.

        Each method, endpoint and call site comes with its path of evidence from the change; bounded by `hops`,
        a method cap and a time cap, which the answer names when they cut it; `language` narrows what is shown.
        Example: impact(symbol="OwnerService.find", hops=3)
        or impact(repo="acme/shop", changes=["core/src/main/java/com/acme/OwnerService.java:40-52"])
        """
        if (bad := bad_language(language)) is not None:
            raise miss(bad)
        try:
            found = await impact_of(self.get_deps().search, self._access(), symbol, changes, repo, hops, language)
        except PayloadError as exc:
            raise miss(str(exc)) from exc
        return ToolResult(
            content=[TextContent(type="text", text=impact_text(found))],
            structured_content=whole(dict(impact_item(found))),
        )


def whole(data: dict[str, Any]) -> dict[str, Any]:
    """An answer shown whole as a page (`mcp_server.schemas.Page`): every entry of its `results`, nothing omitted."""
    return {**data, "total": len(data["results"]), "offset": 0, "omitted": 0, "next_offset": None}


def code_source(
    deps: Deps, access: Access, caller_token: str | None
) -> Callable[[int, str, str], Awaitable[bytes | None]] | None:
    """Where `read_code` reads a file: GitLab with the caller's token (or the service's), when GitLab is configured."""
    return file_reader(deps.http, deps.settings.gitlab, access.subject, caller_token, max_bytes=MAX_FILE_BYTES)


def _caller_token() -> str | None:
    token = get_access_token()
    return token.token if token is not None else None


def code_text(found: CodeLines) -> str:
    """The page as text: where it is, the declarations it holds, the lines numbered in a fence."""
    total = f" of {found.total_lines}" if found.total_lines is not None else ""
    sha = (found.commit_sha or "-")[:12]
    head = f"{found.repo_path}:{found.file_path} @ {sha} lines {found.start}-{found.end}{total} (from {found.origin})"
    outline = [f"{s.line_start:>5}-{s.line_end:<5} {s.symbol_type:<11} {s.signature}" for s in found.symbols]
    numbered: list[str] = []
    gap: int | None = None
    for number, line in enumerate(found.lines, found.start):
        if line is None:
            gap = number if gap is None else gap
            continue
        if gap is not None:
            numbered.append(_gap(gap, number - 1))
            gap = None
        numbered.append(f"{number:>5}  {line}")
    if gap is not None:
        numbered.append(_gap(gap, found.end))
    body = "\n".join(numbered)
    fence = fence_for(body)
    parts = [head, *(["Declarations:", *outline] if outline else []), f"{fence}java\n{body}\n{fence}"]
    if found.next_start is not None:
        parts.append(f"More: start_line={found.next_start}")
    return "\n".join(parts)


def _gap(first: int, last: int) -> str:
    span = f"{first}" if first == last else f"{first}-{last}"
    return f"{span:>5}  [not held by the index]"


def impact_text(found: Impact) -> str:
    """The impact as text: methods by hop, endpoints, remote call sites, each with its path of evidence."""
    data = impact_item(found)
    lines = [f"Changed: {', '.join(s['qualified_name'] for s in data['seeds'])}"]
    for m in data["results"]:
        lines.append(f"[hop {m['hop']}] {m['qualified_name']}  {m['repo_path']}:{m['file_path']}:{m['line_start']}")
        lines.append("    via " + " <- ".join(m["path"]))
    for e in data["endpoints"]:
        lines.append(f"[endpoint] {e['http_method']} {e['route']} served by {e['handler']}")
        lines.append("    via " + " <- ".join(e["path"]))
    for r in data["remote_callers"]:
        through = f" through {r['through']}" if r["through"] else ""
        lines.append(f"[remote] {r['qualified_name']}  {r['repo_path']}:{r['file_path']}:{r['line_start']}"
                     f" calls {r['endpoint']}{through}")  # fmt: skip
    if data["cut"]:
        lines.append("Cut by: " + ", ".join(data["cut"]) + ": more may be reached beyond it")
    if data["unmatched"]:
        lines.append("No indexed method at: " + ", ".join(data["unmatched"]))
    return "\n".join(lines)
