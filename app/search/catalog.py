"""The catalog of repositories: which ones a caller may read, with their chunk counts, per scope.

Every MCP tool checks its `repo` argument against `repositories`; the facet runs with the caller's
condition, so the counts are exact for that caller, and is cached per access scope and search scope.
"""

from __future__ import annotations

from app.auth.access import Access
from app.search.reader import MAX_SCOPES_CACHED, Reader
from app.search.scoping import Filters, SearchScope, build_filter
from pipeline.buildfiles.model import LIBRARY_PREFIX


class Catalog:
    """The repositories' counts per caller and scope, cached for the reader's `ttl_s` (shared by every scope)."""

    def __init__(self) -> None:
        self._repos: dict[tuple[object, ...], tuple[float, dict[str, int]]] = {}

    async def repositories(self, reader: Reader, access: Access, *, fresh: bool = False) -> dict[str, int]:
        """The repositories the caller may read and their chunk counts, cached per access scope for a few seconds.

        Every MCP tool checks its `repo` argument against this list; a facet over every point costs
        0.7 s in embedded mode at 100k chunks, so it is not recomputed on every call. The facet runs
        with the caller's condition, so the counts are exact for that caller; `fresh=True` skips the
        cache (a repository missing from a cached answer may have been synced since).
        """
        now = reader.clock()
        key = (*access.scope_key, reader.scope)
        cached = self._repos.get(key)
        if not fresh and cached is not None and now - cached[0] < reader.ttl_s:
            return cached[1]
        counts = await self._counts(reader, access, Filters())
        if len(self._repos) >= MAX_SCOPES_CACHED:
            self._repos.clear()
        self._repos[key] = (now, counts)
        return counts

    async def generated_counts(self, reader: Reader, access: Access) -> dict[str, int]:
        """Chunks a code generator wrote, per repository the caller may read (one facet, not cached)."""
        return await self._counts(reader, access, Filters(generated=True))

    async def knows_repository(self, reader: Reader, access: Access, repo: str) -> bool:
        """Whether the caller may read an indexed repository `repo`, re-checked when the cache says no."""
        return repo in await self.repositories(reader, access) or repo in await self.repositories(
            reader, access, fresh=True
        )

    async def _counts(self, reader: Reader, access: Access, filters: Filters) -> dict[str, int]:
        """Points per repository within the scope: the org's under the access condition alone, libraries apart.

        A library's points are exactly those under a `maven:` path: the org's counts are the facet the
        access condition gave before scopes existed, less those paths, so the default scope adds no
        condition to it (on Edge, a facet under any filter over more than `FACET_MAX_VALUES` repositories
        is a scroll of every matching point; docs/performance.md). Libraries are counted under their flag.
        """
        counts: dict[str, int] = {}
        if reader.scope is not SearchScope.LIBRARIES:
            found = await reader.store.counts_by("repo_path", where=build_filter(access, filters, scope=None))
            counts |= {path: n for path, n in found.items() if not path.startswith(LIBRARY_PREFIX)}
        if reader.scope in (SearchScope.LIBRARIES, SearchScope.ALL):
            libraries = await reader.libraries_of(access, SearchScope.LIBRARIES)
            where = build_filter(access, filters, scope=SearchScope.LIBRARIES, libraries=libraries)
            counts |= await reader.store.counts_by("repo_path", where=where)
        return counts
