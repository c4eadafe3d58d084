"""The store contract: every case runs against Qdrant Edge and against qdrant-client's local mode.

Only the `Store` protocol is used, so a difference between the engines (a filter translated wrongly,
a fusion scored otherwise, an alias that does not move) fails here. Each case also compares the
two engines' answers to the same writes where ranking is involved.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from app.core.errors import IndexMismatchError, StorageError
from app.store import filters
from app.store.edge import EdgeStore
from app.store.engines import Store
from app.store.lexical import query_vector
from app.store.payloads import FILE_ORDER, PAYLOAD_FIELDS, StoredChunk, file_order, flagged, repo_payload
from app.store.vectors import IndexModel, chunk_point
from pipeline.model import Chunk
from tests.support.engines import EMBEDDED_ENGINES, memory_store
from tests.support.java import REPO, chunk_java

LEXICAL_ONLY = IndexModel(embedding_model=None, dimension=None)
SMALL = IndexModel(embedding_model="fake-embed", dimension=4)

SERVICE = """\
package demo.core;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class OwnerService {
    private final OwnerRepository owners;

    OwnerService(OwnerRepository owners) { this.owners = owners; }

    @Transactional
    public Owner find(long id) { return owners.findById(id); }

    public void rename(long id, String name) { owners.findById(id).setName(name); }

    public int countPets(long id) { return owners.findById(id).pets().size(); }
}
"""
SERVICE_PATH = "core/src/main/java/demo/core/OwnerService.java"


@pytest_asyncio.fixture(params=EMBEDDED_ENGINES)
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    opened = memory_store(request.param)
    try:
        yield opened
    finally:
        await opened.close()


def chunks() -> list[Chunk]:
    return list(chunk_java(SERVICE, SERVICE_PATH).chunks)


def dense(i: int) -> list[float]:
    return [1.0, float(i), 0.5, 0.0]


async def filled(store: Store, model: IndexModel = LEXICAL_ONLY, *, project: int = 7) -> list[Chunk]:
    await store.ensure(model)
    found = chunks()
    points = [chunk_point(c, dense(i) if model.dimension else None, "t1") for i, c in enumerate(found)]
    for point in points:
        assert isinstance(point.payload, dict)
        point.payload["gitlab_project_id"] = project
    await store.upsert(points)
    return found


async def payloads(store: Store, where: filters.Filter | None = None) -> dict[str, dict[str, Any]]:
    return {str(r.id): r.payload or {} async for r in store.scroll(where or filters.everything(), True, page=2)}


async def test_ensure_creates_the_first_generation_behind_the_alias(store: Store) -> None:
    await store.ensure(LEXICAL_ONLY)

    assert await store.target() == "java_code_1"
    assert await store.generations() == ["java_code_1"]
    assert await store.recorded_model() == LEXICAL_ONLY
    assert await store.count() == 0


async def test_another_model_is_refused_with_the_rebuild_hint(store: Store) -> None:
    await store.ensure(LEXICAL_ONLY)

    with pytest.raises(IndexMismatchError, match="javakb index X --rebuild"):
        await store.ensure(SMALL, rebuild_hint="javakb index X --rebuild")


async def test_count_before_any_collection_is_a_storage_error(store: Store) -> None:
    with pytest.raises(StorageError):
        await store.count()


async def test_a_rebuild_writes_a_generation_and_switches_the_alias(store: Store) -> None:
    old = await filled(store)
    building = await store.create_generation(SMALL)
    await store.upsert([chunk_point(old[0], dense(0), "t2")], collection=building)

    assert await store.count() == len(old)  # searches still see the old generation
    previous = await store.switch_alias(building)
    await store.drop_collection(previous or "")

    assert previous == "java_code_1"
    assert await store.target() == building == "java_code_2"
    assert await store.generations() == ["java_code_2"]
    assert await store.recorded_model() == SMALL
    assert await store.count() == 1


async def test_stored_state_reads_hashes_by_file_and_repository(store: Store) -> None:
    found = await filled(store)

    state = await store.stored_state(REPO, None)
    by_file = await store.stored_hashes(REPO, [SERVICE_PATH])

    assert by_file == {c.id: (SERVICE_PATH, c.content_hash) for c in found}
    assert state.hashes == by_file
    assert await store.stored_hashes("other/repo", [SERVICE_PATH]) == {}


async def test_filters_match_the_same_points(store: Store) -> None:
    found = await filled(store)
    methods = {c.id for c in found if c.symbol_type == "method"}

    assert set(await payloads(store, filters.all_of(filters.eq("symbol_type", "method")))) == methods
    assert await store.count(filters.all_of(filters.any_of("gitlab_project_id", [3, 7]))) == len(found)
    assert await store.count(filters.all_of(filters.between("gitlab_project_id", 8, 9))) == 0
    assert await store.count(filters.all_of(filters.eq("annotation_names", "Transactional"))) == 1
    none_of = filters.all_of(filters.eq("repo_path", REPO), none_of=[filters.eq("symbol_type", "method")])
    assert set(await payloads(store, none_of)) == {c.id for c in found} - methods
    either = filters.either(filters.eq("name", "find"), filters.eq("name", "rename"))
    assert {p["name"] for p in (await payloads(store, either)).values()} == {"find", "rename"}
    assert await store.count(filters.all_of(filters.eq("path_prefixes", "core/"))) == len(found)
    empty = await store.count(filters.all_of(filters.is_empty("http_method")))
    assert empty == len(found)


async def test_a_flag_filters_alike_and_a_point_written_before_it_is_not_flagged(store: Store) -> None:
    await store.ensure(LEXICAL_ONLY)
    found = chunks()
    points = [chunk_point(replace(c, generated=i == 0), None, "t1") for i, c in enumerate(found)]
    second = points[1].payload
    assert isinstance(second, dict)
    del second["generated"], second["flags"]  # a point written before the flag existed
    await store.upsert(points)
    marked = flagged("generated")

    assert set(await payloads(store, filters.all_of(marked))) == {str(points[0].id)}
    assert await store.count(filters.all_of(none_of=[marked])) == len(found) - 1
    assert await store.counts_by("repo_path", where=filters.all_of(marked)) == {REPO: 1}


async def test_counts_by_a_keyword_field(store: Store) -> None:
    found = await filled(store)

    assert await store.counts_by("repo_path") == {REPO: len(found)}
    kinds = await store.counts_by("symbol_type", where=filters.all_of(filters.eq("name", "find")))
    assert kinds == {"method": 1}
    everyone = filters.all_of(filters.eq("repo_path", REPO))
    for key in ("annotation_names", "symbol_type", "calls"):  # list fields count each value once per point
        assert await store.counts_by(key, where=everyone) == await store.counts_by(key)
    assert await store.counts_by("calls")


async def test_a_payload_update_keeps_the_null_fields_readers_require(store: Store) -> None:
    # Qdrant's merging set_payload deletes keys given as null; a refreshed chunk must still read back whole.
    found = await filled(store)
    chunk = next(c for c in found if c.enclosing_type is not None)
    top = replace(chunk, enclosing_type=None, line_start=chunk.line_start + 1)

    await store.set_payloads({chunk.id: chunk_point(top, None, "t2").payload or {}})

    [record] = await store.retrieve([chunk.id], list(PAYLOAD_FIELDS))
    assert StoredChunk.from_payload(record.payload or {}).chunk.line_start == chunk.line_start + 1
    assert (record.payload or {})["enclosing_type"] is None


async def test_edge_counts_under_a_filter_alike_by_facet_and_by_scroll() -> None:
    by_facet, by_scroll = EdgeStore(":memory:", "java_code"), EdgeStore(":memory:", "java_code", facet_max_values=0)
    try:
        for store in (by_facet, by_scroll):
            await filled(store)
        methods = filters.all_of(filters.eq("symbol_type", "method"))
        for key in ("name", "calls", "annotation_names"):
            assert await by_scroll.counts_by(key, where=methods) == await by_facet.counts_by(key, where=methods)
        assert await by_facet.counts_by("name", where=methods)
    finally:
        await by_facet.close()
        await by_scroll.close()


async def test_retrieve_finds_points_by_id_with_the_fields_asked_for(store: Store) -> None:
    found = await filled(store)
    missing = "00000000-0000-4000-8000-000000000000"

    records = await store.retrieve([found[0].id, missing, found[1].id], ["content_hash"])
    assert {r.id: r.payload for r in records} == {c.id: {"content_hash": c.content_hash} for c in found[:2]}


async def test_writes_update_delete_and_rename(store: Store) -> None:
    found = await filled(store)

    rewritten = {**(chunk_point(found[0], None, "t2").payload or {}), "gitlab_project_id": 7}
    await store.set_payloads({found[0].id: rewritten})
    await store.delete_ids([found[1].id])
    await store.set_payload_where(filters.all_of(filters.eq("gitlab_project_id", 7)), repo_payload("acme/moved"))
    stored = await payloads(store)

    assert set(stored) == {c.id for c in found} - {found[1].id}
    assert stored[found[0].id]["indexed_at"] == "t2"
    assert stored[found[0].id]["code"] == found[0].code
    assert {p["repo_path"] for p in stored.values()} == {"acme/moved"}
    await store.delete_where(filters.all_of(filters.eq("repo_path", "acme/moved")))
    assert await store.count() == 0


async def test_vectors_come_back_for_a_moved_file(store: Store) -> None:
    await filled(store, SMALL)

    records = [r async for r in store.scroll(filters.everything(), ["name"], with_vectors=True)]

    assert records and all(isinstance(r.vector, dict) and {"dense", "lexical"} <= set(r.vector) for r in records)
    rewritten = [chunk_point(c, None, "t") for c in chunks()]
    for point, record in zip(rewritten, records, strict=False):
        point.vector = record.vector  # type: ignore[assignment]
    await store.upsert(rewritten)  # stored vectors are writable as they came back
    assert await store.count() == len(records)


async def test_an_upsert_of_a_wrong_size_vector_is_a_storage_error(store: Store) -> None:
    await store.ensure(SMALL)

    with pytest.raises(StorageError, match="upsert of 1 points failed"):
        await store.upsert([chunk_point(chunks()[0], [1.0, 0.0], "t")])


async def ranked(engine: str, model: IndexModel, text: str, where: filters.Filter | None) -> list[tuple[str, float]]:
    store = memory_store(engine)
    try:
        await filled(store, model)
        lexical = query_vector(text)
        hits = await store.query(lexical=lexical, dense=dense(2) if model.dimension else None, where=where, limit=5)
        # Same points with the same scores in the same order, ties included (app.store.fusion decides it),
        # each with its whole payload (Edge reads them after the search).
        stored = await payloads(store)
        assert [h.payload for h in hits] == [stored[str(h.id)] for h in hits]
        return [(str(h.id), round(h.score, 4)) for h in hits]
    finally:
        await store.close()


@pytest.mark.parametrize("model", [LEXICAL_ONLY, SMALL], ids=["lexical", "hybrid"])
@pytest.mark.parametrize("where", [None, filters.all_of(filters.eq("symbol_type", "method"))], ids=["all", "methods"])
async def test_both_engines_rank_the_same_points_with_the_same_scores(
    model: IndexModel, where: filters.Filter | None
) -> None:
    edge, local = [await ranked(e, model, "owners findById rename", where) for e in EMBEDDED_ENGINES]

    assert edge and edge == local
    if model.dimension and where is None:  # the n-th lexical and dense candidates tie in RRF: must agree too
        assert len({score for _, score in edge}) < len(edge)


OTHER_REPO = "demo/other"
# Another repository whose code says "rename" everywhere: globally the word becomes common, in REPO it is not.
RENAMES = """\
package demo.other;

public class Renamer {
    public void rename(String a) { rename(a, a); }
    public void rename(String a, String b) { renameAll(a, b); }
    public void renameAll(String a, String b) { renameLater(a); }
    public void renameLater(String a) { rename(a); }
}
"""


async def lexical_scores(store: Store, where: filters.Filter | None) -> list[tuple[str, float]]:
    hits = await store.query(lexical=query_vector("owners rename pets"), dense=None, where=where, limit=10)
    return [(str(h.id), round(h.score, 6)) for h in hits]


async def test_term_rarity_is_measured_over_what_the_query_searches(store: Store) -> None:
    # A repository's ranking does not change when another repository is indexed next to it.
    own = await filled(store)
    only_repo = filters.all_of(filters.eq("repo_path", REPO))
    alone = await lexical_scores(store, only_repo)
    other = chunk_java(RENAMES, "src/main/java/demo/other/Renamer.java", repo=OTHER_REPO).chunks
    await store.upsert([chunk_point(c, None, "t2") for c in other])

    together = await lexical_scores(store, only_repo)

    assert alone and together == alone
    assert {hit for hit, _ in together} <= {c.id for c in own}
    # Without a filter the whole collection is the corpus: "rename" is common there, so it scores otherwise.
    renamed = next(c.id for c in own if c.name == "rename")
    assert dict(await lexical_scores(store, None))[renamed] != dict(alone)[renamed]


async def test_a_query_with_no_vector_finds_nothing(store: Store) -> None:
    await filled(store)

    assert await store.query(lexical=None, dense=None, where=None, limit=5) == []


async def test_edge_refuses_a_local_mode_folder_and_names_the_rebuild(tmp_path: Path) -> None:
    (tmp_path / "meta.json").write_text('{"collections": {}, "aliases": {}}', encoding="utf-8")
    store = EdgeStore(str(tmp_path), "java_code")
    try:
        with pytest.raises(StorageError, match=r"local mode.*`javakb index PATH --rebuild`"):
            await store.ensure(LEXICAL_ONLY)
        built = await store.create_generation(LEXICAL_ONLY)  # what --rebuild does
        await store.switch_alias(built)
        await store.ensure(LEXICAL_ONLY)
    finally:
        await store.close()


async def test_edge_reopens_what_it_wrote_and_refuses_a_second_opener(tmp_path: Path) -> None:
    first = EdgeStore(str(tmp_path), "java_code")
    found = await filled(first)
    second = EdgeStore(str(tmp_path), "java_code")
    try:
        with pytest.raises(StorageError, match="open in another process"):
            await second.count()
    finally:
        await second.close()
        await first.close()
    reopened = EdgeStore(str(tmp_path), "java_code")
    try:
        assert await reopened.count() == len(found)
        assert await reopened.recorded_model() == LEXICAL_ONLY
    finally:
        await reopened.close()


def _in_file_order(found: list[Chunk]) -> list[str]:
    return [c.id for c in sorted(found, key=lambda c: file_order(c.repo_path, c.file_path, c.line_start, c.part_index))]


async def test_ordered_ids_come_by_file_order_and_leave_out_points_written_before_it(store: Store) -> None:
    found = await filled(store)
    other = list(chunk_java(SERVICE.replace("OwnerService", "PetService"), SERVICE_PATH.replace("Owner", "Pet")).chunks)
    await store.upsert([chunk_point(c, None, "t1") for c in other])
    methods = filters.all_of(filters.eq("symbol_type", "method"))

    assert await store.ordered_ids(filters.everything(), FILE_ORDER, 100) == _in_file_order(found + other)
    expected = _in_file_order([c for c in found + other if c.symbol_type == "method"])
    assert await store.ordered_ids(methods, FILE_ORDER, 3) == expected[:3]
    older = chunk_point(found[0], None, "t1").payload or {}
    del older[FILE_ORDER]
    await store.set_payloads({found[0].id: older})
    assert await store.ordered_ids(filters.everything(), FILE_ORDER, 100) == _in_file_order(found[1:] + other)


async def test_edge_gives_a_shard_the_payload_indexes_it_was_written_without(tmp_path: Path) -> None:
    import qdrant_edge as qe

    first = EdgeStore(str(tmp_path), "java_code")
    found = await filled(first)
    shard = await first._shard()
    shard.update(qe.UpdateOperation.delete_field_index(FILE_ORDER))  # as a shard written before the key
    assert FILE_ORDER not in shard.info().payload_schema
    await first.close()
    reopened = EdgeStore(str(tmp_path), "java_code")
    try:
        assert await reopened.ordered_ids(filters.everything(), FILE_ORDER, 100) == _in_file_order(found)
        assert FILE_ORDER in (await reopened._shard()).info().payload_schema
    finally:
        await reopened.close()


async def test_edge_builds_the_dense_index_offline_and_answers_the_same(tmp_path: Path) -> None:
    store = EdgeStore(str(tmp_path), "java_code", indexing_threshold_kb=1)  # a few points are enough to index
    try:
        found = await filled(store, SMALL)
        before = [p.id for p in await store.query(lexical=None, dense=dense(3), where=None, limit=5)]

        assert await store.optimize() is True
        assert (await store._shard()).info().indexed_vectors_count >= len(found)
        assert [p.id for p in await store.query(lexical=None, dense=dense(3), where=None, limit=5)] == before
        assert await store.optimize() is False  # nothing left to build
    finally:
        await store.close()


async def test_a_store_without_dense_vectors_or_on_local_mode_builds_nothing(store: Store) -> None:
    await filled(store)
    assert await store.optimize() is False
