"""SearchService over the `shop` fixture, indexed once per module in lexical-only and in hybrid mode.

The fixture is indexed twice, as `acme/shop` (with a commit, so hits get permalinks) and as
`other/shop` (without one), plus a tiny `extra/health` repository holding a route that serves every
HTTP method. Expected answers come from `tests/fixtures/java/shop/FIXTURE.md`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal, cast

import httpx
import pytest
import pytest_asyncio
from qdrant_client import AsyncQdrantClient

from app.auth.access import LOCAL
from app.core.settings import EmbeddingSettings
from app.search import sets as service
from app.search.hits import Hit, Member
from app.search.scoping import EVERYWHERE, Filters, Where
from app.search.service import SearchService
from app.store.embeddings import OpenAIEmbedder
from app.store.indexing import Indexer
from app.store.payloads import file_order
from app.store.vectors import IndexModel, VectorStore
from app.sync.localfs import chunk_local_files, iter_sources
from pipeline.chunking import chunk_source
from pipeline.model import Chunk, ChunkerConfig, SourceContext
from pipeline.scope import Scope
from testkit.fake_embedder import FakeEmbeddingServer
from testkit.standins import Method, around
from tests.support.java_fixtures import SHOP_DIR
from tests.support.shop import CORE, CORE_SRC, JOBS, short

Mode = Literal["lexical", "hybrid"]

ACME: Final = "acme/shop"
IN_ACME: Final = Where(repo=ACME)
OTHER: Final = "other/shop"
EXTRA: Final = "extra/health"
SHA: Final = "0123456789abcdef0123456789abcdef01234567"
GITLAB: Final = "https://gitlab.example.com"
INDEXED_AT: Final = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)
DIM: Final = 64

OWNER_SERVICE_PATH: Final = f"{CORE_SRC}/core/service/OwnerService.java"
HEALTH_PATH: Final = "src/main/java/demo/health/HealthController.java"
HEALTH = """\
package demo.health;

import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
public class HealthController {
    @RequestMapping("/health/ping")
    public String ping() {
        return "pong";
    }
}
"""


pytestmark = pytest.mark.asyncio(loop_scope="module")  # every test shares the module's index and event loop


@dataclass(frozen=True, slots=True, kw_only=True)
class Indexed:
    """The indexed fixture in one mode."""

    mode: Mode
    search: SearchService
    store: VectorStore
    server: FakeEmbeddingServer | None
    chunks: dict[str, Chunk]  # id -> chunk, of every repository


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["lexical", "hybrid"])
async def indexed(request: pytest.FixtureRequest) -> AsyncIterator[Indexed]:
    mode = cast(Mode, request.param)
    config = ChunkerConfig()
    files = list(iter_sources(SHOP_DIR, Scope.from_config(config)))
    with ExitStack() as stack:
        server = stack.enter_context(FakeEmbeddingServer(dim=DIM)) if mode == "hybrid" else None
        async with httpx.AsyncClient() as http:
            embedder = None
            if server is not None:
                embedder = OpenAIEmbedder(EmbeddingSettings(base_url=server.base_url, dimensions=DIM), http)
            store = VectorStore(AsyncQdrantClient(location=":memory:"), "java_code")
            try:
                dimension = DIM if embedder else None
                await store.ensure(
                    IndexModel(embedding_model=embedder.model if embedder else None, dimension=dimension)
                )
                indexer = Indexer(store, embedder, lambda: INDEXED_AT)
                chunks: dict[str, Chunk] = {}
                for repo, sha in ((ACME, SHA), (OTHER, None)):
                    results = list(chunk_local_files(files, SourceContext(repo_path=repo, commit_sha=sha), config))
                    await indexer.write(repo, results)
                    chunks.update((c.id, c) for r in results for c in r.chunks)
                health = chunk_source(HEALTH.encode(), HEALTH_PATH, SourceContext(repo_path=EXTRA), config)
                await indexer.write(EXTRA, [health])
                chunks.update((c.id, c) for c in health.chunks)
                search = SearchService(store, embedder, GITLAB + "/")
                yield Indexed(mode=mode, search=search, store=store, server=server, chunks=chunks)
            finally:
                await store.close()


@pytest.fixture
def search(indexed: Indexed) -> SearchService:
    return indexed.search


def names(hits: Sequence[Hit]) -> list[str]:
    return [short(h.qualified_name) for h in hits]


def overloads(hits: Iterable[Hit]) -> list[tuple[str, tuple[str, ...]]]:
    return [(short(h.qualified_name), tuple(h.chunk.parameter_types)) for h in hits]


FIND_OVERLOADS: Final = [
    ("OwnerService.find", ("Long",)),
    ("OwnerService.find", ("String",)),
    ("OwnerService.find", ("String", "int")),
]
# --- exact lookups -------------------------------------------------------------------------------------------------


async def test_symbol_by_type_and_method_finds_every_overload(search: SearchService) -> None:
    hits = await search.symbol(LOCAL, "OwnerService.find", IN_ACME)

    assert overloads(hits) == FIND_OVERLOADS
    assert {h.qualified_name for h in hits} == {f"{CORE}.service.OwnerService.find"}
    assert len({h.id for h in hits}) == 3


async def test_symbol_with_parameter_types_picks_one_overload(search: SearchService) -> None:
    hits = await search.symbol(LOCAL, "find(String, int)", IN_ACME)

    assert overloads(hits) == [("OwnerService.find", ("String", "int"))]
    assert hits[0].line_end == 87


async def test_symbol_with_no_parameters_and_with_unknown_ones(search: SearchService) -> None:
    assert names(await search.symbol(LOCAL, "markNoShows()", IN_ACME)) == ["ReminderJob.markNoShows"]
    assert await search.symbol(LOCAL, "find(Boolean)", IN_ACME) == []


async def test_symbol_by_fully_qualified_type_name(search: SearchService) -> None:
    hits = await search.symbol(LOCAL, f"{CORE}.service.OwnerService", IN_ACME)

    assert [(h.qualified_name, h.symbol_type) for h in hits] == [(f"{CORE}.service.OwnerService", "class")]
    assert hits[0].file_path == OWNER_SERVICE_PATH


async def test_symbol_by_fully_qualified_method_name(search: SearchService) -> None:
    hits = await search.symbol(LOCAL, f"{CORE}.service.OwnerService.find(Long)", IN_ACME)

    assert overloads(hits) == [("OwnerService.find", ("Long",))]


async def test_symbol_of_a_nested_type(search: SearchService) -> None:
    hits = await search.symbol(LOCAL, "OwnerEvent.Deleted", IN_ACME)

    assert [(h.qualified_name, h.symbol_type) for h in hits] == [(f"{JOBS}.messaging.OwnerEvent.Deleted", "record")]


async def test_symbol_without_repo_finds_it_in_every_repository(search: SearchService) -> None:
    hits = await search.symbol(LOCAL, "OwnerService.find")

    assert sorted({h.repo_path for h in hits}) == [ACME, OTHER]
    assert len(hits) == 6


async def test_symbol_of_an_unknown_name_is_empty(search: SearchService) -> None:
    assert await search.symbol(LOCAL, "NoSuchService.find", IN_ACME) == []


async def test_by_annotation_returns_only_annotated_chunks(search: SearchService, indexed: Indexed) -> None:
    hits = await search.by_annotation(LOCAL, "Transactional", IN_ACME)

    assert "ReminderJob.markNoShows" in names(hits)
    assert overloads(h for h in hits if h.qualified_name.endswith(".OwnerService.find")) == FIND_OVERLOADS
    expected = {c.id for c in indexed.chunks.values() if c.repo_path == ACME and "Transactional" in c.annotation_names}
    assert {h.id for h in hits} == expected
    assert all("Transactional" in h.chunk.annotation_names for h in hits)
    assert "ReminderJob.sendVisitReminders" not in names(hits)


@pytest.mark.parametrize(
    "written", ["@Transactional", "@Transactional(readOnly = true)", "org.springframework.transaction.Transactional"]
)
async def test_by_annotation_accepts_the_annotation_as_written(search: SearchService, written: str) -> None:
    assert names(await search.by_annotation(LOCAL, written, IN_ACME)) == names(
        await search.by_annotation(LOCAL, "Transactional", IN_ACME)
    )


async def test_by_annotation_respects_the_limit(search: SearchService) -> None:
    assert len(await search.by_annotation(LOCAL, "Transactional", IN_ACME, limit=2)) == 2


async def test_annotated_members_are_the_hits_of_by_annotation_in_the_same_order(search: SearchService) -> None:
    members = await search.annotated(LOCAL, "Transactional", IN_ACME)
    every = await search.by_annotation(LOCAL, "Transactional", IN_ACME)

    assert [m.id for m in members] == [h.id for h in every]
    assert [m.order for m in members] == [(h.repo_path, h.file_path, h.line_start, h.chunk.part_index) for h in every]
    assert search.hits_of(members[1:3]) == every[1:3]


def showing(k: int) -> Callable[[Sequence[Member]], int]:
    """A page that shows at most `k` members."""
    return lambda members: min(len(members), k)


def by_file_order(chunks: Iterable[Chunk]) -> list[str]:
    return [
        c.id for c in sorted(chunks, key=lambda c: file_order(c.repo_path, c.file_path, c.line_start, c.part_index))
    ]


@pytest.mark.parametrize("read", [1, 32])
async def test_annotation_window_pages_every_member_once_in_file_order(
    search: SearchService, indexed: Indexed, monkeypatch: pytest.MonkeyPatch, read: int
) -> None:
    monkeypatch.setattr(service, "WINDOW_READ", read)  # one payload a call: the window is read in several
    expected = by_file_order(c for c in indexed.chunks.values() if "Transactional" in c.annotation_names)
    seen: list[str] = []
    while True:
        window = await search.annotation_window(LOCAL, "Transactional", EVERYWHERE, len(seen), showing(3))
        assert (window.total, window.scanned) == (len(expected), False)
        if not window.members:
            break
        assert len(window.members) == min(3, len(expected) - len(seen))
        seen += [m.id for m in window.members]
    assert seen == expected
    page = await search.annotation_window(LOCAL, "Transactional", Where(repo=ACME, path_prefix=CORE_SRC), 1, showing(2))
    in_core = by_file_order(
        c for c in indexed.chunks.values()
        if "Transactional" in c.annotation_names and c.repo_path == ACME and c.file_path.startswith(CORE_SRC)
    )  # fmt: skip
    assert (page.total, [m.id for m in page.members]) == (len(in_core), in_core[1:3])


async def test_callers_window_pages_the_callers_once_each_in_file_order(search: SearchService) -> None:
    every = await search.callers(LOCAL, "OwnerService.find")
    assert len(every) > 2
    seen: list[str] = []
    while True:
        window = await search.callers_window(LOCAL, "OwnerService.find", EVERYWHERE, len(seen), showing(2))
        assert (window.total, window.scanned) == (len(every), False)
        if not window.members:
            break
        seen += [m.id for m in window.members]
    assert seen == by_file_order(h.chunk for h in every)
    nothing = await search.callers_window(LOCAL, "NoSuchType.noSuchMethod", EVERYWHERE, 0, showing(2))
    assert (nothing.total, nothing.members) == (0, [])


async def test_callers_of_a_method(search: SearchService) -> None:
    hits = await search.callers(LOCAL, "NotificationService.notifyOwner", IN_ACME)

    assert sorted(names(hits)) == ["OwnerEventListener.onOwnerEvent", "ReminderJob.sendVisitReminders"]


async def test_callers_by_fully_qualified_name(search: SearchService) -> None:
    hits = await search.callers(LOCAL, f"{CORE}.service.NotificationService.notifyOwner", IN_ACME)

    assert sorted(names(hits)) == ["OwnerEventListener.onOwnerEvent", "ReminderJob.sendVisitReminders"]


async def test_callers_by_bare_method_name(search: SearchService) -> None:
    hits = await search.callers(LOCAL, "notifyOwner", IN_ACME)

    assert sorted(names(hits)) == ["OwnerEventListener.onOwnerEvent", "ReminderJob.sendVisitReminders"]


async def test_callers_of_an_overloaded_method(search: SearchService) -> None:
    hits = await search.callers(LOCAL, "OwnerService.find", IN_ACME)

    assert sorted(names(hits)) == [
        "LegacyOwnerController.showOwner",
        "OwnerController.findOwner",
        "OwnerController.searchOwners",
        "OwnerService.find",
    ]


async def test_callers_of_an_unknown_method_is_empty(search: SearchService) -> None:
    assert await search.callers(LOCAL, "noSuchMethod", IN_ACME) == []


async def test_callees_resolve_to_the_indexed_overloads(search: SearchService) -> None:
    callees = {
        call: overloads(hits) for call, hits in await search.callees(LOCAL, "OwnerController.findOwner", IN_ACME)
    }

    assert callees["OwnerService.find"] == FIND_OVERLOADS


async def test_callees_of_a_method_calling_outside_the_index(search: SearchService) -> None:
    callees = dict(await search.callees(LOCAL, "StandardPricingPolicy.discountFor", IN_ACME))

    assert names(callees["PricingPolicy.percentOf"]) == ["PricingPolicy.percentOf"]
    assert callees["List.size"] == []  # the JDK is not indexed


async def test_callees_take_three_lookups_however_many_calls(indexed: Indexed) -> None:
    # One for the method itself, one by exact qualified names, one by method names: each lookup is a
    # full scan in embedded Qdrant, so one per call made a 29-call method take 44 s at JDK size.
    scrolls: list[object] = []

    def counted(scroll: Method) -> Method:
        def count(*args: Any, **kwargs: Any) -> Any:
            scrolls.append(args[0])
            return scroll(*args, **kwargs)

        return count

    search = SearchService(around(indexed.store, scroll=counted), indexed.search.embedder, GITLAB + "/")
    callees = await search.callees(LOCAL, "StandardPricingPolicy.discountFor", IN_ACME)
    assert len(callees) >= 3
    assert len(scrolls) <= 3


async def test_injectors_of_a_type(search: SearchService) -> None:
    hits = await search.injectors(LOCAL, "OwnerRepository", IN_ACME)

    assert [(short(h.qualified_name), h.symbol_type) for h in hits] == [
        ("NotificationService", "class"),
        ("OrderService", "class"),
        ("OwnerService", "class"),
        ("OwnerService.OwnerService", "constructor"),
        ("ReportService", "class"),
        ("ReportService.ReportService", "constructor"),
    ]


async def test_injectors_by_fully_qualified_type(search: SearchService) -> None:
    by_fq = await search.injectors(LOCAL, f"{CORE}.repository.OwnerRepository", IN_ACME)

    assert names(by_fq) == names(await search.injectors(LOCAL, "OwnerRepository", IN_ACME))


async def test_implementations_of_an_interface(search: SearchService) -> None:
    assert names(await search.implementations(LOCAL, "PricingPolicy", IN_ACME)) == ["StandardPricingPolicy"]
    assert names(await search.implementations(LOCAL, f"{CORE}.order.PricingPolicy", IN_ACME)) == [
        "StandardPricingPolicy"
    ]


async def test_implementations_of_a_sealed_interface(search: SearchService) -> None:
    hits = await search.implementations(LOCAL, "OwnerEvent", IN_ACME)

    assert sorted(names(hits)) == ["OwnerEvent.Deleted", "OwnerEvent.Moved", "OwnerEvent.Registered"]
    assert {h.symbol_type for h in hits} == {"record"}


async def test_implementations_include_subclasses(search: SearchService) -> None:
    assert names(await search.implementations(LOCAL, "AuditableEntity", IN_ACME)) == ["Owner", "Pet"]


async def test_endpoint_matches_a_concrete_path_against_the_pattern(search: SearchService) -> None:
    hits = await search.endpoint(LOCAL, "/api/owners/42/pets/new", "GET", IN_ACME)

    assert names(hits) == ["OwnerController.initNewPetForm"]
    assert hits[0].chunk.http_path == ("/api/owners/{ownerId}/pets/new",)


async def test_endpoint_of_a_jax_rs_resource(search: SearchService) -> None:
    assert names(await search.endpoint(LOCAL, "/v2/visits/7", "DELETE", IN_ACME)) == ["VisitResource.cancelVisit"]
    assert names(await search.endpoint(LOCAL, "/v2/visits/7", "GET", IN_ACME)) == ["VisitResource.getVisit"]


async def test_endpoint_with_another_method_is_empty(search: SearchService) -> None:
    assert await search.endpoint(LOCAL, "/v2/visits/7", "POST", IN_ACME) == []
    assert await search.endpoint(LOCAL, "/api/owners/42/pets/new", "DELETE", IN_ACME) == []


async def test_endpoint_without_a_method_finds_every_verb(search: SearchService) -> None:
    hits = await search.endpoint(LOCAL, "/api/owners/42", where=IN_ACME)

    assert names(hits) == ["OwnerController.findOwner", "OwnerController.updateOwner", "OwnerController.deleteOwner"]


async def test_endpoint_method_is_case_insensitive(search: SearchService) -> None:
    assert names(await search.endpoint(LOCAL, "/v2/visits/7", "delete", IN_ACME)) == ["VisitResource.cancelVisit"]


async def test_endpoint_of_a_route_serving_any_method(search: SearchService) -> None:
    for method in ("GET", "DELETE", None):
        assert names(await search.endpoint(LOCAL, "/health/ping", method, Where(repo=EXTRA))) == [
            "HealthController.ping"
        ]


async def test_endpoint_of_an_unknown_path_is_empty(search: SearchService) -> None:
    assert await search.endpoint(LOCAL, "/api/nothing/here", "GET", IN_ACME) == []


async def test_outline_lists_a_file_in_line_order(search: SearchService, indexed: Indexed) -> None:
    hits = await search.outline(LOCAL, ACME, OWNER_SERVICE_PATH)

    assert [h.line_start for h in hits] == sorted(h.line_start for h in hits)
    assert names(hits) == [
        "OwnerService",
        "OwnerService.OwnerService",
        "OwnerService.find",
        "OwnerService.find",
        "OwnerService.find",
        "OwnerService.create",
        "OwnerService.update",
        "OwnerService.delete",
        "OwnerService.saveAll",
        "OwnerService.findPetNames",
        "OwnerService.sortedByName",
        "OwnerService.upsert",
        "OwnerService.normalize",
    ]
    expected = {c.id for c in indexed.chunks.values() if c.repo_path == ACME and c.file_path == OWNER_SERVICE_PATH}
    assert {h.id for h in hits} == expected


async def test_outline_accepts_a_leading_slash_and_keeps_split_parts_in_order(search: SearchService) -> None:
    hits = await search.outline(LOCAL, ACME, f"/{CORE_SRC}/core/service/ReportService.java")

    parts = [h.chunk.part_index for h in hits if h.symbol_type == "method_part"]
    assert len(parts) >= 3
    assert parts == sorted(parts)
    assert [h.line_start for h in hits] == sorted(h.line_start for h in hits)


# --- citations -----------------------------------------------------------------------------------------------------


async def test_every_hit_cites_its_stored_payload(search: SearchService, indexed: Indexed) -> None:
    hits = await search.search(LOCAL, "find owner by id", Filters(repo=ACME), limit=20)

    assert hits
    for hit in hits:
        chunk = indexed.chunks[hit.id]
        assert hit.citation() == {
            "repo_path": ACME,
            "file_path": chunk.file_path,
            "line_start": chunk.line_start,
            "line_end": chunk.line_end,
            "qualified_name": chunk.qualified_name,
            "signature": chunk.signature,
            "project_id": None,
            "commit_sha": SHA,
            "indexed_at": INDEXED_AT.isoformat(),
            "permalink": f"{GITLAB}/{ACME}/-/blob/{SHA}/{chunk.file_path}#L{chunk.line_start}-{chunk.line_end}",
        }
        assert hit.code == chunk.code
        assert hit.symbol_type == chunk.symbol_type.value


async def test_permalink_of_a_known_method(search: SearchService) -> None:
    (hit,) = await search.symbol(LOCAL, "find(String, int)", IN_ACME)

    assert hit.permalink == (
        "https://gitlab.example.com/acme/shop/-/blob/0123456789abcdef0123456789abcdef01234567/"
        "shop-core/src/main/java/com/acme/shop/core/service/OwnerService.java#L74-87"
    )


async def test_no_permalink_without_a_commit(search: SearchService) -> None:
    hits = await search.symbol(LOCAL, "find(String, int)", Where(repo=OTHER))

    assert [(h.repo_path, h.commit_sha, h.permalink) for h in hits] == [(OTHER, None, None)]
    assert hits[0].citation()["permalink"] is None


async def test_no_permalink_without_a_gitlab_url(indexed: Indexed) -> None:
    plain = SearchService(indexed.store, indexed.search.embedder, None)

    (hit,) = await plain.symbol(LOCAL, "find(String, int)", IN_ACME)

    assert hit.commit_sha == SHA
    assert hit.permalink is None


# --- search and its filters ----------------------------------------------------------------------------------------
