"""`find_library_usages(library)`: which of the org's projects use a library, at which versions (issue 16).

Reads with the caller's `Access` inside the PostgreSQL query (`app.libraries.usage`): a project the
caller cannot read is never named. Each version also says what became of its sources (indexed, no
sources jar, not allowed...), an org-wide fact about the library that names no project.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastmcp.exceptions import ToolError
from fastmcp.tools import ToolResult
from pydantic import Field

from app.auth.access import Access
from app.core.errors import StorageError
from app.libraries.usage import LibraryName, usages
from app.runtime import Deps
from mcp_server.render import echo
from mcp_server.status_tools import MISS_LEVEL, UNAVAILABLE
from mcp_server.tool_pages import lines_page, tool_result
from mcp_server.tool_params import FIRST_PAGE, Page

Library = Annotated[
    str,
    Field(description="group, group:artifact or group:artifact:version, e.g. 'org.springframework:spring-web'."),
]


class LibraryTools:
    """`find_library_usages`, thin over `app.libraries.usage`."""

    def __init__(self, get_deps: Callable[[], Deps], access: Callable[[], Access]) -> None:
        self.get_deps = get_deps
        self._access = access

    async def find_library_usages(self, library: Library, page: Page = FIRST_PAGE) -> ToolResult:
        """Which of our projects declare a library, at which versions and in which build file.

        Each version says whether its sources are indexed: search them with scope="libraries".

        Example: find_library_usages(library="org.springframework:spring-web")
        """
        try:
            name = LibraryName.parse(library)
        except ValueError as exc:
            raise ToolError(f"{exc}; got {echo(library)!r}.", log_level=MISS_LEVEL) from exc
        deps = self.get_deps()
        if deps.db is None:
            raise ToolError(UNAVAILABLE, log_level=MISS_LEVEL)
        try:
            rows = await usages(deps.db, self._access(), name)
            statuses = await deps.db.libraries() if rows else {}
        except StorageError as exc:
            raise ToolError(UNAVAILABLE, log_level=MISS_LEVEL) from exc
        if not rows:
            raise ToolError(f"No readable project declares {echo(library)!r}.", log_level=MISS_LEVEL)
        items: list[dict[str, Any]] = []
        for r in rows:
            known = statuses.get((r.group_id, r.artifact_id, r.version))
            items.append(
                {
                    "library": f"{r.group_id}:{r.artifact_id}",
                    "version": r.version or None,
                    "unresolved": r.unresolved,
                    "repo": r.repo_path,
                    "project_id": r.project_id,
                    "build_file": r.source_path,
                    "scope": r.scope,
                    "kind": r.kind,
                    "sources": known.status.value if known is not None else None,
                    "repo_path": f"maven:{r.group_id}:{r.artifact_id}:{r.version}" if known is not None else None,
                }
            )
        lines = [_line(i) for i in items]
        rendered = lines_page(lines, items, page.offset, page.max_chars, header=f"Users of {echo(library)}:")
        return tool_result(rendered)


def _line(item: dict[str, Any]) -> str:
    version = item["version"] or "?"
    why = f" (unresolved: {item['unresolved']})" if item["unresolved"] else ""
    sources = f" sources={item['sources']}" if item["sources"] else ""
    return f"{item['library']}:{version}{why}  {item['repo']}  {item['build_file']} {item['scope']}{sources}".rstrip()
