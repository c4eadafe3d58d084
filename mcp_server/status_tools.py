"""The MCP tools an agent uses to trust the index: `index_status(repo?)` and `refresh_repo(repo)`.

Both read with the caller's `Access`: `index_status` puts it inside its PostgreSQL query
(`app.sync.status`), `refresh_repo` refuses a repository the caller cannot read exactly as one that
does not exist. `refresh_repo` is idempotent and rate-limited per project (`app.sync.requests.refresh`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from fastmcp.exceptions import ToolError
from fastmcp.tools import ToolResult
from pydantic import Field

from app.auth.access import Access
from app.core.errors import RateLimitedError, StorageError
from app.runtime import Deps, ServiceDeps
from app.sync.requests import refresh
from app.sync.status import index_status, status_line
from mcp_server.render import echo
from mcp_server.tool_pages import lines_page, tool_result
from mcp_server.tool_params import FIRST_PAGE, OneRepo, Page, StatusRepo

MISS_LEVEL = 20  # logging.INFO: a miss is the caller's business, not a server error (as `server.MISS`)
UNAVAILABLE = "The service's PostgreSQL or Redis is unavailable; try again in a minute."


class StatusTools:
    """`index_status` and `refresh_repo`, thin over `app.sync.status` and `app.sync.requests`."""

    def __init__(self, get_deps: Callable[[], Deps], access: Callable[[], Access]) -> None:
        self.get_deps = get_deps
        self._access = access

    async def index_status(self, repo: StatusRepo = None, page: Page = FIRST_PAGE) -> ToolResult:
        """How fresh the index is, per repository, as GitLab reported it (or the local working tree) and when checked.

        Each entry: `source` (gitlab or local), the indexed commit (a local checkout: its working tree's
        state), GitLab's default-branch head (the working tree's state now) and when it was checked, how far
        behind (commits, seconds), whether a sync runs, the last run and error, file and chunk counts.
        `behind` false means the index equals that head as last checked.

        Example: index_status(repo="acme/shop") or index_status(repo="acme/")
        """
        deps = self.get_deps()
        db = deps.db
        try:
            local = deps.settings.chunking.to_config()
            items = await index_status(db, self._access(), repo, local) if db is not None else []
        except StorageError as exc:
            raise ToolError(UNAVAILABLE, log_level=MISS_LEVEL) from exc
        if not items:
            what = f"repository {echo(repo)!r}" if repo else "any repository you may read"
            raise ToolError(f"No index status for {what}: nothing was synced or indexed yet.", log_level=MISS_LEVEL)
        return _page([status_line(i) for i in items], items, page)

    async def refresh_repo(self, repo: Annotated[OneRepo, Field(min_length=1)]) -> ToolResult:
        """Ask for a sync of one repository now, when index_status shows it behind or you know of a push.

        Idempotent: while a sync is already waiting nothing new is asked. New refreshes of one repository
        are rate-limited (a minute apart by default; the answer says when to ask again). Then poll
        index_status(repo).
        Example: refresh_repo(repo="acme/shop")
        """
        deps = self.get_deps()
        if not isinstance(deps, ServiceDeps):  # MCP over the store alone (no PostgreSQL or Redis opened)
            raise ToolError("Refresh needs the service's PostgreSQL and Redis.", log_level=MISS_LEVEL)
        try:
            done = await refresh(deps, self._access(), repo)
        except StorageError as exc:
            raise ToolError(UNAVAILABLE, log_level=MISS_LEVEL) from exc
        except RateLimitedError as exc:
            raise ToolError(
                f"{echo(repo)!r} was refreshed moments ago; ask again in {math.ceil(exc.retry_after_s)} s.",
                log_level=MISS_LEVEL,
            ) from exc
        if done is None:
            raise ToolError(f"Unknown repository {echo(repo)!r}.", log_level=MISS_LEVEL)
        item = {
            "repo": done.repo,
            "project_id": done.project_id,
            "state": done.state.value,
            "generation": done.generation,
            "request_id": done.request_id,
            "detail": done.detail,
        }
        line = f"{done.repo}: {done.state} (generation {done.generation}): {done.detail}"
        return _page([line], [item], FIRST_PAGE)


def _page(lines: Sequence[str], items: Sequence[Any], page: Page) -> ToolResult:
    return tool_result(lines_page(lines, items, page.offset, page.max_chars))
