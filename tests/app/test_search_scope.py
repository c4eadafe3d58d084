"""Lookups narrowed to one module (`path_prefix`), and generated code in search, on a small multi-module repo.

The repository is written here: two apps (`admin/`, `portal/`) that share a generated persistence
module (`mbg/`, MyBatis Generator's shapes with its comments switched off), as real shop systems are.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Final

import pytest
import pytest_asyncio
from qdrant_client import AsyncQdrantClient

from app.auth.access import LOCAL
from app.core.settings import GeneratedCode
from app.search.hits import Hit
from app.search.lookups import callers_condition
from app.search.offload import bounded
from app.search.reader import Reader
from app.search.scoping import Filters, Where
from app.search.service import SearchService
from app.store.indexing import Indexer
from app.store.vectors import IndexModel, VectorStore
from pipeline.chunking import chunk_source
from pipeline.model import ChunkerConfig, SourceContext

REPO: Final = "acme/mall"
IN_REPO: Final = Where(repo=REPO)
OTHER: Final = "acme/other"
AT: Final = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def controller(module: str, route: str) -> str:
    return f"""\
package demo.{module};

import demo.mbg.Parcel;
import demo.mbg.ParcelMapper;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
public class ParcelController {{
    private final ParcelMapper parcelMapper;

    public ParcelController(ParcelMapper parcelMapper) {{
        this.parcelMapper = parcelMapper;
    }}

    /** Weighs a parcel before it is shipped. */
    @Transactional
    @GetMapping("{route}")
    public long weigh(Long id) {{
        Parcel parcel = parcelMapper.selectByPrimaryKey(id);
        return parcelMapper.countByExample(null) + parcel.getWeight();
    }}
}}
"""


MAPPER: Final = """\
package demo.mbg;

public interface ParcelMapper {
    long countByExample(ParcelExample example);

    int deleteByPrimaryKey(Long id);

    int insertSelective(Parcel record);

    Parcel selectByPrimaryKey(Long id);

    int updateByPrimaryKeySelective(Parcel record);
}
"""
MODEL: Final = """\
package demo.mbg;

public class Parcel {
    private Long weight;

    /** The parcel's weight before it is shipped. */
    public Long getWeight() {
        return weight;
    }

    public void setWeight(Long weight) {
        this.weight = weight;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        sb.append(getClass().getSimpleName());
        sb.append(" [");
        sb.append("Hash = ").append(hashCode());
        sb.append(", weight=").append(getWeight());
        sb.append("]");
        return sb.toString();
    }
}
"""
FILES: Final = {
    "admin/src/main/java/demo/admin/ParcelController.java": controller("admin", "/admin/parcels/{id}/weight"),
    "portal/src/main/java/demo/portal/ParcelController.java": controller("portal", "/parcels/{id}/weight"),
    "mbg/src/main/java/demo/mbg/ParcelMapper.java": MAPPER,
    "mbg/src/main/java/demo/mbg/Parcel.java": MODEL,
}

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def store() -> AsyncIterator[VectorStore]:
    store = VectorStore(AsyncQdrantClient(location=":memory:"), "java_code")
    try:
        await store.ensure(IndexModel(embedding_model=None, dimension=None))
        indexer = Indexer(store, None, lambda: AT)
        for repo in (REPO, OTHER):
            context = SourceContext(repo_path=repo)
            results = [chunk_source(s.encode(), p, context, ChunkerConfig()) for p, s in FILES.items()]
            await indexer.write(repo, results)
        yield store
    finally:
        await store.close()


def service(store: VectorStore, generated: GeneratedCode = GeneratedCode.DEMOTE) -> SearchService:
    return SearchService(store, None, generated_code=generated)


def modules(hits: Sequence[Hit]) -> list[str]:
    return [h.file_path.split("/", 1)[0] for h in hits]


# --- path_prefix on every lookup ----------------------------------------------------------------------------------


async def test_every_lookup_answers_both_apps_without_a_path_prefix(store: VectorStore) -> None:
    search = service(store)
    assert modules(await search.by_annotation(LOCAL, "Transactional", IN_REPO)) == ["admin", "portal"]
    assert modules(await search.endpoint(LOCAL, "/parcels/7/weight", "GET", IN_REPO)) == ["portal"]
    assert set(modules(await search.callers(LOCAL, "ParcelMapper.countByExample", IN_REPO))) == {"admin", "portal"}


@pytest.mark.parametrize(
    "prefix", ["admin", "admin/", "/admin/", "admin/src/main/java/demo/admin/ParcelController.java"]
)
async def test_a_path_prefix_narrows_every_lookup_to_one_module(store: VectorStore, prefix: str) -> None:
    search = service(store)
    answers = [
        await search.by_annotation(LOCAL, "Transactional", Where(repo=REPO, path_prefix=prefix)),
        await search.callers(LOCAL, "ParcelMapper.countByExample", Where(repo=REPO, path_prefix=prefix)),
        await search.injectors(LOCAL, "ParcelMapper", Where(repo=REPO, path_prefix=prefix)),
        await search.symbol(LOCAL, "ParcelController.weigh", Where(repo=REPO, path_prefix=prefix)),
        await search.endpoint(LOCAL, "/admin/parcels/7/weight", None, Where(repo=REPO, path_prefix=prefix)),
    ]
    for hits in answers:
        assert hits
        assert set(modules(hits)) == {"admin"}
        assert {h.repo_path for h in hits} == {REPO}
    pairs = await search.callees(LOCAL, "weigh", Where(repo=REPO, path_prefix=prefix))
    assert len(await search.callees(LOCAL, "weigh", IN_REPO)) == 2 * len(pairs)  # both apps' weigh without the prefix
    calls = dict(pairs)
    assert modules(calls["Parcel.getWeight"]) == ["mbg"]  # the method is picked in admin/, its callees found anywhere


async def test_a_path_prefix_of_another_module_finds_nothing_there(store: VectorStore) -> None:
    search = service(store)
    assert await search.endpoint(LOCAL, "/admin/parcels/7/weight", None, Where(repo=REPO, path_prefix="portal")) == []
    in_adm = Where(repo=REPO, path_prefix="adm")  # a folder, not a prefix
    assert await search.by_annotation(LOCAL, "Transactional", in_adm) == []
    assert await search.implementations(LOCAL, "ParcelMapper", Where(repo=REPO, path_prefix="admin")) == []


@pytest.mark.parametrize("name", ["weigh", "ParcelController.weigh"])
async def test_a_path_prefix_or_language_picks_which_method_call_keys_mean(store: VectorStore, name: str) -> None:
    search = service(store)
    admin, portal = "demo.admin.ParcelController.weigh", "demo.portal.ParcelController.weigh"
    assert (await search.call_keys(LOCAL, name, IN_REPO))[0] == [admin, portal]
    assert (await search.call_keys(LOCAL, name, Where(repo=REPO, path_prefix="admin/")))[0] == [admin]
    assert (await search.call_keys(LOCAL, name, Where(repo=REPO, language="java")))[0] == [admin, portal]
    assert (await search.call_keys(LOCAL, name, Where(repo=REPO, language="kotlin")))[0] == []  # no Kotlin here


async def test_a_path_prefix_or_language_narrows_the_callers_condition(store: VectorStore) -> None:
    reader = Reader(store, bounded(None), None, clock=lambda: 0.0, ttl_s=60.0, libraries=None)
    in_admin = await callers_condition(reader, LOCAL, "weigh", Where(repo=REPO, path_prefix="admin"))
    everywhere = await callers_condition(reader, LOCAL, "weigh", IN_REPO)
    assert in_admin is not None
    assert in_admin == await callers_condition(reader, LOCAL, "demo.admin.ParcelController.weigh", IN_REPO)
    assert in_admin != everywhere
    assert await callers_condition(reader, LOCAL, "weigh", Where(repo=REPO, language="kotlin")) is None


# --- generated code in search -------------------------------------------------------------------------------------


async def test_generated_code_is_marked_in_the_store(store: VectorStore) -> None:
    hits = await service(store).symbol(LOCAL, "Parcel", IN_REPO)
    assert [(h.qualified_name, h.chunk.generated) for h in hits] == [("demo.mbg.Parcel", True)]
    weigh = await service(store).symbol(LOCAL, "weigh", IN_REPO)
    assert [h.chunk.generated for h in weigh] == [False, False]


async def test_demote_ranks_generated_hits_after_every_hand_written_one(store: VectorStore) -> None:
    query = "parcel weight before it is shipped"
    included = await service(store, GeneratedCode.INCLUDE).search(LOCAL, query, Filters(repo=REPO), 20)
    demoted = await service(store, GeneratedCode.DEMOTE).search(LOCAL, query, Filters(repo=REPO), 20)
    flags = [h.chunk.generated for h in included]
    assert True in flags and False in flags
    assert flags != sorted(flags), "the included order must mix them, or the demotion test proves nothing"
    assert sorted(h.id for h in demoted) == sorted(h.id for h in included)
    assert [h.chunk.generated for h in demoted] == sorted(flags)
    hand = [h.id for h in included if not h.chunk.generated]
    assert [h.id for h in demoted if not h.chunk.generated] == hand  # each group keeps its rank order


async def test_demote_fills_the_limit_with_hand_written_hits_first(store: VectorStore) -> None:
    query = "parcel weight before it is shipped"
    hand = await service(store, GeneratedCode.EXCLUDE).search(LOCAL, query, Filters(repo=REPO), 20)
    top = await service(store, GeneratedCode.DEMOTE).search(LOCAL, query, Filters(repo=REPO), len(hand))
    assert sorted(h.id for h in top) == sorted(h.id for h in hand)


async def test_exclude_leaves_generated_code_out_inside_the_query(store: VectorStore) -> None:
    search = service(store, GeneratedCode.EXCLUDE)
    hits = await search.search(LOCAL, "parcel weight getWeight", Filters(repo=REPO), 50)
    assert hits
    assert not any(h.chunk.generated for h in hits)
    only_generated = await search.search(LOCAL, "parcel weight getWeight", Filters(repo=REPO, generated=True), 50)
    assert only_generated and all(h.chunk.generated for h in only_generated)


async def test_exact_lookups_answer_generated_code_whatever_the_setting(store: VectorStore) -> None:
    search = service(store, GeneratedCode.EXCLUDE)
    assert [h.chunk.generated for h in await search.symbol(LOCAL, "Parcel.getWeight", IN_REPO)] == [True]


async def test_generated_counts_are_per_repository_and_part_of_the_totals(store: VectorStore) -> None:
    search = service(store)
    totals = await search.repositories(LOCAL)
    generated = await search.generated_counts(LOCAL)
    assert set(generated) == {REPO, OTHER}
    assert generated[REPO] == generated[OTHER]
    assert 0 < generated[REPO] < totals[REPO]


async def test_exclude_also_leaves_generated_code_out_of_a_relation_answer(store: VectorStore) -> None:
    question = "who calls Parcel.getWeight"
    callers = await service(store).callers(LOCAL, "Parcel.getWeight", IN_REPO)
    assert any(h.chunk.generated for h in callers)  # the generated toString calls it too
    hits = await service(store, GeneratedCode.EXCLUDE).search(LOCAL, question, Filters(repo=REPO), 20)
    assert {h.qualified_name for h in hits} >= {
        "demo.admin.ParcelController.weigh",
        "demo.portal.ParcelController.weigh",
    }
    assert not any(h.chunk.generated for h in hits)


async def test_demote_keeps_a_generated_symbol_the_question_names(store: VectorStore) -> None:
    for question in ("ParcelMapper", "where is Parcel.getWeight"):
        included = await service(store, GeneratedCode.INCLUDE).search(LOCAL, question, Filters(repo=REPO), 10)
        demoted = await service(store, GeneratedCode.DEMOTE).search(LOCAL, question, Filters(repo=REPO), 10)
        named = question.split()[-1]
        rank = next(i for i, h in enumerate(included) if h.qualified_name.endswith(named))
        assert included[rank].chunk.generated
        assert demoted[rank].qualified_name == included[rank].qualified_name


async def test_a_sticky_fact_is_checked_again_only_after_its_ttl_while_false_and_never_once_true() -> None:
    from app.search.reader import StickyFact

    now = [0.0]
    answers = [False, False, True]
    asked: list[float] = []

    async def check() -> bool:
        asked.append(now[0])
        return answers[len(asked) - 1]

    fact = StickyFact(10.0, lambda: now[0])
    seen = []
    for t in (0.0, 5.0, 10.0, 15.0, 21.0, 100.0):
        now[0] = t
        seen.append(await fact.holds(check))
    assert seen == [False, False, False, False, True, True]
    assert asked == [0.0, 10.0, 21.0]
