"""VectorStore over embedded Qdrant: generations behind an alias, the recorded model, payload shapes."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from qdrant_client import AsyncQdrantClient
from qdrant_client import models as qm

from app.core.errors import IndexMismatchError, StorageError
from app.store.payloads import stored_payload
from app.store.vectors import (
    DENSE,
    LEXICAL,
    SCHEMA_VERSION,
    IndexModel,
    StoredState,
    VectorStore,
    chunk_point,
)
from tests.support.java import REPO, chunk_java, only

ALIAS = "code"
LEXICAL_ONLY = IndexModel(embedding_model=None, dimension=None)
SMALL = IndexModel(embedding_model="fake-embed", dimension=8)
REBUILD = "javakb index PATH --rebuild"

CONTROLLER = """\
package demo.web;

import org.springframework.web.bind.annotation.*;

@RestController
@RequestMapping("/api/owners")
public class OwnerController {
    @GetMapping("/{ownerId}/pets/{petId}")
    public String pet(Long ownerId, Long petId) { return "pet"; }

    @GetMapping("/**")
    public String fallback() { return "any"; }

    private String helper() { return "x"; }
}
"""
CONTROLLER_PATH = "web/src/main/java/demo/web/OwnerController.java"


@pytest.fixture
async def client() -> AsyncIterator[AsyncQdrantClient]:
    client = AsyncQdrantClient(location=":memory:")
    yield client
    await client.close()


@pytest.fixture
def store(client: AsyncQdrantClient) -> VectorStore:
    return VectorStore(client, ALIAS)


async def alias_target(client: AsyncQdrantClient, alias: str = ALIAS) -> list[str]:
    aliases = (await client.get_aliases()).aliases
    return [a.collection_name for a in aliases if a.alias_name == alias]


async def collection_names(client: AsyncQdrantClient) -> set[str]:
    return {c.name for c in (await client.get_collections()).collections}


async def test_ensure_creates_the_first_generation_behind_the_alias(
    store: VectorStore, client: AsyncQdrantClient
) -> None:
    await store.ensure(SMALL)

    assert await collection_names(client) == {"code_1"}
    assert await alias_target(client) == ["code_1"]
    info = await client.get_collection("code_1")
    assert info.config.metadata == {"javakb_schema": SCHEMA_VERSION, "embedding_model": "fake-embed", "dimension": 8}
    assert await store.recorded_model() == SMALL


async def test_ensure_creates_a_dense_and_a_lexical_vector(store: VectorStore, client: AsyncQdrantClient) -> None:
    await store.ensure(SMALL)

    params = (await client.get_collection("code_1")).config.params
    assert isinstance(params.vectors, dict)
    assert set(params.vectors) == {DENSE}
    assert params.vectors[DENSE].size == 8
    assert params.vectors[DENSE].distance == qm.Distance.COSINE
    assert params.sparse_vectors is not None
    assert set(params.sparse_vectors) == {LEXICAL}
    assert params.sparse_vectors[LEXICAL].modifier == qm.Modifier.IDF


async def test_lexical_only_collection_has_no_dense_vector(store: VectorStore, client: AsyncQdrantClient) -> None:
    await store.ensure(LEXICAL_ONLY)

    info = await client.get_collection("code_1")
    assert info.config.params.vectors == {}
    assert info.config.params.sparse_vectors is not None
    assert set(info.config.params.sparse_vectors) == {LEXICAL}
    assert info.config.metadata == {"javakb_schema": SCHEMA_VERSION, "embedding_model": None, "dimension": None}
    assert await store.recorded_model() == LEXICAL_ONLY


async def test_reopening_with_the_same_model_keeps_the_collection(
    store: VectorStore, client: AsyncQdrantClient
) -> None:
    await store.ensure(SMALL)
    point = chunk_point(only(chunk_java(CONTROLLER, CONTROLLER_PATH), "demo.web.OwnerController.pet"), [1.0] * 8, "t")
    await store.upsert([point])

    await VectorStore(client, ALIAS).ensure(IndexModel(embedding_model="fake-embed", dimension=8))

    assert await collection_names(client) == {"code_1"}
    assert await alias_target(client) == ["code_1"]
    assert await store.count() == 1


@pytest.mark.parametrize(
    ("first", "second", "described"),
    [
        pytest.param(
            SMALL, IndexModel(embedding_model="other-embed", dimension=8), "fake-embed (8 dimensions)", id="model"
        ),
        pytest.param(
            SMALL, IndexModel(embedding_model="fake-embed", dimension=16), "fake-embed (8 dimensions)", id="dim"
        ),
        pytest.param(LEXICAL_ONLY, SMALL, "lexical-only", id="lexical-then-dense"),
        pytest.param(SMALL, LEXICAL_ONLY, "fake-embed (8 dimensions)", id="dense-then-lexical"),
    ],
)
async def test_reopening_with_another_model_is_refused(
    store: VectorStore, client: AsyncQdrantClient, first: IndexModel, second: IndexModel, described: str
) -> None:
    await store.ensure(first)

    with pytest.raises(IndexMismatchError) as raised:
        await store.ensure(second)

    message = str(raised.value)
    assert REBUILD in message
    assert described in message
    assert second.describe() in message
    assert await collection_names(client) == {"code_1"}  # nothing was created or dropped
    assert await store.recorded_model() == first


async def test_index_mismatch_is_a_storage_error(store: VectorStore) -> None:
    await store.ensure(LEXICAL_ONLY)

    with pytest.raises(StorageError):
        await store.ensure(SMALL)


async def test_mismatch_message_uses_the_given_rebuild_hint(store: VectorStore) -> None:
    await store.ensure(LEXICAL_ONLY)

    with pytest.raises(IndexMismatchError, match="POST /admin/rebuild"):
        await store.ensure(SMALL, rebuild_hint="POST /admin/rebuild")


async def test_a_collection_without_a_model_record_is_refused(store: VectorStore, client: AsyncQdrantClient) -> None:
    # Someone else's collection behind our alias: its vectors' model is unknown, so it is never written to.
    await client.create_collection("foreign", vectors_config={})
    await client.update_collection_aliases(
        [qm.CreateAliasOperation(create_alias=qm.CreateAlias(collection_name="foreign", alias_name=ALIAS))]
    )

    assert await store.recorded_model() is None
    with pytest.raises(IndexMismatchError, match="an unknown model") as raised:
        await store.ensure(LEXICAL_ONLY)
    assert REBUILD in str(raised.value)


async def test_ensure_recovers_from_a_first_generation_left_without_its_alias(
    store: VectorStore, client: AsyncQdrantClient
) -> None:
    # A first run that died between creating `code_1` and pointing the alias at it (on a server, the
    # payload indexes are created in between) must not make the store unusable for good.
    await store.create_generation(SMALL, generation=1)

    await store.ensure(SMALL)

    targets = await alias_target(client)
    assert len(targets) == 1
    assert await store.recorded_model() == SMALL


async def test_create_generation_numbers_after_the_highest_and_leaves_the_alias(
    store: VectorStore, client: AsyncQdrantClient
) -> None:
    await store.ensure(LEXICAL_ONLY)
    await client.create_collection("code_old", vectors_config={})  # not a generation: ignored when numbering

    second = await store.create_generation(SMALL)
    third = await store.create_generation(SMALL)

    assert (second, third) == ("code_2", "code_3")
    assert await alias_target(client) == ["code_1"]
    assert (await client.get_collection("code_2")).config.metadata == SMALL.metadata()


async def test_switch_alias_moves_the_alias_and_returns_the_previous_collection(
    store: VectorStore, client: AsyncQdrantClient
) -> None:
    await store.ensure(LEXICAL_ONLY)
    new = await store.create_generation(SMALL)

    previous = await store.switch_alias(new)

    assert previous == "code_1"
    assert await alias_target(client) == ["code_2"]
    assert await store.recorded_model() == SMALL
    assert await collection_names(client) == {"code_1", "code_2"}  # dropping the old one is the caller's call


async def test_switch_alias_without_an_alias_returns_none(store: VectorStore, client: AsyncQdrantClient) -> None:
    name = await store.create_generation(SMALL)

    assert await store.switch_alias(name) is None
    assert await alias_target(client) == ["code_1"]


async def test_switch_alias_leaves_other_aliases_alone(client: AsyncQdrantClient) -> None:
    ours, theirs = VectorStore(client, ALIAS), VectorStore(client, "other")
    await ours.ensure(LEXICAL_ONLY)
    await theirs.ensure(LEXICAL_ONLY)

    await ours.switch_alias(await ours.create_generation(LEXICAL_ONLY))

    assert await alias_target(client, ALIAS) == ["code_2"]
    assert await alias_target(client, "other") == ["other_1"]


async def test_drop_collection_removes_an_old_generation(store: VectorStore, client: AsyncQdrantClient) -> None:
    await store.ensure(LEXICAL_ONLY)
    previous = await store.switch_alias(await store.create_generation(LEXICAL_ONLY))
    assert previous is not None

    await store.drop_collection(previous)

    assert await collection_names(client) == {"code_2"}


async def test_writes_go_to_the_alias_or_to_an_explicit_generation(store: VectorStore) -> None:
    await store.ensure(LEXICAL_ONLY)
    building = await store.create_generation(LEXICAL_ONLY)
    chunks = chunk_java(CONTROLLER, CONTROLLER_PATH).chunks

    await store.upsert([chunk_point(c, None, "t") for c in chunks], collection=building)

    assert await store.count() == 0
    stored = await store.stored_hashes(REPO, [CONTROLLER_PATH], collection=building)
    assert stored == {c.id: (CONTROLLER_PATH, c.content_hash) for c in chunks}


async def test_stored_hashes_of_no_files_is_empty(store: VectorStore) -> None:
    await store.ensure(LEXICAL_ONLY)

    assert await store.stored_hashes(REPO, []) == {}


async def test_scroll_pages_through_every_match(store: VectorStore) -> None:
    await store.ensure(LEXICAL_ONLY)
    chunks = chunk_java(CONTROLLER, CONTROLLER_PATH).chunks
    await store.upsert([chunk_point(c, None, "t") for c in chunks])
    where = qm.Filter(must=[qm.FieldCondition(key="repo_path", match=qm.MatchValue(value=REPO))])

    ids = [str(r.id) async for r in store.scroll(where, ["qualified_name"], page=1)]

    assert sorted(ids) == sorted(c.id for c in chunks)
    assert len(chunks) == 4


async def test_set_payloads_and_delete_ids(store: VectorStore) -> None:
    await store.ensure(LEXICAL_ONLY)
    chunks = chunk_java(CONTROLLER, CONTROLLER_PATH).chunks
    await store.upsert([chunk_point(c, None, "t1") for c in chunks])

    await store.set_payloads({chunks[0].id: {"indexed_at": "t2"}})
    await store.delete_ids([chunks[1].id])

    records = await store.client.retrieve(ALIAS, [c.id for c in chunks])
    by_id = {str(r.id): r.payload or {} for r in records}
    assert set(by_id) == {chunks[0].id, chunks[2].id, chunks[3].id}
    assert by_id[chunks[0].id] == {"indexed_at": "t2"}  # replaced whole, not merged (a merge drops null keys)
    assert by_id[chunks[2].id]["indexed_at"] == "t1"


async def test_upsert_of_a_wrong_size_vector_is_a_storage_error(store: VectorStore) -> None:
    await store.ensure(SMALL)
    chunk = chunk_java(CONTROLLER, CONTROLLER_PATH).chunks[0]

    with pytest.raises(StorageError, match="upsert of 1 points failed"):
        await store.upsert([chunk_point(chunk, [1.0, 0.0], "t")])


async def test_count_without_a_collection_is_a_storage_error(store: VectorStore) -> None:
    with pytest.raises(StorageError, match="count failed"):
        await store.count()


@pytest.mark.parametrize("operation", ["recorded_model", "switch_alias", "create_generation"])
async def test_qdrant_errors_of_collection_management_are_storage_errors(store: VectorStore, operation: str) -> None:
    # The module promises that every qdrant-client exception leaves it as a StorageError.
    await store.create_generation(SMALL, generation=1)  # so that creating generation 1 again fails

    with pytest.raises(StorageError):
        if operation == "recorded_model":
            await store.recorded_model()  # no alias yet
        elif operation == "switch_alias":
            await store.switch_alias("code_9")  # no such collection
        else:
            await store.create_generation(SMALL, generation=1)


def test_payload_has_lookup_keys_and_no_embedding_text() -> None:
    chunk = only(chunk_java(CONTROLLER, CONTROLLER_PATH, repo="acme/pets/shop"), "demo.web.OwnerController.pet")

    payload = stored_payload(chunk, "2025-01-02T03:04:05+00:00")

    assert "text" not in payload
    assert payload["indexed_at"] == "2025-01-02T03:04:05+00:00"
    assert payload["repo_prefixes"] == ["acme/", "acme/pets/", "acme/pets/shop"]
    assert payload["path_prefixes"] == [
        "web/",
        "web/src/",
        "web/src/main/",
        "web/src/main/java/",
        "web/src/main/java/demo/",
        "web/src/main/java/demo/web/",
        CONTROLLER_PATH,
    ]
    assert payload["http_path"] == ["/api/owners/{ownerId}/pets/{petId}"]
    assert payload["http_keys"] == ["5:api"]
    assert payload["symbol_type"] == "method"
    assert payload["id"] == chunk.id
    assert payload["content_hash"] == chunk.content_hash
    assert payload["code"] == chunk.code


def test_payload_of_a_wildcard_route_and_of_no_route() -> None:
    result = chunk_java(CONTROLLER, CONTROLLER_PATH)

    assert stored_payload(only(result, "demo.web.OwnerController.fallback"), "t")["http_keys"] == ["**"]
    assert stored_payload(only(result, "demo.web.OwnerController.helper"), "t")["http_keys"] == []


def test_payload_of_a_single_segment_repo_and_a_root_file() -> None:
    chunk = chunk_java("class A { void m() {} }", "A.java", repo="shop").chunks[0]

    payload = stored_payload(chunk, "t")

    assert payload["repo_prefixes"] == ["shop"]
    assert payload["path_prefixes"] == ["A.java"]


def test_point_carries_the_lexical_vector_and_the_dense_one_when_given() -> None:
    chunk = only(chunk_java(CONTROLLER, CONTROLLER_PATH), "demo.web.OwnerController.pet")

    lexical = chunk_point(chunk, None, "t")
    hybrid = chunk_point(chunk, [0.5] * 8, "t")

    assert lexical.id == hybrid.id == chunk.id
    assert isinstance(lexical.vector, dict)
    assert isinstance(hybrid.vector, dict)
    assert set(lexical.vector) == {LEXICAL}
    assert set(hybrid.vector) == {LEXICAL, DENSE}
    assert hybrid.vector[DENSE] == [0.5] * 8
    sparse = lexical.vector[LEXICAL]
    assert isinstance(sparse, qm.SparseVector)
    assert len(sparse.indices) == len(sparse.values) > 0


def test_index_model_describes_itself() -> None:
    assert SMALL.describe() == "fake-embed (8 dimensions)"
    assert LEXICAL_ONLY.describe() == "lexical-only"


def test_a_stored_state_splits_by_file() -> None:
    state = StoredState()
    state.add("p1", "A.java", "h1", "ph1")
    state.add("p2", "B.java", "h2", "ph2")
    state.add("p3", "A.java", "h3", "ph3")
    part = state.of_files(["A.java", "C.java", "A.java"])
    assert part.hashes == {"p1": ("A.java", "h1"), "p3": ("A.java", "h3")}
    assert part.payloads == {"p1": "ph1", "p3": "ph3"}
    assert part.by_file == {"A.java": ["p1", "p3"]}
    assert state.of_files([]).hashes == {}
