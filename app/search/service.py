"""`SearchService`: the one search over the store, shared by the CLI, the REST API and MCP; a thin facade.

Every entry point takes the caller's `Access` first and reads through one `Reader` (`app.search.reader`),
whose filter holds the caller's condition inside the query. A query passes these stages, in order
(docs/architecture.md names them): `check_query` → `parse_question` (`app.search.question`, once) →
the pool (`app.search.pool`: fused candidates, named matches and a relation's answers at once) →
composed routes (`app.search.endpoints`) → rerank (`app.search.ranking`) → cross-encoder → demotion.
Exact lookups are `app.search.lookups` and `app.search.endpoints`, paged sets `app.search.sets`, the
repositories' catalog `app.search.catalog`, hits and citations `app.search.hits`.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Callable, Sequence

from app.auth.access import Access
from app.core.errors import PayloadError
from app.core.settings import GeneratedCode
from app.search import endpoints, lookups, pool, sets
from app.search.catalog import Catalog
from app.search.crossencoder import CrossEncoder
from app.search.hits import Hit, Member, SetWindow
from app.search.offload import Offload, bounded
from app.search.question import Question, parse_question
from app.search.reader import Reader
from app.search.scoping import Filters, ReadableLibraries, SearchScope
from app.store.embeddings import Embedder
from app.store.engines import Store
from app.store.filters import Condition

NO_FILTERS = Filters()
"""A search's default: no filter but the caller's access and the scope (`Filters` is frozen: one value serves)."""


class SearchService:
    """Search over the store; the embedder is optional (lexical-only mode without it).

    `libraries` tells which library versions a restricted caller may read; without it such a caller
    reads none (an unrestricted one reads every library either way).
    """

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        gitlab_url: str | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        repos_ttl_s: float = 10.0,
        max_query_chars: int = 2000,
        max_query_terms: int = 64,
        cross_encoder: CrossEncoder | None = None,
        generated_code: GeneratedCode = GeneratedCode.DEMOTE,
        offload: Offload | None = None,
        max_concurrent: int | None = None,
        libraries: ReadableLibraries | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.cross_encoder = cross_encoder
        self.gitlab_url = gitlab_url.rstrip("/") if gitlab_url else None
        self.max_query_chars = max_query_chars
        self.max_query_terms = max_query_terms
        self.generated_code = generated_code
        # The pure stretches of a search run through the reader's offload (`app.search.offload`).
        self._reader = Reader(
            store,
            offload or bounded(None),
            self.gitlab_url,
            clock=clock,
            ttl_s=repos_ttl_s,
            libraries=libraries,
        )
        self._catalog = Catalog()  # the repositories cache (keyed by scope), shared by `within`
        # Searches computing at once (shared by `within`); the others wait their turn (`app.search.offload`).
        self._searching = asyncio.Semaphore(max_concurrent) if max_concurrent else None

    @property
    def scope(self) -> SearchScope:
        """Whose code this search reads (`SearchScope`)."""
        return self._reader.scope

    def within(self, scope: SearchScope) -> SearchService:
        """This search over another scope (`SearchScope`): every entry point then reads within it."""
        if scope is self.scope:
            return self
        other = copy.copy(self)  # shares the store, the clients, the caches and the semaphore
        other._reader = self._reader.within(scope)
        return other

    def check_query(self, query: str) -> None:
        """Refuse a query too long to score quickly (it would hold the store for seconds).

        Raises:
            PayloadError: the query has more characters or words than the settings allow.
        """
        if len(query) > self.max_query_chars:
            raise PayloadError(f"the query is longer than {self.max_query_chars} characters")
        if len(query.split()) > self.max_query_terms:
            raise PayloadError(f"the query has more than {self.max_query_terms} words")

    async def search(self, access: Access, query: str, filters: Filters = NO_FILTERS, limit: int = 10) -> list[Hit]:
        """Hybrid search: Qdrant's fused candidates and the structural indexes' exact matches, reranked.

        A configured cross-encoder (`app.search.crossencoder`) then re-scores the best candidates.

        Raises:
            PayloadError: the query is over the length or word caps (`check_query`).
        """
        self.check_query(query)
        return await self._bounded(access, query, filters, limit)

    async def ask(
        self, access: Access, question: Question, filters: Filters = NO_FILTERS, limit: int = 10
    ) -> list[Hit]:
        """`search` for a question already parsed (`parse_question`), which its caller reads too (`auto_context`).

        Raises:
            PayloadError: the question is over the length or word caps (`check_query`).
        """
        self.check_query(question.text)
        return await self._bounded(access, question, filters, limit)

    async def _bounded(self, access: Access, question: str | Question, filters: Filters, limit: int) -> list[Hit]:
        """The search once its turn comes (`search.max_concurrent` at once); a text is parsed off the loop."""
        if self._searching is None:
            return await self._search(access, question, filters, limit)
        async with self._searching:
            return await self._search(access, question, filters, limit)

    async def _search(self, access: Access, question: str | Question, filters: Filters, limit: int) -> list[Hit]:
        if isinstance(question, str):
            text = question
            question = await self._reader.offload(lambda: parse_question(text))
        rankers = pool.Rankers(
            embedder=self.embedder, cross_encoder=self.cross_encoder, generated_code=self.generated_code
        )
        return await pool.ranked(self._reader, access, question, filters, limit, rankers)

    async def repositories(self, access: Access, *, fresh: bool = False) -> dict[str, int]:
        """The repositories the caller may read and their chunk counts (`Catalog.repositories`)."""
        return await self._catalog.repositories(self._reader, access, fresh=fresh)

    async def knows_repository(self, access: Access, repo: str) -> bool:
        """Whether the caller may read an indexed repository `repo`, re-checked when the cache says no."""
        return await self._catalog.knows_repository(self._reader, access, repo)

    async def generated_counts(self, access: Access) -> dict[str, int]:
        """Chunks a code generator wrote, per repository the caller may read (one facet, not cached)."""
        return await self._catalog.generated_counts(self._reader, access)

    async def lookup(self, access: Access, filters: Filters, *extra: Condition) -> list[Hit]:
        """The chunks the caller may read that match the filters and conditions, in file order (exact lookups)."""
        return await self._reader.lookup(access, filters, *extra)

    async def _lookup(self, access: Access, filters: Filters, *extra: Condition, limit: int | None = None) -> list[Hit]:
        return await self._reader.lookup(access, filters, *extra, limit=limit)

    async def outline(self, access: Access, repo: str, file_path: str) -> list[Hit]:
        """Every chunk of one file in line order."""
        return await lookups.outline(self._reader, access, repo, file_path)

    async def symbol(
        self, access: Access, name: str, repo: str | None = None, *, path_prefix: str | None = None
    ) -> list[Hit]:
        """A method or type by qualified or simple name, all overloads (`app.search.lookups.symbol`)."""
        return await lookups.symbol(self._reader, access, name, repo, path_prefix=path_prefix)

    async def callers(
        self, access: Access, name: str, repo: str | None = None, *, path_prefix: str | None = None
    ) -> list[Hit]:
        """Chunks whose body calls the named method, through the type hierarchy (`app.search.lookups.callers`)."""
        return await lookups.callers(self._reader, access, name, repo, path_prefix=path_prefix)

    async def callees(
        self, access: Access, name: str, repo: str | None = None, *, path_prefix: str | None = None
    ) -> list[tuple[str, list[Hit]]]:
        """What the named method calls, each call with the symbols it resolves to (`app.search.lookups.callees`)."""
        return await lookups.callees(self._reader, access, name, repo, path_prefix=path_prefix)

    async def injectors(
        self, access: Access, type_name: str, repo: str | None = None, *, path_prefix: str | None = None
    ) -> list[Hit]:
        """Types that receive the named type by injection (`app.search.lookups.injectors`)."""
        return await lookups.injectors(self._reader, access, type_name, repo, path_prefix=path_prefix)

    async def dependencies(self, access: Access, type_name: str, repo: str | None = None) -> list[str]:
        """What the named type receives by injection (the inverse of `injectors`)."""
        return await lookups.dependencies(self._reader, access, type_name, repo)

    async def bean_stereotypes(self, access: Access) -> frozenset[str]:
        """Annotation types the caller may read that make a class a bean (`app.search.lookups.bean_stereotypes`)."""
        return await lookups.bean_stereotypes(self._reader, access)

    async def implementations(
        self, access: Access, type_name: str, repo: str | None = None, *, path_prefix: str | None = None
    ) -> list[Hit]:
        """Types that implement or extend the named type."""
        return await lookups.implementations(self._reader, access, type_name, repo, path_prefix=path_prefix)

    async def endpoint(
        self,
        access: Access,
        path: str,
        http_method: str | None = None,
        repo: str | None = None,
        *,
        path_prefix: str | None = None,
    ) -> list[Hit]:
        """Handlers of a route, the one Spring dispatches to first (`app.search.endpoints.endpoint`)."""
        return await endpoints.endpoint(self._reader, access, path, http_method, repo, path_prefix=path_prefix)

    async def by_annotation(
        self,
        access: Access,
        annotation: str,
        repo: str | None = None,
        limit: int = 200,
        *,
        path_prefix: str | None = None,
    ) -> list[Hit]:
        """Chunks carrying an annotation (by simple name): the first `limit` found, in file order."""
        return await sets.by_annotation(self._reader, access, annotation, repo, limit, path_prefix=path_prefix)

    async def annotated(
        self,
        access: Access,
        annotation: str,
        repo: str | None = None,
        limit: int = 200,
        *,
        path_prefix: str | None = None,
    ) -> list[Member]:
        """`by_annotation`'s members, sorted by their order fields only; `hits_of` makes the shown ones hits."""
        return await sets.annotated(self._reader, access, annotation, repo, limit, path_prefix=path_prefix)

    async def annotation_window(
        self,
        access: Access,
        annotation: str,
        repo: str | None,
        offset: int,
        shows: Callable[[Sequence[Member]], int],
        *,
        path_prefix: str | None = None,
        scan: int = sets.SET_SCAN,
    ) -> SetWindow:
        """The members of `by_annotation` from `offset` on that a page can show (`shows`: how many of some it does)."""
        return await sets.annotation_window(
            self._reader, access, annotation, repo, offset, shows, path_prefix=path_prefix, scan=scan
        )

    async def callers_window(
        self,
        access: Access,
        name: str,
        repo: str | None,
        offset: int,
        shows: Callable[[Sequence[Member]], int],
        *,
        path_prefix: str | None = None,
    ) -> SetWindow:
        """The members of `callers` from `offset` on that a page can show (`callers` for how they are found)."""
        return await sets.callers_window(self._reader, access, name, repo, offset, shows, path_prefix=path_prefix)

    async def window(
        self,
        access: Access,
        filters: Filters,
        condition: Condition | None,
        offset: int,
        shows: Callable[[Sequence[Member]], int],
        *,
        scan: int = sets.SET_SCAN,
        listing: int = sets.WINDOW_IDS,
    ) -> SetWindow:
        """The points matching the filters (and `condition`) from `offset` on that a page can show (`sets.window`)."""
        return await sets.window(self._reader, access, filters, condition, offset, shows, scan=scan, listing=listing)

    def hits_of(self, members: Sequence[Member]) -> list[Hit]:
        """These members as hits (their payloads parsed), in the same order."""
        return sets.hits_of(self._reader, members)
