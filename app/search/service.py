"""`SearchService`: the one search over the store, shared by the CLI, the REST API and MCP; a thin facade.

Every entry point takes the caller's `Access` first and reads through one `Reader` (`app.search.reader`),
whose filter holds the caller's condition inside the query. A query passes these stages, in order
(docs/architecture.md names them): `check_query` → `parse_question` (`app.search.question`, once) →
the pool (`app.search.pool`: fused candidates, named matches and a relation's answers at once) →
composed routes (`app.search.endpoints`) → rerank (`app.search.ranking`) → cross-encoder → demotion → a
declaration folded into its implementation (`app.search.fold`).
Exact lookups are `app.search.lookups` and `app.search.endpoints`, paged sets `app.search.sets`, the
repositories' catalog `app.search.catalog`, hits and citations `app.search.hits`, exact and pattern
search over the code's lines `app.search.grep`.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import time
from collections.abc import Callable
from typing import Concatenate, Generic, ParamSpec, TypeVar, overload

from app.auth.access import Access
from app.core.settings import GeneratedCode
from app.search import code, config, endpoints, lookups, pool, services, sets
from app.search.catalog import Catalog
from app.search.crossencoder import CrossEncoder
from app.search.grep import GrepLimits, GrepQuery, GrepResult, grep_code
from app.search.hits import Hit
from app.search.offload import Offload, bounded
from app.search.query_limits import check_query
from app.search.question import Question, parse_question
from app.search.reader import Reader
from app.search.scoping import Filters, ReadableLibraries, SearchScope
from app.store.embeddings import Embedder
from app.store.engines import Store
from app.store.filters import Condition

NO_FILTERS = Filters()
"""A search's default: no filter but the caller's access and the scope (`Filters` is frozen: one value serves)."""

P = ParamSpec("P")
R = TypeVar("R")


class _OnReader(Generic[P, R]):
    """A facade method that is a function of the search's `Reader`: `fn(search._reader, ...)`, typed as `fn`.

    The exact lookups and set pages are functions of a reader (`app.search.lookups`, `endpoints`, `sets`);
    `SearchService.symbol = _OnReader(lookups.symbol)` calls `lookups.symbol` with the search's reader (that of
    its scope, after `within`) and takes the same other parameters, documented where the function is.
    """

    def __init__(self, fn: Callable[Concatenate[Reader, P], R]) -> None:
        self._fn = fn
        self.__doc__ = fn.__doc__

    @overload
    def __get__(self, search: None, owner: type[SearchService]) -> _OnReader[P, R]: ...
    @overload
    def __get__(self, search: SearchService, owner: type[SearchService]) -> Callable[P, R]: ...
    def __get__(self, search: SearchService | None, owner: type[SearchService]) -> _OnReader[P, R] | Callable[P, R]:
        if search is None:
            return self
        return functools.partial(self._fn, search._reader)


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
        dense_weight: float = 1.0,
        grep_limits: GrepLimits | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.cross_encoder = cross_encoder
        self.gitlab_url = gitlab_url.rstrip("/") if gitlab_url else None
        self.max_query_chars = max_query_chars
        self.max_query_terms = max_query_terms
        self.generated_code = generated_code
        self.dense_weight = dense_weight  # the dense list's weight in the store's fusion (`app.store.fusion`)
        self.grep_limits = grep_limits or GrepLimits()
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
        check_query(query, self.max_query_chars, self.max_query_terms)

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
        """The search once its turn comes (`search.max_concurrent` at once)."""
        if self._searching is None:
            return await self._search(access, question, filters, limit)
        async with self._searching:
            return await self._search(access, question, filters, limit)

    async def _search(self, access: Access, question: str | Question, filters: Filters, limit: int) -> list[Hit]:
        if isinstance(question, str):
            question = parse_question(question)  # in place: under a millisecond within `check_query`'s caps
        rankers = pool.Rankers(
            embedder=self.embedder,
            cross_encoder=self.cross_encoder,
            generated_code=self.generated_code,
            dense_weight=self.dense_weight,
        )
        return await pool.ranked(self._reader, access, question, filters, limit, rankers)

    async def grep(self, access: Access, query: GrepQuery, *, offset: int = 0, limit: int = 20) -> GrepResult:
        """Exact and pattern search: the matching lines the caller may read, counted (`app.search.grep`).

        Raises:
            PatternError: the pattern is refused (empty, too long, not RE2, too big a program).
        """
        if self._searching is None:
            return await grep_code(self._reader, access, query, offset=offset, limit=limit, limits=self.grep_limits)
        async with self._searching:
            return await grep_code(self._reader, access, query, offset=offset, limit=limit, limits=self.grep_limits)

    async def repositories(self, access: Access, *, fresh: bool = False) -> dict[str, int]:
        """The repositories the caller may read and their chunk counts (`Catalog.repositories`)."""
        return await self._catalog.repositories(self._reader, access, fresh=fresh)

    async def knows_repository(self, access: Access, repo: str) -> bool:
        """Whether the caller may read an indexed repository `repo`, re-checked when the cache says no."""
        return await self._catalog.knows_repository(self._reader, access, repo)

    async def generated_counts(self, access: Access) -> dict[str, int]:
        """Chunks a code generator wrote, per repository the caller may read (one facet, not cached)."""
        return await self._catalog.generated_counts(self._reader, access)

    async def lookup(self, access: Access, filters: Filters, *extra: Condition, limit: int | None = None) -> list[Hit]:
        """The chunks the caller may read that match the filters and conditions, in file order (at most `limit`)."""
        return await self._reader.lookup(access, filters, *extra, limit=limit)

    async def _lookup(self, access: Access, filters: Filters, *extra: Condition, limit: int | None = None) -> list[Hit]:
        return await self._reader.lookup(access, filters, *extra, limit=limit)

    outline = _OnReader(lookups.outline)
    read_code = _OnReader(code.read_code)
    symbol = _OnReader(lookups.symbol)
    callers = _OnReader(lookups.callers)
    declaring_types = _OnReader(lookups.declaring_types)
    callers_by_type = _OnReader(lookups.callers_by_type)
    callees = _OnReader(lookups.callees)
    call_keys = _OnReader(lookups.call_keys)
    hierarchy = _OnReader(Reader.hierarchy)
    composed_routes = _OnReader(endpoints.with_composed_routes)
    injectors = _OnReader(lookups.injectors)
    dependencies = _OnReader(lookups.dependencies)
    bean_stereotypes = _OnReader(lookups.bean_stereotypes)
    implementations = _OnReader(lookups.implementations)
    endpoint = _OnReader(endpoints.endpoint)
    find_config = _OnReader(config.find_config)
    route_prefixes = _OnReader(config.route_prefixes)
    configured = _OnReader(services.configured)
    by_annotation = _OnReader(sets.by_annotation)
    annotated = _OnReader(sets.annotated)
    annotation_window = _OnReader(sets.annotation_window)
    callers_window = _OnReader(sets.callers_window)
    window = _OnReader(sets.window)
    hits_of = _OnReader(sets.hits_of)
