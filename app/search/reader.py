"""The reader every search and lookup reads the store through: one scope, the caller's filter, hits in file order.

`Reader.where` is `build_filter` within the reader's scope (`SearchScope`) with the library versions
the caller may read (cached per access scope); `lookup` scrolls what it matches. The store's facts a
scope depends on (a library point seen, every point keyed) are `StickyFact`s shared by every scope.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from app.auth.access import Access
from app.search.hierarchy import DECLARATION_FIELDS, Declaration, Hierarchy
from app.search.hits import Hit, hit_of, in_file_order
from app.search.offload import Offload
from app.search.scoping import OUTSIDE_CODE, Filters, ReadableLibraries, SearchScope, build_filter
from app.store.engines import Store
from app.store.filters import Condition, Filter, all_of, any_of, between, everything
from app.store.payloads import FILE_ORDER, FILE_ORDER_MAX, PAYLOAD_FIELDS, read_fields

R = TypeVar("R")
MAX_SCOPES_CACHED = 1024


class StickyFact:
    """A fact about the store that stays true once it is (a library point seen, every point keyed).

    While false it is checked again at most every `ttl_s`; `Reader.within` copies share it.
    """

    def __init__(self, ttl_s: float, clock: Callable[[], float]) -> None:
        self.ttl_s = ttl_s
        self.clock = clock
        self.checked: float | None = None  # when it was last found false; inf once true

    async def holds(self, check: Callable[[], Awaitable[bool]]) -> bool:
        """Whether it holds, asking `check` only when the last answer is older than `ttl_s` and was false."""
        if self.checked == float("inf"):
            return True
        now = self.clock()
        if self.checked is not None and now - self.checked < self.ttl_s:
            return False
        found = await check()
        self.checked = float("inf") if found else now
        return found


class Reader:
    """Reads the store within one scope for a caller; `within` copies share its caches and facts."""

    def __init__(
        self,
        store: Store,
        offload: Offload,
        gitlab_url: str | None,
        *,
        clock: Callable[[], float],
        ttl_s: float,
        libraries: ReadableLibraries | None,
    ) -> None:
        self.store = store
        self.offload = offload
        self.gitlab_url = gitlab_url
        self.clock = clock
        self.ttl_s = ttl_s
        self.scope = SearchScope.CODE
        self._readable_libraries = libraries
        self._library_paths: dict[tuple[object, ...], tuple[float, frozenset[str]]] = {}
        self._libraries = StickyFact(ttl_s, clock)  # some point is a library's (shared by `within`)
        self._keyed = StickyFact(ttl_s, clock)  # every point has its `file_order`

    def within(self, scope: SearchScope) -> Reader:
        """This reader over another scope, sharing the store, the caches and the facts."""
        if scope is self.scope:
            return self
        other = copy.copy(self)
        other.scope = scope
        return other

    async def lookup(self, access: Access, filters: Filters, *extra: Condition, limit: int | None = None) -> list[Hit]:
        """The chunks the caller may read that match the filters and conditions, in file order (at most `limit`)."""
        where = await self.where(access, filters, *extra) or everything()
        records = await collected(self.store.scroll(where, True, page=min(limit or 1024, 1024)), limit)
        return await self.offload(lambda: in_file_order([self.hit(r.id, 1.0, r.payload) for r in records]))

    async def lookup_kept(
        self,
        access: Access,
        filters: Filters,
        condition: Condition,
        fields: Sequence[str],
        keep: Callable[[Mapping[str, Any]], bool],
        *,
        limit: int,
    ) -> list[Hit]:
        """`lookup`'s hits (the same `limit` first matches) whose `fields` pass `keep`, in file order.

        The matches' `fields` are read first and the whole payloads of the kept ones only: a name shared by hundreds
        of symbols (`getName`) read and decoded every payload to keep a few (docs/performance.md).
        """
        where = await self.where(access, filters, condition) or everything()
        records = await collected(self.store.scroll(where, list(fields), page=min(limit, 1024)), limit)
        kept = [str(r.id) for r in records if keep(r.payload or {})]
        if not kept:
            return []
        found = {str(r.id): r.payload for r in await self.store.retrieve(kept, PAYLOAD_FIELDS)}
        return await self.offload(
            lambda: in_file_order([self.hit(i, 1.0, found[i]) for i in kept if i in found])  # in the scroll's order
        )

    def hit(self, point_id: Any, score: float, payload: Mapping[str, Any] | None) -> Hit:
        """A stored point as a hit, with its permalink (`hit_of`)."""
        return hit_of(point_id, score, payload, self.gitlab_url)

    async def where(self, access: Access, filters: Filters, *extra: Condition) -> Filter | None:
        """`build_filter` within this search's scope, with the library versions the caller may read."""
        scope = await self.read_scope()
        return build_filter(access, filters, *extra, scope=scope, libraries=await self.libraries_of(access, scope))

    async def libraries_of(self, access: Access, scope: SearchScope | None) -> frozenset[str]:
        """The library versions a restricted caller may read, when the scope reads libraries (cached per access scope).

        Cached like `repositories`, for `ttl_s`: a dependency a readable project adds shows its
        library within that time. Nothing is asked for the `code` scope or an unrestricted caller.
        """
        if access.unrestricted or scope not in (SearchScope.LIBRARIES, SearchScope.ALL):
            return frozenset()
        if self._readable_libraries is None:
            return frozenset()
        now, key = self.clock(), access.scope_key
        cached = self._library_paths.get(key)
        if cached is not None and now - cached[0] < self.ttl_s:
            return cached[1]
        paths = await self._readable_libraries(access)
        if len(self._library_paths) >= MAX_SCOPES_CACHED:
            self._library_paths.clear()
        self._library_paths[key] = (now, paths)
        return paths

    async def read_scope(self) -> SearchScope | None:
        """The scope's condition, or None while the store holds no library or test point and the scope is `code`.

        Without libraries, `code` needs no condition, and a read keeps the query it had before scopes
        (the same plan, the same scores to the last digit). Absence is re-checked every `ttl_s`; a
        library seen once is taken as there for good (its `must_not` is harmless if it goes).
        """
        if self.scope is not SearchScope.CODE:
            return self.scope

        async def present() -> bool:
            return await self.store.count(where=all_of(any_of("flags", list(OUTSIDE_CODE)))) > 0

        return self.scope if await self._libraries.holds(present) else None

    async def all_keyed(self) -> bool:
        """Whether every point has its `file_order` (a store written before it: not until rewritten)."""

        async def keyed() -> bool:
            return await self.store.count(all_of(none_of=[between(FILE_ORDER, 0, FILE_ORDER_MAX)])) == 0

        return await self._keyed.holds(keyed)

    def hierarchy(self, access: Access, repo: str | None) -> Hierarchy:
        """The type hierarchy the caller may read in `repo` (all repositories without one)."""

        async def lookup(condition: Condition) -> list[Declaration]:
            # Only the walk's fields are converted: types' payloads are the largest (a callers lookup of `size`
            # read 2,900 of them whole at 109k chunks).
            where = await self.where(access, Filters(repo=repo), condition)
            records = await collected(self.store.scroll(where or everything(), DECLARATION_FIELDS), None)
            return await self.offload(
                lambda: [Declaration(*read_fields(r.payload or {}, DECLARATION_FIELDS)) for r in records]
            )

        return Hierarchy(lookup)


async def collected(records: AsyncIterator[R], limit: int | None) -> list[R]:
    """The first `limit` records of a scroll (all without one): read on the loop, decoded off it."""
    found: list[R] = []
    async for record in records:
        found.append(record)
        if limit is not None and len(found) >= limit:
            break
    return found
