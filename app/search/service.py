"""The one search module: hybrid search and exact lookups, shared by the CLI, the REST API and MCP.

Every hit carries its citation from the stored metadata (never invented): repository, GitLab
project id, file, line span, qualified name, signature, commit and indexing time, and a GitLab
permalink when the GitLab URL is configured and the commit is known.

Every entry point takes the caller's `Access` first; its condition goes into the same Qdrant query
as the caller's filters (never applied afterwards), so limits, ranking and counts only see what the
caller may read, and an unreadable repository answers exactly as a nonexistent one.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import enum
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from typing_extensions import TypedDict

from app.auth.access import Access, nothing
from app.core.errors import PayloadError
from app.core.settings import GeneratedCode
from app.search.crossencoder import CrossEncoder
from app.search.hierarchy import DECLARATION_FIELDS, Declaration, Hierarchy, in_order, simple_name
from app.search.offload import Offload, bounded
from app.search.question import SCAFFOLDING, QueryTerms, Relation, expand_query, query_terms
from app.search.ranking import WINDOW, Evidence, handles, names_symbol, rerank, serves
from app.search.synonyms import synonyms
from app.store.embeddings import Embedder
from app.store.engines import Scored, Store
from app.store.filters import Condition, Filter, all_of, any_of, between, either, eq, everything
from app.store.lexical import query_vector
from app.store.payloads import FILE_ORDER, FILE_ORDER_MAX, PAYLOAD_FIELDS, StoredChunk, flagged, read_fields
from app.store.routes import application, query_keys, route_matches, specificity
from pipeline.buildfiles.model import LIBRARY_PREFIX
from pipeline.model import TYPE_SYMBOLS, Chunk, SymbolType
from pipeline.render import embedding_text, model_text
from pipeline.spring import ANY_METHOD, BEAN_ANNOTATIONS, learned_mappings, learned_stereotypes, mapping_route

A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")
R = TypeVar("R")
MAX_SCOPES_CACHED = 1024
MAX_NAMED = 8  # names and routes of one question looked up exactly
MAX_SUBJECTS = 2  # subjects of one relation question looked up
MAX_EXACT = 256  # exact matches a question adds to the pool at most
ORDER_FIELDS = ("repo_path", "file_path", "line_start", "part_index")
"""The chunk fields every exact lookup answers in the order of: repository, file, line and part."""


class SearchScope(enum.StrEnum):
    """Whose code a read covers (issue 16): the org's own (the default), the indexed libraries', or both."""

    CODE = "code"
    LIBRARIES = "libraries"
    ALL = "all"


LIBRARY_FLAG = "library"
"""The chunk flag (`app.store.payloads.FLAGS`) of a library's points."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Filters:
    """Search filters. `repo` ending in `/` is a group prefix; `path_prefix` is a folder or file.

    `generated`: None for any code, False for hand-written code only, True for generated code only.
    """

    repo: str | None = None
    path_prefix: str | None = None
    symbol_type: str | None = None
    stereotype: str | None = None
    annotation: str | None = None
    http_method: str | None = None
    generated: bool | None = None


class Citation(TypedDict):
    """The fields an agent cites (the REST and MCP answers' schemas are derived from it)."""

    repo_path: str
    file_path: str
    line_start: int
    line_end: int
    qualified_name: str
    signature: str
    project_id: int | None
    commit_sha: str | None
    indexed_at: str | None
    permalink: str | None


@dataclass(frozen=True, slots=True)
class SetWindow:
    """The members a page of a set answer shows, and how many the set has (`scanned`: at least that many)."""

    total: int
    members: list[Member]
    scanned: bool


WINDOW_READ = 32
"""Payloads a set page reads a call (`SearchService.window`): about one page of one-line entries."""

WINDOW_IDS = 4 * WINDOW_READ
"""Ids a set page lists past its offset in its first call (doubled while the page needs more): a set shorter
than that is counted by its listing, with no `count` call (0.2 ms for 32 ids, 0.35 ms for 128; docs/performance.md)."""

SET_SCAN = 500
"""How many members past `offset` a set page scans where the store has no `file_order` for some point."""


@dataclass(frozen=True, slots=True)
class Member:
    """A lookup's member: its point, its `ORDER_FIELDS` read, and its payload as stored (made a `Hit` when shown)."""

    id: str
    order: tuple[Any, ...]  # the values of ORDER_FIELDS
    payload: Mapping[str, Any] = field(repr=False)

    @property
    def repo_path(self) -> str:
        """The repository it is cited in."""
        return str(self.order[0])

    @property
    def file_path(self) -> str:
        """The file it is cited in."""
        return str(self.order[1])


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    """One result: the stored chunk it found, with its score and citation."""

    id: str
    score: float
    stored: StoredChunk = field(repr=False)
    permalink: str | None
    used_by: tuple[str, ...] = ()
    """For library code: the org's projects (readable by the caller) that use this version (`app.libraries.usage`)."""

    @property
    def chunk(self) -> Chunk:
        """The chunk as stored (metadata and code; its embedding text is not stored)."""
        return self.stored.chunk

    @property
    def code(self) -> str:
        """The chunk's source code."""
        return self.stored.chunk.code

    @property
    def repo_path(self) -> str:
        """The repository cited."""
        return self.stored.chunk.repo_path

    @property
    def file_path(self) -> str:
        """The file cited, relative to its repository."""
        return self.stored.chunk.file_path

    @property
    def line_start(self) -> int:
        """The first line cited (its Javadoc included)."""
        return self.stored.chunk.line_start

    @property
    def line_end(self) -> int:
        """The last line cited."""
        return self.stored.chunk.line_end

    @property
    def qualified_name(self) -> str:
        """The symbol cited."""
        return self.stored.chunk.qualified_name

    @property
    def signature(self) -> str:
        """Its signature as the outline shows it."""
        return self.stored.chunk.signature

    @property
    def symbol_type(self) -> SymbolType:
        """What the chunk stands for."""
        return self.stored.chunk.symbol_type

    @property
    def commit_sha(self) -> str | None:
        """The commit the chunk was read at, when known."""
        return self.stored.chunk.commit_sha

    @property
    def indexed_at(self) -> str | None:
        """When the chunk was written to the store."""
        return self.stored.keys.indexed_at

    def citation(self) -> Citation:
        """The fields an agent cites."""
        return {
            "repo_path": self.repo_path,
            "file_path": self.file_path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "qualified_name": self.qualified_name,
            "signature": self.signature,
            "project_id": self.chunk.gitlab_project_id,
            "commit_sha": self.commit_sha,
            "indexed_at": self.indexed_at,
            "permalink": self.permalink,
        }


def build_filter(
    access: Access,
    filters: Filters,
    *extra: Condition,
    scope: SearchScope | None = SearchScope.CODE,
    libraries: Collection[str] = (),
) -> Filter | None:
    """Translate the caller's access, search filters and scope to one Qdrant filter (None when nothing filters).

    Library points (the `library` flag) are third-party code: `code` leaves them out, `libraries` reads
    only them, `all` reads them besides what `access` allows. A restricted caller reads only the library
    versions in `libraries` (the `maven:` paths of the versions a project it may read uses,
    `ReadableLibraries`; none when not given); an unrestricted one reads every library (docs/security.md).
    The org's own code is filtered by `access.condition()` exactly as without a scope. `scope=None` adds
    the access condition alone (the repositories' facets, which tell library points by their path).
    """
    must: list[Condition] = list(extra)
    must_not: list[Condition] = []
    if filters.repo:
        repo = filters.repo
        must.append(any_of("repo_prefixes", [repo]) if repo.endswith("/") else eq("repo_path", repo))
    if filters.path_prefix:
        prefix = filters.path_prefix.strip("/")
        must.append(any_of("path_prefixes", [prefix, prefix + "/"]))
    if filters.symbol_type:
        must.append(eq("symbol_type", filters.symbol_type))
    if filters.stereotype:
        must.append(eq("stereotype", filters.stereotype))
    if filters.annotation:
        must.append(eq("annotation_names", annotation_name(filters.annotation)))
    if filters.http_method:
        must.append(any_of("http_method", [filters.http_method.upper(), ANY_METHOD]))
    if filters.generated is not None:  # must_not: a point written before the field existed reads as hand-written
        (must if filters.generated else must_not).append(flagged("generated"))
    _scoped(access, scope, libraries, must, must_not)
    if not must and not must_not:
        return None
    return Filter(must=must or None, must_not=must_not or None)


def _scoped(
    access: Access,
    scope: SearchScope | None,
    libraries: Collection[str],
    must: list[Condition],
    must_not: list[Condition],
) -> None:
    """Add the scope's and the access's conditions, last (embedded Qdrant checks them in order: they cost most)."""
    readable = access.condition()
    library = flagged(LIBRARY_FLAG)
    if readable is not None:  # a restricted caller: only the library versions its readable projects use
        library = all_of(library, any_of("repo_path", sorted(libraries))) if libraries else nothing()
    if scope is None:
        if readable is not None:
            must.append(readable)
    elif scope is SearchScope.LIBRARIES:
        must.append(library)
    elif scope is SearchScope.ALL:
        if readable is not None:
            must.append(either(readable, library))
    else:  # must_not: a point written before the flag existed is the org's code
        must_not.append(library)
        if readable is not None:
            must.append(readable)


def annotation_name(annotation: str) -> str:
    """`@org.springframework...Transactional(readOnly = true)` → `Transactional`."""
    return annotation.strip().lstrip("@").split("(", 1)[0].rsplit(".", 1)[-1].strip()


def _hit_text(hit: Hit) -> str:
    """What a cross-encoder reads of a hit: its header and code, as the embedding model read it (`pipeline.render`)."""
    return model_text(embedding_text(hit.chunk))


class StickyFact:
    """A fact about the store that stays true once it is (a library point seen, every point keyed).

    While false it is checked again at most every `ttl_s`; `SearchService.within` copies share it.
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


ReadableLibraries = Callable[[Access], Awaitable[frozenset[str]]]
"""The `maven:` paths of the library versions a restricted caller may read (`app.libraries.usage.readable_versions`)."""


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
        self._offload = offload or bounded(None)  # the pure stretches of a search (`app.search.offload`)
        self._readable_libraries = libraries
        self._library_paths: dict[tuple[object, ...], tuple[float, frozenset[str]]] = {}
        self.embedder = embedder
        self.cross_encoder = cross_encoder
        self.gitlab_url = gitlab_url.rstrip("/") if gitlab_url else None
        self._clock = clock
        self._repos_ttl_s = repos_ttl_s
        self.max_query_chars = max_query_chars
        self.max_query_terms = max_query_terms
        self.generated_code = generated_code
        self.scope = SearchScope.CODE
        self._repos: dict[tuple[object, ...], tuple[float, dict[str, int]]] = {}
        self._libraries = StickyFact(repos_ttl_s, clock)  # some point is a library's (shared by `within`)
        self._keyed = StickyFact(repos_ttl_s, clock)  # every point has its `file_order`
        # Searches computing at once (shared by `within`); the others wait their turn (`app.search.offload`).
        self._searching = asyncio.Semaphore(max_concurrent) if max_concurrent else None

    def within(self, scope: SearchScope) -> SearchService:
        """This search over another scope (`SearchScope`): every entry point then reads within it."""
        if scope is self.scope:
            return self
        other = copy.copy(self)  # shares the store, the clients and the repositories cache (keyed by scope)
        other.scope = scope
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

    async def search(self, access: Access, query: str, filters: Filters = Filters(), limit: int = 10) -> list[Hit]:
        """Hybrid search: Qdrant's fused candidates and the structural indexes' exact matches, reranked.

        A configured cross-encoder (`app.search.crossencoder`) then re-scores the best candidates.

        Raises:
            PayloadError: the query is over the length or word caps (`check_query`).
        """
        self.check_query(query)
        if self._searching is None:
            return await self._search(access, query, filters, limit)
        async with self._searching:
            return await self._search(access, query, filters, limit)

    async def _search(self, access: Access, query: str, filters: Filters, limit: int) -> list[Hit]:
        if self.generated_code is GeneratedCode.EXCLUDE and filters.generated is None:
            filters = dataclasses.replace(filters, generated=False)
        terms = await self._offload(lambda: query_terms(query))
        # The structural lookups need neither the query's vectors nor its candidates: they run while the embedding
        # endpoint and the engine's searches do (the store's calls release the GIL: docs/decisions.md).
        fused, named, answers = await _together(
            self._fused(access, query, terms, filters, max(limit * 4, WINDOW)),
            self._named(access, terms, filters),
            self._relation_answers(access, terms, filters),
        )
        decoded = await self._offload(lambda: [self._hit(p.id, p.score, p.payload) for p in fused])
        hits = await self._with_composed_routes(access, decoded)
        ranked = await self._offload(lambda: _reranked(terms, hits, *named, answers))
        if self.cross_encoder is not None:
            ranked = await self.cross_encoder.reordered(query, ranked, _hit_text)
        return await self._offload(lambda: self._demoted(ranked, terms.identifiers)[:limit])

    def _demoted(self, ranked: list[Hit], named: Sequence[str]) -> list[Hit]:
        """Generated hits after every hand-written one, each group in rank order (`generated_code=demote`).

        A generated symbol the question names (`PmsProductMapper`, `CmsHelpExample.or`) is what was
        asked for: it keeps its rank.
        """
        if self.generated_code is not GeneratedCode.DEMOTE:
            return ranked
        return sorted(ranked, key=lambda h: h.chunk.generated and not any(names_symbol(i, h.chunk) for i in named))

    async def _fused(self, access: Access, query: str, terms: QueryTerms, filters: Filters, limit: int) -> list[Scored]:
        """The engine's fused candidates for the query's lexical and dense vectors (none without either)."""
        sparse = await self._offload(
            lambda: query_vector(expand_query(query, terms), synonyms(sorted(terms.words - SCAFFOLDING)))
        )
        lexical = sparse if sparse.indices else None
        dense = await self.embedder.embed_query(query) if self.embedder is not None and query.strip() else None
        if lexical is None and dense is None:
            return []
        where = await self._where(access, filters)
        return await self.store.query(lexical=lexical, dense=dense, where=where, limit=limit)

    async def _named(self, access: Access, terms: QueryTerms, filters: Filters) -> tuple[list[Hit], list[Hit]]:
        """Handlers of the question's routes and the symbols it names (not a relation's subject), in one scroll."""
        names = [i for i in terms.identifiers if i not in terms.subjects][:MAX_NAMED]
        routes = terms.routes[:MAX_NAMED]
        conditions: list[Condition] = []
        if names:
            conditions.append(any_of("name", sorted({n.rsplit(".", 1)[-1] for n in names})))
        if routes:
            keys = sorted({k for r in routes for k in query_keys(r)})
            conditions += [any_of("http_keys", keys), any_of("mapping_keys", keys)]
        if not conditions:
            return [], []
        found = await self._with_composed_routes(
            access, await self._lookup(access, filters, either(*conditions), limit=MAX_EXACT)
        )
        by_route = [h for h in found if any(serves(terms, r, h.chunk) for r in routes)]
        by_name = [h for h in found if any(names_symbol(n, h.chunk) for n in names)]
        return by_route, by_name

    async def _relation_answers(self, access: Access, terms: QueryTerms, filters: Filters) -> list[Hit]:
        """The exact answers of a relation question (who calls / injects / implements X, what X calls or receives)."""
        if terms.relation is None:
            return []
        found: dict[str, Hit] = {}
        subjects = terms.subjects[:MAX_SUBJECTS]
        for subject in subjects:
            found.update((h.id, h) for h in await self._related(access, terms.relation, subject, filters))
        relation = terms.relation
        return await self._offload(
            lambda: [h for h in found.values() if _passes(h, filters) and not _is_subject(relation, subjects, h.chunk)]
        )

    async def _related(self, access: Access, relation: Relation, subject: str, filters: Filters) -> list[Hit]:
        if relation is Relation.CALLERS:
            return await self.callers(access, subject, filters.repo, path_prefix=filters.path_prefix)
        if relation is Relation.INJECTORS:
            return await self.injectors(access, subject, filters.repo, path_prefix=filters.path_prefix)
        if relation is Relation.IMPLEMENTATIONS:
            return await self.implementations(access, subject, filters.repo, path_prefix=filters.path_prefix)
        if relation is Relation.CALLEES:
            return [target for _, targets in await self.callees(access, subject, filters.repo) for target in targets]
        # What the subject receives (learned stereotypes included) or extends: the types it names.
        if relation is Relation.DEPENDENCIES:
            named = {n.rsplit(".", 1)[-1] for n in await self.dependencies(access, subject, filters.repo)}
        else:
            named = {
                n.rsplit(".", 1)[-1]
                for hit in await self.symbol(access, subject, filters.repo)
                for n in (*hit.chunk.extends, *hit.chunk.implements)
            }
        if not named:
            return []
        hits = await self._lookup(access, filters, any_of("name", sorted(named)))
        return [h for h in hits if h.symbol_type in TYPE_SYMBOLS]

    async def symbol(
        self, access: Access, name: str, repo: str | None = None, *, path_prefix: str | None = None
    ) -> list[Hit]:
        """A method or type by qualified or simple name (`com.x.A.m`, `A.m`, `m`, `A`, `m(Long)`); all overloads.

        Every lookup takes `repo` and `path_prefix` (a folder, e.g. a Maven module, or a file) as
        `Filters` does; both go into the store query.
        """
        base, params = _split_params(name)
        simple = base.rsplit(".", 1)[-1]
        qualified = base if "." in base and base[:1].islower() else None
        condition = eq("qualified_name", qualified) if qualified else eq("name", simple)
        hits = await self._lookup(access, Filters(repo=repo, path_prefix=path_prefix), condition)
        if "." in base and not qualified:
            hits = [h for h in hits if h.qualified_name.endswith("." + base)]
        if params is not None:
            hits = [h for h in hits if _params_match(h.chunk.parameter_types, params)]
        return hits

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
        return self.hits_of(await self.annotated(access, annotation, repo, limit, path_prefix=path_prefix))

    async def annotated(
        self,
        access: Access,
        annotation: str,
        repo: str | None = None,
        limit: int = 200,
        *,
        path_prefix: str | None = None,
    ) -> list[Member]:
        """`by_annotation`'s members, sorted by their order fields only; `hits_of` makes the shown ones hits.

        The scroll stops at `limit`: `@Override` alone marks 10,785 chunks of two JDK modules, and a page
        of an answer shows a few dozen of them. Edge reads a point's whole payload whichever fields are
        asked for (docs/performance.md), so the payloads come in one read; only the shown ones are parsed.
        """
        filters = Filters(repo=repo, path_prefix=path_prefix, annotation=annotation)
        return await self._scanned(await self._where(access, filters) or everything(), limit)

    async def _scanned(self, where: Filter, limit: int) -> list[Member]:
        """The first `limit` points found matching `where`, as members sorted by their order fields."""
        records = await _collected(self.store.scroll(where, True, page=min(limit, 1024)), limit)

        def members() -> list[Member]:
            found = [Member(str(r.id), read_fields(r.payload or {}, ORDER_FIELDS), r.payload or {}) for r in records]
            found.sort(key=lambda m: m.order)  # stable: as `_in_file_order` sorts the same members' hits
            return found

        return await self._offload(members)

    async def annotation_window(
        self,
        access: Access,
        annotation: str,
        repo: str | None,
        offset: int,
        shows: Callable[[Sequence[Member]], int],
        *,
        path_prefix: str | None = None,
        scan: int = SET_SCAN,
    ) -> SetWindow:
        """The members of `by_annotation` from `offset` on that a page can show (`shows`: how many of some it does)."""
        filters = Filters(repo=repo, path_prefix=path_prefix, annotation=annotation)
        return await self.window(access, filters, None, offset, shows, scan=scan)

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
        condition = await self._callers_condition(access, name, repo)
        if condition is None:
            return SetWindow(0, [], scanned=False)
        return await self.window(access, Filters(repo=repo, path_prefix=path_prefix), condition, offset, shows)

    async def window(
        self,
        access: Access,
        filters: Filters,
        condition: Condition | None,
        offset: int,
        shows: Callable[[Sequence[Member]], int],
        *,
        scan: int = SET_SCAN,
        listing: int = WINDOW_IDS,
    ) -> SetWindow:
        """The points matching the filters (and `condition`) from `offset` on that a page can show, and their number.

        Paged by `file_order`'s range index: the members' ids come in order without a payload read (`listing`
        past the offset, doubled while the page needs more; when fewer come, they are the set and tell its size,
        else one `count` does), and only the window's payloads are read, `WINDOW_READ` at a time, until the page
        is full. Where some point has no `file_order` (written before it existed), the first `offset + scan`
        found are sorted instead and the answer says the scan stopped (docs/decisions.md).
        """
        extra = () if condition is None else (condition,)
        where = await self._where(access, filters, *extra) or everything()
        if not await self._all_keyed():
            members = await self._scanned(where, offset + scan)
            rest = members[offset:]
            return SetWindow(len(members), rest[: shows(rest)], scanned=len(members) >= offset + scan)
        asked = offset + listing
        listed = await self.store.ordered_ids(where, FILE_ORDER, asked)
        read = 0
        found: list[Member] = []
        while not found or shows(found) == len(found):  # the page could show more than it has
            if offset + read >= len(listed):
                if len(listed) < asked:  # the set ends here (or before the offset)
                    break
                asked = offset + 2 * (asked - offset)
                listed = await self.store.ordered_ids(where, FILE_ORDER, asked)
                if len(listed) <= offset + read:
                    break
            batch = listed[offset + read : offset + read + WINDOW_READ]
            read += len(batch)
            found += await self._members(batch)
        total = len(listed) if len(listed) < asked else await self.store.count(where)  # a short listing is the set
        return SetWindow(total, found[: shows(found)], scanned=False)

    async def _members(self, ids: Sequence[str]) -> list[Member]:
        """These points as members, in this order (a point deleted since its id was read is left out)."""
        found = {str(r.id): r.payload or {} for r in await self.store.retrieve(ids, PAYLOAD_FIELDS)}
        return [Member(i, read_fields(found[i], ORDER_FIELDS), found[i]) for i in ids if i in found]

    def hits_of(self, members: Sequence[Member]) -> list[Hit]:
        """These members as hits (their payloads parsed), in the same order."""
        return [self._hit(m.id, 1.0, m.payload) for m in members]

    async def callers(
        self, access: Access, name: str, repo: str | None = None, *, path_prefix: str | None = None
    ) -> list[Hit]:
        """Chunks whose body calls the named method (matched on `calls_fq`, else on `Type.method`).

        Through the type hierarchy: a call recorded under a subtype that inherits the method, or
        under a supertype whose declaration it overrides (`Iface.m` for `Impl.m`), counts too.
        `path_prefix` narrows the callers, not the method: its declaring types are looked up in all of `repo`.
        """
        condition = await self._callers_condition(access, name, repo)
        if condition is None:
            return []
        return await self._lookup(access, Filters(repo=repo, path_prefix=path_prefix), condition)

    async def _callers_condition(self, access: Access, name: str, repo: str | None) -> Condition | None:
        """What a caller of the named method matches (None: nothing can): its call keys, hierarchy included."""
        keys_fq, keys = await self._call_keys(access, name, repo)
        conditions: list[Condition] = []
        if keys_fq:
            conditions.append(any_of("calls_fq", keys_fq))
        if keys:
            conditions.append(any_of("calls", keys))
        return either(*conditions) if conditions else None

    async def callees(
        self, access: Access, name: str, repo: str | None = None, *, path_prefix: str | None = None
    ) -> list[tuple[str, list[Hit]]]:
        """What the named method calls: each call as written, with the indexed symbols it resolves to.

        `path_prefix` picks which method is meant; the called symbols are looked up in all of `repo`.

        Every call is resolved from a few lookups in all (by qualified name where the caller's imports
        made it exact, else by method name), not one per call: each lookup is a scan in embedded mode.
        A call on a type that inherits the method resolves to the nearest supertype declaring it
        (`child.isActive()` → `Base.isActive`), walked a level per lookup (app.search.hierarchy).
        """
        # (call as written, its method name or None when it cannot resolve, exact qualified names it may be)
        calls: list[tuple[str, str | None, list[str]]] = []
        for hit in await self.symbol(access, name, repo, path_prefix=path_prefix):
            fq = set(hit.chunk.calls_fq)
            for call in hit.chunk.calls:
                method = _method_of(call)
                calls.append(
                    (call, method, sorted(f for f in fq if f.endswith("." + call)) if method is not None else [])
                )
        exact_names = sorted({f for _, _, exact in calls for f in exact})
        methods = sorted({method for _, method, exact in calls if method is not None and not exact})
        scope = Filters(repo=repo)
        by_fq = await self._lookup(access, scope, any_of("qualified_name", exact_names)) if exact_names else []
        by_name = await self._lookup(access, scope, any_of("name", methods)) if methods else []
        resolved: dict[str, list[Hit]] = {}
        for call, method, exact in calls:
            if method is None:
                targets = []
            elif exact:
                targets = [h for h in by_fq if h.qualified_name in exact]
            else:
                targets = [h for h in by_name if h.chunk.name == method and h.qualified_name.endswith("." + call)]
            resolved[call] = targets
        inherited = await self._inherited_targets(
            access, repo, [(call, method, exact) for call, method, exact in calls if method and not resolved[call]]
        )
        return [(call, resolved[call] or inherited.get(call, [])) for call, _, _ in calls]

    async def _inherited_targets(
        self, access: Access, repo: str | None, calls: Sequence[tuple[str, str | None, list[str]]]
    ) -> dict[str, list[Hit]]:
        """Calls that name no declaration resolved to the nearest supertype of their receiver declaring the method."""
        if not calls:
            return {}
        hierarchy = self._hierarchy(access, repo)
        # The receiver's fully qualified types: from the exact name, else the indexed types of that simple name.
        receivers: dict[str, set[str]] = {}
        loose = sorted({call.rsplit(".", 1)[0] for call, _, exact in calls if not exact})
        by_simple: dict[str, set[str]] = {}
        if loose:
            for chunk in await hierarchy.types(any_of("name", sorted({simple_name(r) for r in loose}))):
                by_simple.setdefault(chunk.name, set()).add(chunk.qualified_name)
        for call, _, exact in calls:
            owner = call.rsplit(".", 1)[0]
            receivers[call] = (
                {e.rsplit(".", 1)[0] for e in exact}
                if exact
                else {fq for fq in by_simple.get(simple_name(owner), ()) if fq.endswith("." + owner) or fq == owner}
            )
        parents = await hierarchy.ancestors({fq for fqs in receivers.values() for fq in fqs})
        wanted = {
            f"{ancestor}.{method}"
            for call, method, _ in calls
            for fq in receivers[call]
            for ancestor in in_order(fq, parents)
        }
        found: dict[str, list[Hit]] = {}
        if wanted:
            for hit in await self._lookup(access, Filters(repo=repo), any_of("qualified_name", sorted(wanted))):
                if hit.symbol_type not in TYPE_SYMBOLS:
                    found.setdefault(hit.qualified_name, []).append(hit)
        out: dict[str, list[Hit]] = {}
        for call, method, _ in calls:
            targets: list[Hit] = []
            for fq in sorted(receivers[call]):
                nearest = next((found[f"{a}.{method}"] for a in in_order(fq, parents) if f"{a}.{method}" in found), [])
                targets.extend(nearest)
            out[call] = targets
        return out

    async def injectors(
        self, access: Access, type_name: str, repo: str | None = None, *, path_prefix: str | None = None
    ) -> list[Hit]:
        """Types (and their constructors, setters, @Bean methods) that receive the named type by injection.

        Beans of a stereotype learned from the index (`bean_stereotypes`) count too: their
        constructor's `injects_if_bean`, recorded because the file alone could not tell.
        """
        condition = _type_condition("injects", type_name)
        scope = Filters(repo=repo, path_prefix=path_prefix)
        learned = await self.bean_stereotypes(access)
        if not learned:
            return await self._lookup(access, scope, condition)
        if_bean = _type_condition("injects_if_bean", type_name)
        hits = await self._lookup(
            access, scope, either(condition, all_of(if_bean, any_of("annotation_names", sorted(learned))))
        )
        # A constructor's chunk carries its own annotations, not its class's: found by its class.
        beans = sorted({h.qualified_name for h in hits if h.symbol_type in TYPE_SYMBOLS and h.chunk.injects_if_bean})
        if beans:
            seen = {h.id for h in hits}
            members = await self._lookup(access, scope, all_of(if_bean, any_of("enclosing_type", beans)))
            hits = _in_file_order([*hits, *(h for h in members if h.id not in seen)])
        return hits

    async def dependencies(self, access: Access, type_name: str, repo: str | None = None) -> list[str]:
        """What the named type receives by injection (the inverse of `injectors`), learned stereotypes included."""
        types = [h.chunk for h in await self.symbol(access, type_name, repo) if h.symbol_type in TYPE_SYMBOLS]
        learned = await self.bean_stereotypes(access) if any(c.injects_if_bean for c in types) else frozenset()
        found: dict[str, None] = {}
        for chunk in types:
            found.update(dict.fromkeys(chunk.injects))
            if learned.intersection(chunk.annotation_names):
                found.update(dict.fromkeys(chunk.injects_if_bean))
        return sorted(found)

    async def bean_stereotypes(self, access: Access) -> frozenset[str]:
        """Annotation types declared anywhere the caller may read that make a class a bean (one lookup).

        Learned across repositories: an organization's `@UseCase` may be declared in a shared library's
        project. The frameworks' own stereotypes are known at index time (`pipeline.spring.STEREOTYPES`).
        """
        declared = await self._annotation_types(access)
        learned = learned_stereotypes({h.chunk.name: h.chunk.annotation_names for h in declared})
        return learned - BEAN_ANNOTATIONS

    async def _annotation_types(self, access: Access) -> list[Hit]:
        """Every annotation type the caller may read (one lookup): what stereotypes and mappings are learned from."""
        return await self._lookup(access, Filters(symbol_type=SymbolType.ANNOTATION))

    async def _with_composed_routes(self, access: Access, hits: list[Hit]) -> list[Hit]:
        """The hits, each handler's `routes_if_mapping` made its routes where the annotation is a composed mapping.

        The mappings are learned from the annotation types the caller may read (`pipeline.spring.learned_mappings`),
        across repositories, in one lookup made only when some hit has such routes.
        """
        if not any(h.chunk.routes_if_mapping and not h.chunk.http_path for h in hits):
            return hits
        declared = await self._annotation_types(access)
        learned = learned_mappings({h.chunk.name: (h.chunk.annotation_names, h.chunk.maps_http) for h in declared})
        return [_routed(h, learned) for h in hits]

    async def implementations(
        self, access: Access, type_name: str, repo: str | None = None, *, path_prefix: str | None = None
    ) -> list[Hit]:
        """Types that implement or extend the named type."""
        should = [_type_condition(key, type_name) for key in ("implements", "extends")]
        hits = await self._lookup(access, Filters(repo=repo, path_prefix=path_prefix), either(*should))
        return [h for h in hits if h.symbol_type in TYPE_SYMBOLS]

    async def endpoint(
        self,
        access: Access,
        path: str,
        http_method: str | None = None,
        repo: str | None = None,
        *,
        path_prefix: str | None = None,
    ) -> list[Hit]:
        """Handlers of a route; `/owners/42/pets/new` finds `/owners/{ownerId}/pets/new`."""
        keys = query_keys(path)
        found = await self._lookup(
            access,
            Filters(repo=repo, path_prefix=path_prefix),
            either(any_of("http_keys", keys), any_of("mapping_keys", keys)),
        )
        verbs = [http_method.upper()] if http_method else []
        scored = []
        for hit in await self._with_composed_routes(access, found):
            if not handles(verbs, hit.chunk):
                continue  # the verb is checked here: a composed mapping's is known only after `_with_composed_routes`
            matching = [p for p in hit.chunk.http_path if route_matches(p, path)]
            if matching:
                scored.append((min(specificity(p) for p in matching), hit))
        # The handler Spring dispatches to (the most specific pattern) comes first; stable otherwise.
        scored.sort(key=lambda pair: pair[0])
        return dispatched(scored)

    async def repositories(self, access: Access, *, fresh: bool = False) -> dict[str, int]:
        """The repositories the caller may read and their chunk counts, cached per access scope for a few seconds.

        Every MCP tool checks its `repo` argument against this list; a facet over every point costs
        0.7 s in embedded mode at 100k chunks, so it is not recomputed on every call. The facet runs
        with the caller's condition, so the counts are exact for that caller; `fresh=True` skips the
        cache (a repository missing from a cached answer may have been synced since).
        """
        now = self._clock()
        key = (*access.scope_key, self.scope)
        cached = self._repos.get(key)
        if not fresh and cached is not None and now - cached[0] < self._repos_ttl_s:
            return cached[1]
        counts = await self._counts(access, Filters())
        if len(self._repos) >= MAX_SCOPES_CACHED:
            self._repos.clear()
        self._repos[key] = (now, counts)
        return counts

    async def generated_counts(self, access: Access) -> dict[str, int]:
        """Chunks a code generator wrote, per repository the caller may read (one facet, not cached)."""
        return await self._counts(access, Filters(generated=True))

    async def _where(self, access: Access, filters: Filters, *extra: Condition) -> Filter | None:
        """`build_filter` within this search's scope, with the library versions the caller may read."""
        scope = await self._read_scope()
        return build_filter(access, filters, *extra, scope=scope, libraries=await self._libraries_of(access, scope))

    async def _libraries_of(self, access: Access, scope: SearchScope | None) -> frozenset[str]:
        """The library versions a restricted caller may read, when the scope reads libraries (cached per access scope).

        Cached like `repositories`, for `repos_ttl_s`: a dependency a readable project adds shows its
        library within that time. Nothing is asked for the `code` scope or an unrestricted caller.
        """
        if access.unrestricted or scope not in (SearchScope.LIBRARIES, SearchScope.ALL):
            return frozenset()
        if self._readable_libraries is None:
            return frozenset()
        now, key = self._clock(), access.scope_key
        cached = self._library_paths.get(key)
        if cached is not None and now - cached[0] < self._repos_ttl_s:
            return cached[1]
        paths = await self._readable_libraries(access)
        if len(self._library_paths) >= MAX_SCOPES_CACHED:
            self._library_paths.clear()
        self._library_paths[key] = (now, paths)
        return paths

    async def _read_scope(self) -> SearchScope | None:
        """The scope's condition, or None while the store holds no library point and the scope is `code`.

        Without libraries, `code` needs no condition, and a read keeps the query it had before scopes
        (the same plan, the same scores to the last digit). Absence is re-checked every `repos_ttl_s`; a
        library seen once is taken as there for good (its `must_not` is harmless if it goes).
        """
        if self.scope is not SearchScope.CODE:
            return self.scope

        async def present() -> bool:
            return await self.store.count(where=all_of(flagged(LIBRARY_FLAG))) > 0

        return self.scope if await self._libraries.holds(present) else None

    async def _all_keyed(self) -> bool:
        """Whether every point has its `file_order` (a store written before it: not until rewritten)."""

        async def keyed() -> bool:
            return await self.store.count(all_of(none_of=[between(FILE_ORDER, 0, FILE_ORDER_MAX)])) == 0

        return await self._keyed.holds(keyed)

    async def _counts(self, access: Access, filters: Filters) -> dict[str, int]:
        """Points per repository within the scope: the org's under the access condition alone, libraries apart.

        A library's points are exactly those under a `maven:` path: the org's counts are the facet the
        access condition gave before scopes existed, less those paths, so the default scope adds no
        condition to it (on Edge, a facet under any filter over more than `FACET_MAX_VALUES` repositories
        is a scroll of every matching point; docs/performance.md). Libraries are counted under their flag.
        """
        counts: dict[str, int] = {}
        if self.scope is not SearchScope.LIBRARIES:
            found = await self.store.counts_by("repo_path", where=build_filter(access, filters, scope=None))
            counts |= {path: n for path, n in found.items() if not path.startswith(LIBRARY_PREFIX)}
        if self.scope is not SearchScope.CODE:
            libraries = await self._libraries_of(access, SearchScope.LIBRARIES)
            where = build_filter(access, filters, scope=SearchScope.LIBRARIES, libraries=libraries)
            counts |= await self.store.counts_by("repo_path", where=where)
        return counts

    async def knows_repository(self, access: Access, repo: str) -> bool:
        """Whether the caller may read an indexed repository `repo`, re-checked when the cache says no."""
        return repo in await self.repositories(access) or repo in await self.repositories(access, fresh=True)

    async def outline(self, access: Access, repo: str, file_path: str) -> list[Hit]:
        """Every chunk of one file in line order."""
        return await self._lookup(access, Filters(repo=repo), eq("file_path", file_path.strip("/")))

    async def lookup(self, access: Access, filters: Filters, *extra: Condition) -> list[Hit]:
        """The chunks the caller may read that match the filters and conditions, in file order (exact lookups)."""
        return await self._lookup(access, filters, *extra)

    async def _lookup(self, access: Access, filters: Filters, *extra: Condition, limit: int | None = None) -> list[Hit]:
        where = await self._where(access, filters, *extra) or everything()
        records = await _collected(self.store.scroll(where, True, page=min(limit or 1024, 1024)), limit)
        return await self._offload(lambda: _in_file_order([self._hit(r.id, 1.0, r.payload) for r in records]))

    async def _call_keys(self, access: Access, name: str, repo: str | None) -> tuple[list[str], list[str]]:
        """The `calls_fq` and `calls` keys a call of the named method may be recorded under (hierarchy included)."""
        base, _ = _split_params(name)
        owner, _, method = base.rpartition(".")
        hierarchy = self._hierarchy(access, repo)
        if owner and base[:1].islower():  # `com.acme.Base.isActive`: the owner is known
            owners = {owner}
        elif owner:  # `Base.isActive`: the indexed types named Base, declaring the method or inheriting it
            named = await hierarchy.types(eq("name", simple_name(owner)))
            owners = {
                c.qualified_name for c in named if c.qualified_name == owner or c.qualified_name.endswith("." + owner)
            } or await hierarchy.named_supertypes(owner)  # else a library type that indexed types extend
        else:  # `isActive`: the types that declare it
            targets = await self.symbol(access, base, repo)
            owners = {h.chunk.enclosing_type or "" for h in targets if h.symbol_type not in TYPE_SYMBOLS} - {""}
        if not owners:
            return [], [base] if owner else []  # a type the index does not know: the call as written
        related = await hierarchy.dispatch_owners(owners, method)
        keys_fq = sorted(f"{fq}.{method}" for fq in related)
        keys = sorted(
            {f"{simple_name(fq)}.{method}" for fq in related} | ({base} if owner and not owner[:1].islower() else set())
        )
        return keys_fq, keys

    def _hierarchy(self, access: Access, repo: str | None) -> Hierarchy:
        async def lookup(condition: Condition) -> list[Declaration]:
            # Only the walk's fields are converted: types' payloads are the largest (a callers lookup of `size`
            # read 2,900 of them whole at 109k chunks).
            where = await self._where(access, Filters(repo=repo), condition)
            records = await _collected(self.store.scroll(where or everything(), DECLARATION_FIELDS), None)
            return await self._offload(
                lambda: [Declaration(*read_fields(r.payload or {}, DECLARATION_FIELDS)) for r in records]
            )

        return Hierarchy(lookup)

    def _hit(self, point_id: Any, score: float, payload: Mapping[str, Any] | None) -> Hit:
        stored = StoredChunk.from_payload(payload or {})
        c = stored.chunk
        link = None
        if self.gitlab_url and c.commit_sha:
            link = f"{self.gitlab_url}/{c.repo_path}/-/blob/{c.commit_sha}/{c.file_path}#L{c.line_start}-{c.line_end}"
        return Hit(id=str(point_id), score=score, stored=stored, permalink=link)


async def _collected(records: AsyncIterator[R], limit: int | None) -> list[R]:
    """The first `limit` records of a scroll (all without one): read on the loop, decoded off it."""
    found: list[R] = []
    async for record in records:
        found.append(record)
        if limit is not None and len(found) >= limit:
            break
    return found


def _reranked(
    terms: QueryTerms, hits: list[Hit], routes: Sequence[Hit], symbols: Sequence[Hit], answers: Sequence[Hit]
) -> list[Hit]:
    """The fused candidates and the exact matches, in reranked order (pure: run off the event loop)."""
    pool, evidence = _with_exact(terms, hits, routes, symbols, answers)
    return [pool[i] for i in rerank(terms, [h.chunk for h in pool], evidence, fused=len(hits))]


def _with_exact(
    terms: QueryTerms, hits: list[Hit], routes: Sequence[Hit], symbols: Sequence[Hit], answers: Sequence[Hit]
) -> tuple[list[Hit], Evidence]:
    """The candidates plus the exact matches of the structural indexes, and where those sit in the pool.

    The matches come from at most one scroll for the routes and symbols the question names (filters and
    access inside the query) and the lookups of one relation, however many names the question holds.
    """
    pool = list(hits)
    position = {h.id: i for i, h in enumerate(pool)}

    def place(found: Sequence[Hit]) -> list[int]:
        for hit in found:
            if hit.id not in position:
                position[hit.id] = len(pool)
                pool.append(hit)
        return sorted(dict.fromkeys(position[h.id] for h in found))

    # Candidates Qdrant ranked keep its order; the others follow in the structural order.
    by_route = place(routes)
    by_route.sort(key=lambda i: (_route_rank(terms, pool[i].chunk), i))
    return pool, Evidence(routes=by_route, symbols=place(symbols), relation=place(answers))


async def _together(first: Awaitable[A], second: Awaitable[B], third: Awaitable[C]) -> tuple[A, B, C]:
    """Three independent reads at once; every one runs to its end, then the first failure (in this order) is raised."""
    done = await asyncio.gather(first, second, third, return_exceptions=True)
    for outcome in done:
        if isinstance(outcome, BaseException):
            raise outcome
    return cast(tuple[A, B, C], tuple(done))


def _routed(hit: Hit, learned: Mapping[str, tuple[str, ...]]) -> Hit:
    """The hit with the routes of its `routes_if_mapping` whose annotation is a learned mapping (as it is without)."""
    chunk = hit.chunk
    verbs: dict[str, None] = {}
    paths: dict[str, None] = {}
    for entry in () if chunk.http_path else chunk.routes_if_mapping:
        name, path = mapping_route(entry)
        if name in learned:
            verbs.update(dict.fromkeys(learned[name]))
            paths[path] = None
    if not paths:
        return hit
    routed = dataclasses.replace(chunk, http_method=tuple(verbs), http_path=tuple(paths))
    return dataclasses.replace(hit, stored=dataclasses.replace(hit.stored, chunk=routed))


def dispatched(scored: Sequence[tuple[tuple[int, int, int], Hit]]) -> list[Hit]:
    """Of route matches (specificity, hit), most specific first, those an application would dispatch to.

    Within one application (repository and build module), HTTP method and stereotype, Spring serves a
    path by its most specific pattern only: `/order/list` shadows `/order/{id}` there. Other
    applications (another microservice) and Feign clients (a stereotype of their own) keep their matches.
    """
    best: dict[tuple[str, str, tuple[str, ...], str | None], tuple[int, int, int]] = {}
    kept = []
    for rank, hit in scored:
        c = hit.chunk
        where = (c.repo_path, application(c.file_path), tuple(sorted(c.http_method)), c.stereotype)
        if best.setdefault(where, rank) == rank:
            kept.append(hit)
    return kept


def _in_file_order(hits: list[Hit]) -> list[Hit]:
    """Hits by repository, file, line and part: the order every exact lookup answers in."""
    hits.sort(key=lambda h: tuple(getattr(h.chunk, name) for name in ORDER_FIELDS))
    return hits


def _passes(hit: Hit, filters: Filters) -> bool:
    """Whether a hit found by an exact lookup also satisfies the search's other filters."""
    chunk = hit.chunk
    checks = (
        (filters.path_prefix, lambda v: _in_folder(hit.file_path, v.strip("/"))),
        (filters.symbol_type, lambda v: hit.symbol_type == v),
        (filters.stereotype, lambda v: chunk.stereotype == v),
        (filters.annotation, lambda v: annotation_name(v) in chunk.annotation_names),
        (filters.http_method, lambda v: handles([v.upper()], chunk)),
    )
    wanted = filters.generated
    return all(check(value) for value, check in checks if value) and wanted in (None, chunk.generated)


def _is_subject(relation: Relation, subjects: Sequence[str], chunk: Chunk) -> bool:
    """Whether a relation answer is the question's subject itself, which is what it asks about, not an answer.

    A caller is, when it calls its own name (recursion, an overload delegating to another); a caller of
    the same name in another type is an answer. For the other relations, a chunk the subject names.
    """
    if relation is Relation.CALLERS:
        own = f"{(chunk.enclosing_type or '').rsplit('.', 1)[-1]}.{chunk.name}"
        return own in chunk.calls or f"{chunk.enclosing_type}.{chunk.name}" in chunk.calls_fq
    return any(names_symbol(s, chunk) for s in subjects)


def _route_rank(terms: QueryTerms, chunk: Chunk) -> tuple[int, int, int]:
    """How specifically the chunk's best pattern matches a route of the question (Spring's order)."""
    matching = [p for p in chunk.http_path for r in terms.routes if route_matches(p, r)]
    return min(map(specificity, matching), default=(1 << 30, 0, 0))


def _method_of(call: str) -> str | None:
    """The method of `Type.method`; None for an unqualified or chained call, which resolves to nothing."""
    owner, _, method = call.rpartition(".")
    return None if not owner or "(" in owner else method


def _in_folder(file_path: str, prefix: str) -> bool:
    """The same rule as the `path_prefixes` filter: the file itself, or a whole folder above it."""
    return file_path == prefix or file_path.startswith(prefix + "/")


def _type_condition(key: str, type_name: str) -> Filter:
    """Match a type by simple name on `key` or by fully qualified name on `key_fq`."""
    base = type_name.strip()
    if "." in base and base[:1].islower():
        return either(eq(f"{key}_fq", base), eq(key, base.rsplit(".", 1)[-1]))
    return either(eq(key, base))


def _split_params(name: str) -> tuple[str, list[str] | None]:
    base, paren, rest = name.strip().partition("(")
    if not paren:
        return base, None
    inner = rest.rstrip(")").strip()
    return base, [p.strip() for p in inner.split(",")] if inner else []


def _params_match(declared: Sequence[str], wanted: Sequence[str]) -> bool:
    if len(declared) != len(wanted):
        return False
    # A parameter may be given with or without type arguments or names: `List<OwnerDto> dtos` ~ `List`.
    return all(
        d.split("<", 1)[0].strip() == w.split(" ", 1)[0].split("<", 1)[0].strip()
        for d, w in zip(declared, wanted, strict=True)
    )
