"""The adapters translate every failure of their client in one place (issues 11 and 25).

Every `VectorStore` call against a Qdrant server where nothing listens, every search entry point
over such a store, and every `Database` write during a PostgreSQL outage leave the adapter as a
`StorageError` (chained to the client's own exception), never as a qdrant-client or asyncpg one;
every Redis call (`app.jobs.redis`, the enqueues of `app.jobs.queue`) as a `QueueUnavailableError`.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
import pytest_asyncio
from arq import create_pool
from arq.connections import ArqRedis, RedisSettings
from qdrant_client import AsyncQdrantClient
from qdrant_client import models as qm
from qdrant_client.http.exceptions import ApiException
from redis.exceptions import RedisError, ResponseError

from app.auth.access import LOCAL, Access
from app.core.errors import QueueUnavailableError, StorageError, UnstorableError
from app.core.events import GitLabEvent
from app.core.settings import EmbeddingSettings
from app.core.states import DeliveryOutcome, ProjectStatus, RequestSource, RunStatus, SyncMode
from app.db import Database, JobCounts, NewRequest
from app.jobs import queue
from app.jobs import redis as redis_adapter
from app.search.service import SearchService
from app.store import filters
from app.store.embeddings import OpenAIEmbedder
from app.store.indexing import Indexer
from app.store.qdrant_thread import threaded_local_client
from app.store.vectors import IndexModel, VectorStore
from testkit.fake_embedder import FakeEmbeddingServer
from tests.support.java import chunk_java
from tests.support.pg_outage import postgres_down

UNUSED_PORT = 1  # nothing listens there: a Qdrant server that is down (as in test_lifecycle.py)
ALIAS = "java_code"
MODEL = IndexModel(embedding_model=None, dimension=None)
SOURCE = "package demo;\n\npublic class Owners {\n    public int count() {\n        return 1;\n    }\n}\n"

StoreCall = Callable[[VectorStore], Awaitable[Any]]


@pytest_asyncio.fixture
async def down_store() -> AsyncIterator[VectorStore]:
    client = AsyncQdrantClient(url=f"http://127.0.0.1:{UNUSED_PORT}", timeout=1, check_compatibility=False)
    try:
        yield VectorStore(client, ALIAS, server=True)
    finally:
        await client.close()


def _point() -> qm.PointStruct:
    return qm.PointStruct(id=str(uuid.uuid4()), vector={}, payload={"repo_path": "a/b"})


async def _first_scrolled(store: VectorStore) -> list[qm.Record]:
    return [r async for r in store.scroll(filters.everything(), True)]


STORE_CALLS: dict[str, StoreCall] = {
    "ensure": lambda s: s.ensure(MODEL),
    "recorded_model": lambda s: s.recorded_model(),
    "create_generation": lambda s: s.create_generation(MODEL),
    "create_generation_numbered": lambda s: s.create_generation(MODEL, generation=3),
    "switch_alias": lambda s: s.switch_alias(f"{ALIAS}_1"),
    "drop_collection": lambda s: s.drop_collection(f"{ALIAS}_1"),
    "query": lambda s: s.query(lexical=None, dense=[1.0, 0.0], where=None, limit=5),
    "scroll": _first_scrolled,
    "stored_state": lambda s: s.stored_state("a/b", None),
    "upsert": lambda s: s.upsert([_point()]),
    "set_payloads": lambda s: s.set_payloads({str(uuid.uuid4()): {"x": 1}}),
    "delete_ids": lambda s: s.delete_ids([str(uuid.uuid4())]),
    "delete_where": lambda s: s.delete_where(filters.all_of(filters.eq("repo_path", "a/b"))),
    "set_payload_where": lambda s: s.set_payload_where(filters.all_of(filters.eq("repo_path", "a/b")), {"x": 1}),
    "counts_by": lambda s: s.counts_by("repo_path"),
    "count": lambda s: s.count(),
}


@pytest.mark.parametrize("call", STORE_CALLS.values(), ids=STORE_CALLS.keys())
async def test_every_store_call_on_a_qdrant_that_is_down_is_a_storage_error(
    down_store: VectorStore, call: StoreCall
) -> None:
    with pytest.raises(StorageError) as raised:
        await call(down_store)
    assert isinstance(raised.value.__cause__, ApiException)  # qdrant-client's connection error, translated


SEARCH_CALLS: dict[str, Callable[[SearchService, Access], Awaitable[Any]]] = {
    "search": lambda s, a: s.search(a, "owner count"),
    "symbol": lambda s, a: s.symbol(a, "Owners.count"),
    "callers": lambda s, a: s.callers(a, "count"),
    "implementations": lambda s, a: s.implementations(a, "Repository"),
    "outline": lambda s, a: s.outline(a, "a/b", "src/Owners.java"),
    "repositories": lambda s, a: s.repositories(a),
}


@pytest.mark.parametrize("call", SEARCH_CALLS.values(), ids=SEARCH_CALLS.keys())
@pytest.mark.parametrize("access", [LOCAL, Access(subject="user:1", project_ids=frozenset({1, 2}))], ids=["all", "ids"])
async def test_a_search_over_a_qdrant_that_is_down_is_a_storage_error(
    down_store: VectorStore, call: Callable[[SearchService, Access], Awaitable[Any]], access: Access
) -> None:
    with pytest.raises(StorageError):
        await call(SearchService(down_store, None), access)


async def test_qdrant_failing_after_the_query_was_embedded_is_a_storage_error(down_store: VectorStore) -> None:
    # The middle of a hybrid search: the embedding endpoint answered, then the fused query fails.
    with FakeEmbeddingServer(dim=8) as server:
        async with httpx.AsyncClient() as http:
            embedder = OpenAIEmbedder(EmbeddingSettings(base_url=server.base_url, dimensions=8), http)
            # The first store call after the embedding is the scope's library probe (a count), then the query.
            with pytest.raises(StorageError, match=r"Qdrant (count|query) failed"):
                await SearchService(down_store, embedder).search(LOCAL, "owner count")
        assert server.calls == 1


async def test_a_collection_gone_under_a_search_is_a_storage_error() -> None:
    # Embedded Qdrant (through the thread facade) raises ValueError for a missing collection.
    store = VectorStore(threaded_local_client(":memory:"), ALIAS)
    try:
        await store.ensure(MODEL)
        await Indexer(store, None).write("a/b", [chunk_java(SOURCE, "src/Owners.java", repo="a/b")])
        search = SearchService(store, None)
        assert [h.qualified_name for h in await search.search(LOCAL, "owners count")] != []
        await store.drop_collection(f"{ALIAS}_1")  # the alias goes with its collection
        with pytest.raises(StorageError, match="Qdrant query failed"):
            await search.search(LOCAL, "owners count")
    finally:
        await store.close()


@pytest_asyncio.fixture
async def db(clean_db: str) -> AsyncIterator[Database]:
    database = await Database.connect(clean_db, max_size=2)
    try:
        await database.request_sync(7, "acme/shop", "main", "a" * 40)
        yield database
    finally:
        await database.close()


DbCall = Callable[[Database], Awaitable[Any]]
DB_WRITES: dict[str, DbCall] = {
    "update_manifest": lambda d: d.update_manifest(7, {"A.java": ("b" * 40, ["id-1"])}, ["B.java"]),
    "delete_project": lambda d: d.delete_project(7),
    "rename_project": lambda d: d.rename_project(7, "acme/store"),
    "mark_synced": lambda d: d.mark_synced(7, "a" * 40, 1, "main"),
    "mark_out_of_scope": lambda d: d.mark_out_of_scope(7, "archived", 1),
    "set_status": lambda d: d.set_status(7, ProjectStatus.FAILED, "boom"),
    "request_sync": lambda d: d.request_sync(7, "acme/shop", "main", None),
    "record_delivery": lambda d: d.record_delivery("k", "push", 7, "main", None, DeliveryOutcome.ENQUEUED, ""),
    "start_run": lambda d: d.start_run(7, GitLabEvent.PUSH, None),
    "finish_run": lambda d: d.finish_run(
        1, status=RunStatus.DONE, to_sha=None, mode=SyncMode.COMPARE, counts=JobCounts(), error=None
    ),
    "create_backfill": lambda d: d.create_backfill(None, False),
    "create_request": lambda d: d.create_request(
        NewRequest(
            project_id=7,
            repo_path="acme/shop",
            default_branch="main",
            commit_sha="a" * 40,
            source=RequestSource.INDEX_TOKEN,
            requested_by="index_token:ci",
        )
    ),
    "record_heads": lambda d: d.record_heads([(7, "a" * 40)]),
    "request_syncs": lambda d: d.request_syncs([(7, "acme/shop", "main", False)]),
    "set_lag_commits": lambda d: d.set_lag_commits(7, "a" * 40, 3),
    "statuses": lambda d: d.statuses(everything=True),
}


async def _lock_and_write(d: Database) -> None:
    async with d.project_lock(7):
        pass


@pytest.mark.parametrize("call", [*DB_WRITES.values(), _lock_and_write], ids=[*DB_WRITES.keys(), "project_lock"])
async def test_a_db_write_during_a_postgresql_outage_is_a_storage_error(
    db: Database, clean_db: str, call: DbCall
) -> None:
    async with postgres_down(clean_db):
        with pytest.raises(StorageError) as raised:
            await call(db)
    assert raised.value.__cause__ is not None and not isinstance(raised.value, UnstorableError)


async def test_a_manifest_write_lost_in_an_outage_succeeds_when_retried(db: Database, clean_db: str) -> None:
    upserts = {"A.java": ("b" * 40, ["id-1"])}
    async with postgres_down(clean_db):
        with pytest.raises(StorageError, match="PostgreSQL transaction failed"):
            await db.update_manifest(7, upserts, [])
    assert await db.manifest(7) == {}
    await db.update_manifest(7, upserts, [])  # the pool reconnects: the retried write lands
    assert await db.manifest(7) == {"A.java": "b" * 40}


async def test_a_manifest_value_postgresql_refuses_is_unstorable_not_an_outage(db: Database) -> None:
    with pytest.raises(UnstorableError, match="cannot store a value"):
        await db.update_manifest(7, {"A\x00.java": ("b" * 40, [])}, [])
    assert await db.manifest(7) == {}  # the transaction wrote nothing


# Redis (issue 25): every call of the Redis adapter, and every enqueue over it, leaves as
# `QueueUnavailableError` chained to redis-py's error, whether Redis is down or refuses the command.

RedisCall = Callable[[ArqRedis], Awaitable[Any]]
REDIS_CALLS: dict[str, RedisCall] = {
    "ping": redis_adapter.ping,
    "take_limit": lambda q: redis_adapter.take_limit(q, "javakb:refresh-limit:1", 1000),
    "health_record": lambda q: redis_adapter.health_record(q, "javakb:health-check:w", "javakb:queue"),
    "queue_head": lambda q: redis_adapter.queue_head(q, "javakb:queue", 0.0),
    "enqueue_sync": lambda q: queue.enqueue_sync(q, 1, 1, GitLabEvent.PUSH),
    "enqueue_once": lambda q: queue.enqueue_once(q, queue.PURGE, "purge:1:k", 1),
    "enqueue_step": lambda q: queue.enqueue_step(q, 1, "t", 1),
    "enqueue_libraries": queue.enqueue_libraries,
    "push_syncs": lambda q: queue.push_syncs(q, [(1, 1, GitLabEvent.PUSH)]),
}


@pytest.mark.parametrize("call", REDIS_CALLS.values(), ids=REDIS_CALLS.keys())
async def test_every_redis_call_on_a_redis_that_is_down_is_a_queue_error(call: RedisCall) -> None:
    down = ArqRedis(host="127.0.0.1", port=UNUSED_PORT, default_queue_name="javakb:queue")
    try:
        with pytest.raises(QueueUnavailableError) as raised:
            await call(down)
    finally:
        await down.aclose()
    assert isinstance(raised.value.__cause__, RedisError | OSError)


async def test_doctors_ping_of_a_redis_that_is_down_is_a_queue_error() -> None:
    with pytest.raises(QueueUnavailableError, match="ConnectionError") as raised:
        await redis_adapter.ping_url(f"redis://127.0.0.1:{UNUSED_PORT}/0")
    assert isinstance(raised.value.__cause__, RedisError)


@pytest.mark.parametrize("name", ["health_record", "queue_head", "enqueue_sync", "push_syncs"])
async def test_a_command_redis_refuses_is_a_queue_error(clean_redis: str, name: str) -> None:
    # The queue's sorted set holds a string instead: Redis answers WRONGTYPE (a `ResponseError`,
    # not a connection failure).
    pool = await create_pool(RedisSettings.from_dsn(clean_redis), default_queue_name="javakb:queue")
    try:
        await pool.set("javakb:queue", "not a sorted set")
        with pytest.raises(QueueUnavailableError, match="WRONGTYPE") as raised:
            await REDIS_CALLS[name](pool)
    finally:
        await pool.aclose()
    assert isinstance(raised.value.__cause__, ResponseError)
