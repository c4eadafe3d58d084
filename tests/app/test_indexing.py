"""The write path: `plan_writes` (pure) and `Indexer` over embedded Qdrant and a fake embedding server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from qdrant_client import AsyncQdrantClient
from qdrant_client import models as qm

from app.core.errors import EmbeddingUnavailableError, StorageError
from app.core.settings import EmbeddingSettings
from app.store.embeddings import OpenAIEmbedder
from app.store.indexing import Indexer, RunCounts, WritePlan, move_key
from app.store.vectors import DENSE, IndexModel, VectorStore
from pipeline.chunking import chunk_source
from pipeline.model import Chunk, ChunkerConfig, FileResult, SourceContext
from pipeline.render import model_text
from testkit.fake_embedder import FakeEmbeddingServer, fake_vector

REPO = "acme/pets"
OTHER_REPO = "acme/vets"
ALIAS = "code"
DIM = 16
MODEL = "fake-embed"
SHA_1 = "1" * 40
SHA_2 = "2" * 40
T0 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)

OWNER_PATH = "pets/src/main/java/demo/OwnerService.java"
PET_PATH = "pets/src/main/java/demo/PetService.java"

OWNER = """\
package demo;

public class OwnerService {
    public String find(Long id) {
        return "owner" + id;
    }

    public int count() {
        return 42;
    }

    public void delete(Long id) {
        System.out.println(id);
    }
}
"""
PET = """\
package demo;

public class PetService {
    public String name(Long id) {
        return "pet" + id;
    }
}
"""


@dataclass(slots=True)
class Clock:
    """A clock the test moves by hand."""

    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now


async def no_sleep(seconds: float) -> None:
    """The embedder's retry back-off, without waiting."""


def chunked(
    source: str, path: str = OWNER_PATH, *, repo: str = REPO, sha: str | None = SHA_1, raw: bytes | None = None
) -> FileResult:
    context = SourceContext(repo_path=repo, commit_sha=sha)
    return chunk_source(source.encode() if raw is None else raw, path, context, ChunkerConfig())


def by_name(result: FileResult, name: str) -> Chunk:
    found = [c for c in result.chunks if c.name == name]
    assert len(found) == 1, [c.qualified_name for c in result.chunks]
    return found[0]


def stored_of(*results: FileResult) -> dict[str, tuple[str, str]]:
    return {c.id: (r.file_path, c.content_hash) for r in results for c in r.chunks}


def ids(chunks: tuple[Chunk, ...] | list[Chunk]) -> set[str]:
    return {c.id for c in chunks}


# --- plan_writes: pure ---------------------------------------------------------------------------------------------


# --- Indexer against embedded Qdrant -------------------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(dim=DIM) as srv:
        yield srv


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def embedder_for(server: FakeEmbeddingServer, http: httpx.AsyncClient, **overrides: Any) -> OpenAIEmbedder:
    fields: dict[str, Any] = {"base_url": server.base_url, "model": MODEL, "max_retries": 1, **overrides}
    return OpenAIEmbedder(EmbeddingSettings.model_validate(fields), http, sleep=no_sleep, jitter=lambda: 0.0)


@pytest.fixture
def embedder(server: FakeEmbeddingServer, http: httpx.AsyncClient) -> OpenAIEmbedder:
    return embedder_for(server, http, dimensions=DIM)


@pytest.fixture
async def store() -> AsyncIterator[VectorStore]:
    store = VectorStore(AsyncQdrantClient(location=":memory:"), ALIAS)
    await store.ensure(IndexModel(embedding_model=MODEL, dimension=DIM))
    yield store
    await store.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def indexer(store: VectorStore, embedder: OpenAIEmbedder, clock: Clock) -> Indexer:
    return Indexer(store, embedder, clock)


async def points(store: VectorStore, repo: str = REPO) -> dict[str, qm.Record]:
    where = qm.Filter(must=[qm.FieldCondition(key="repo_path", match=qm.MatchValue(value=repo))])
    records, _ = await store.client.scroll(ALIAS, scroll_filter=where, limit=1000, with_payload=True, with_vectors=True)
    return {str(r.id): r for r in records}


def payload(record: qm.Record) -> dict[str, Any]:
    assert record.payload is not None
    return record.payload


def dense(record: qm.Record) -> list[float]:
    assert isinstance(record.vector, dict)
    vector = record.vector[DENSE]
    assert isinstance(vector, list)
    return [float(x) for x in vector]  # type: ignore[arg-type]


async def test_first_write_embeds_every_chunk(
    indexer: Indexer, store: VectorStore, server: FakeEmbeddingServer, clock: Clock
) -> None:
    owner, pet = chunked(OWNER), chunked(PET, PET_PATH)

    plan = await indexer.write(REPO, [owner, pet])

    assert server.inputs_total == 6
    sent = sorted(i for r in server.requests for i in r.inputs)
    assert sent == sorted(model_text(c.text) for c in owner.chunks + pet.chunks)
    assert len(plan.embed) == 6
    stored = await points(store)
    assert set(stored) == ids(owner.chunks + pet.chunks)
    for chunk in owner.chunks:
        record = stored[chunk.id]
        assert payload(record)["indexed_at"] == T0.isoformat()
        assert payload(record)["commit_sha"] == SHA_1
        assert payload(record)["content_hash"] == chunk.content_hash
        assert dense(record) == pytest.approx(fake_vector(model_text(chunk.text), DIM))


async def test_rerun_embeds_nothing(indexer: Indexer, store: VectorStore, server: FakeEmbeddingServer) -> None:
    owner = chunked(OWNER)
    await indexer.write(REPO, [owner])
    calls = server.calls

    plan = await indexer.write(REPO, [chunked(OWNER)])

    assert server.calls == calls
    assert plan.embed == ()
    assert plan.delete == ()
    assert ids(plan.refresh) == ids(owner.chunks)
    assert plan.per_file == {OWNER_PATH: (0, 4, 0)}
    assert set(await points(store)) == ids(owner.chunks)


async def test_rerun_refreshes_commit_lines_and_time_but_keeps_vectors(
    indexer: Indexer, store: VectorStore, server: FakeEmbeddingServer, clock: Clock
) -> None:
    owner = chunked(OWNER)
    await indexer.write(REPO, [owner])
    before = await points(store)
    calls = server.calls
    clock.now = T0 + timedelta(hours=1)
    moved = chunked("// Copyright Acme\n// All rights reserved\n" + OWNER, sha=SHA_2)

    await indexer.write(REPO, [moved])

    assert server.calls == calls
    after = await points(store)
    count = by_name(moved, "count")
    assert payload(after[count.id])["commit_sha"] == SHA_2
    assert payload(after[count.id])["line_start"] == by_name(owner, "count").line_start + 2 == count.line_start
    assert payload(after[count.id])["line_end"] == count.line_end
    assert payload(after[count.id])["code"] == count.code
    for chunk in moved.chunks:
        assert payload(after[chunk.id])["indexed_at"] == (T0 + timedelta(hours=1)).isoformat()
        assert payload(after[chunk.id])["commit_sha"] == SHA_2
        assert dense(after[chunk.id]) == dense(before[chunk.id])


async def test_editing_one_method_embeds_only_that_chunk(
    indexer: Indexer, store: VectorStore, server: FakeEmbeddingServer
) -> None:
    await indexer.write(REPO, [chunked(OWNER)])
    before = await points(store)
    seen = len(server.requests)
    edited = chunked(OWNER.replace("return 42;", "return 43;"))
    count = by_name(edited, "count")

    plan = await indexer.write(REPO, [edited])

    assert [i for r in server.requests[seen:] for i in r.inputs] == [model_text(count.text)]
    assert plan.embed == (count,)
    after = await points(store)
    assert set(after) == set(before)
    assert "return 43;" in payload(after[count.id])["code"]
    assert payload(after[count.id])["content_hash"] == count.content_hash
    assert dense(after[count.id]) == pytest.approx(fake_vector(model_text(count.text), DIM))
    find = by_name(edited, "find")
    assert dense(after[find.id]) == dense(before[find.id])


async def test_removing_a_method_deletes_its_point(indexer: Indexer, store: VectorStore) -> None:
    owner = chunked(OWNER)
    await indexer.write(REPO, [owner])
    trimmed = chunked(OWNER.replace("    public int count() {\n        return 42;\n    }\n\n", ""))

    plan = await indexer.write(REPO, [trimmed])

    gone = by_name(owner, "count").id
    assert plan.delete == (gone,)
    assert set(await points(store)) == ids(trimmed.chunks) == ids(owner.chunks) - {gone}


async def test_stale_points_survive_a_failed_upsert(
    indexer: Indexer, store: VectorStore, server: FakeEmbeddingServer, http: httpx.AsyncClient
) -> None:
    # Deletes come last: when the new vectors cannot be stored, the old points of the file still answer.
    owner = chunked(OWNER)
    await indexer.write(REPO, [owner])
    with FakeEmbeddingServer(dim=DIM // 2) as wrong_size:
        broken = Indexer(store, embedder_for(wrong_size, http), Clock())
        trimmed = chunked(OWNER.replace("    public int count() {\n        return 42;\n    }\n\n", ""))

        with pytest.raises(StorageError):
            await broken.write(REPO, [trimmed])

    assert set(await points(store)) == ids(owner.chunks)


async def test_embedding_outage_leaves_the_stored_points_intact(
    indexer: Indexer, store: VectorStore, server: FakeEmbeddingServer, clock: Clock
) -> None:
    owner = chunked(OWNER)
    await indexer.write(REPO, [owner])
    before = await points(store)
    clock.now = T0 + timedelta(days=1)
    edited = chunked(
        OWNER.replace("return 42;", "return 43;").replace(
            "    public void delete(Long id) {\n        System.out.println(id);\n    }\n", ""
        ),
        sha=SHA_2,
    )
    server.fail_next(2, status=500)  # one attempt and max_retries=1 retry

    with pytest.raises(EmbeddingUnavailableError):
        await indexer.write(REPO, [edited])

    after = await points(store)
    assert set(after) == set(before)  # the removed method's point was not deleted
    for point_id, record in before.items():
        assert payload(after[point_id]) == payload(record)  # not even refreshed
        assert dense(after[point_id]) == dense(record)


async def test_renamed_file_keeps_its_vectors_under_new_ids(
    indexer: Indexer, store: VectorStore, server: FakeEmbeddingServer
) -> None:
    old = chunked(OWNER)
    await indexer.write(REPO, [old])
    before = await points(store)
    calls = server.calls
    new_path = "pets/src/main/java/demo/owners/OwnerService.java"
    renamed = chunked(OWNER, new_path)

    plan = await indexer.write(REPO, [renamed], moved_from={new_path: OWNER_PATH})

    assert server.calls == calls
    assert plan.embed == ()
    assert plan.delete == tuple(sorted(ids(old.chunks)))
    after = await points(store)
    assert set(after) == ids(renamed.chunks)
    for chunk in renamed.chunks:
        assert payload(after[chunk.id])["file_path"] == new_path
        previous = next(c for c in old.chunks if move_key(c) == move_key(chunk))
        assert dense(after[chunk.id]) == dense(before[previous.id])


async def test_delete_files_removes_only_those_files(indexer: Indexer, store: VectorStore) -> None:
    owner, pet = chunked(OWNER), chunked(PET, PET_PATH)
    await indexer.write(REPO, [owner, pet])

    removed = await indexer.delete_files(REPO, [OWNER_PATH, "pets/src/main/java/demo/Never.java"])

    assert removed == 4
    assert set(await points(store)) == ids(pet.chunks)


async def test_delete_files_is_scoped_to_the_repository(indexer: Indexer, store: VectorStore) -> None:
    ours, theirs = chunked(OWNER), chunked(OWNER, repo=OTHER_REPO)
    await indexer.write(REPO, [ours])
    await indexer.write(OTHER_REPO, [theirs])

    assert await indexer.delete_files(REPO, [OWNER_PATH]) == 4

    assert await points(store) == {}
    assert set(await points(store, OTHER_REPO)) == ids(theirs.chunks)


async def test_delete_repo_removes_every_point_of_one_repository(indexer: Indexer, store: VectorStore) -> None:
    await indexer.write(REPO, [chunked(OWNER), chunked(PET, PET_PATH)])
    theirs = chunked(PET, PET_PATH, repo=OTHER_REPO)
    await indexer.write(OTHER_REPO, [theirs])

    await indexer.delete_repo(REPO)

    assert await points(store) == {}
    assert set(await points(store, OTHER_REPO)) == ids(theirs.chunks)
    assert await store.count() == 2


async def test_write_into_a_new_generation_leaves_the_aliased_one_alone(
    indexer: Indexer, store: VectorStore, server: FakeEmbeddingServer
) -> None:
    await indexer.write(REPO, [chunked(OWNER)])
    building = await store.create_generation(IndexModel(embedding_model=MODEL, dimension=DIM))
    calls = server.calls

    plan = await indexer.write(REPO, [chunked(PET, PET_PATH)], collection=building)

    assert len(plan.embed) == 2
    assert server.calls == calls + 1
    assert await store.count() == 4
    assert (await store.client.count(building)).count == 2


async def test_run_counts_of_an_incremental_run(indexer: Indexer) -> None:
    counts = RunCounts()
    first = [chunked(OWNER), chunked(PET, PET_PATH)]
    counts.add(await indexer.write(REPO, first), first)
    second = [chunked(OWNER.replace("return 42;", "return 0;")), chunked("", PET_PATH)]

    plan: WritePlan = await indexer.write(REPO, second)
    counts.add(plan, second)

    assert plan.per_file == {OWNER_PATH: (1, 3, 0), PET_PATH: (0, 0, 2)}
    assert (counts.files, counts.embedded, counts.reused, counts.deleted, counts.skipped) == (4, 7, 3, 2, 1)
    assert counts.skipped_reasons == {"empty": 1}


async def test_lexical_only_indexer_writes_without_an_embedder(clock: Clock) -> None:
    store = VectorStore(AsyncQdrantClient(location=":memory:"), ALIAS)
    await store.ensure(IndexModel(embedding_model=None, dimension=None))
    owner = chunked(OWNER)
    try:
        plan = await Indexer(store, None, clock).write(REPO, [owner])
        again = await Indexer(store, None, clock).write(REPO, [owner])
        stored = await points(store)
    finally:
        await store.close()

    assert len(plan.embed) == 4
    assert again.embed == ()
    assert set(stored) == ids(owner.chunks)
    assert all(isinstance(r.vector, dict) and DENSE not in r.vector for r in stored.values())
