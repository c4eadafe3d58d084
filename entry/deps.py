"""The composition root: `open_deps` builds the one frozen `Deps` (`app.runtime`) the entry points share.

The CLI needs only the store and search (`open_deps`); the web app adds PostgreSQL and the arq queue
(`open_service`, typed `ServiceDeps`); the worker adds the GitLab client and a parse executor
(`open_sync`, typed `SyncDeps`). `open_deps` opens what it is asked for and closes it in reverse
order, and wires the parts into each other (the library reader into search).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Protocol, TypeVar

import httpx

from app.core.settings import Settings
from app.runtime import Deps, ServiceDeps, SyncDeps, service_deps, sync_deps
from app.search.crossencoder import build_cross_encoder
from app.search.offload import bounded
from app.search.scoping import ReadableLibraries
from app.search.service import SearchService
from app.store.embeddings import Embedder, build_embedder
from app.store.engines import Store, open_store
from app.store.indexing import Clock, Indexer, utc_now
from app.store.models import RoutedEmbedder
from app.store.summaries import build_summarizer

if TYPE_CHECKING:  # PostgreSQL, Redis and GitLab are imported when opened: `javakb search` needs none of them
    from arq.connections import ArqRedis

    from app.db import Database
    from app.gitlab.client import GitLabClient

_Part = TypeVar("_Part")


class Wrap(Protocol):
    """Given each part `open_deps` builds and its role, returns the part to use in its place.

    Roles: `qdrant` (the qdrant-client), `store`, `embedder` (None when lexical-only), `db`, `gitlab`,
    `indexer`. Production keeps every part as built; a benchmark passes timed stand-ins and a test a
    spy, each injected before the services that use it are built.
    """

    def __call__(self, role: str, part: _Part, /) -> _Part:
        """The part to use for `role`."""
        ...


def as_built(role: str, part: _Part, /) -> _Part:
    """Every part as `open_deps` built it."""
    return part


@asynccontextmanager
async def open_deps(settings: Settings, *, clock: Clock = utc_now, wrap: Wrap = as_built) -> AsyncIterator[Deps]:
    """The store, search and the indexer, closed on exit. `wrap` may stand in for any part (see `Wrap`)."""
    async with _open(settings, clock=clock, wrap=wrap) as deps:
        yield deps


@asynccontextmanager
async def open_service(
    settings: Settings, *, clock: Clock = utc_now, with_gitlab: bool = False, wrap: Wrap = as_built
) -> AsyncIterator[ServiceDeps]:
    """`open_deps` and PostgreSQL and Redis: `ServiceDeps`, a `SyncDeps` when `with_gitlab`."""
    async with _open(settings, clock=clock, wrap=wrap, service=True, with_gitlab=with_gitlab) as deps:
        yield sync_deps(deps) if with_gitlab else service_deps(deps)


@asynccontextmanager
async def open_sync(settings: Settings, *, clock: Clock = utc_now, wrap: Wrap = as_built) -> AsyncIterator[SyncDeps]:
    """`open_deps` and PostgreSQL, Redis and GitLab: what the worker's jobs take."""
    async with open_service(settings, clock=clock, with_gitlab=True, wrap=wrap) as deps:
        yield sync_deps(deps)


@asynccontextmanager
async def _open(
    settings: Settings, *, clock: Clock, wrap: Wrap, service: bool = False, with_gitlab: bool = False
) -> AsyncIterator[Deps]:
    """Open the clients and services (PostgreSQL and Redis when `service`); close them in reverse order on exit."""
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx.AsyncClient(timeout=httpx.Timeout(settings.embedding.timeout_s)))
        store = wrap("store", open_store(settings.qdrant, lambda client: wrap("qdrant", client), serving=service))
        stack.push_async_callback(store.close)
        # One thread for the embedded model's batches of chunks, off the event loop and off the searches' thread.
        embed_cpu = stack.enter_context(ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed"))
        current = wrap("embedder", build_embedder(settings.embedding, http, embed_cpu))
        following = build_embedder(settings.next_embedding, http, embed_cpu) if settings.next_embedding else current
        embedder = _serving(store, current, following) if settings.next_embedding else current
        summarizer = build_summarizer(settings.summaries, http)
        db = wrap("db", await _open_db(settings, stack)) if service else None
        queue = await _open_queue(settings, stack) if service else None
        gitlab = wrap("gitlab", _open_gitlab(settings, stack)) if with_gitlab else None
        executor = _open_executor(settings, stack) if with_gitlab else None
        # One thread for every search's pure stretches, off the event loop (`app.search.offload`).
        search_cpu = stack.enter_context(ThreadPoolExecutor(max_workers=1, thread_name_prefix="search"))
        yield Deps(
            settings=settings,
            http=http,
            store=store,
            embedder=embedder,
            indexer=wrap("indexer", Indexer(store, embedder, clock, summarizer=summarizer)),
            search=SearchService(
                store,
                embedder,
                settings.gitlab.url,
                max_query_chars=settings.access.max_query_chars,
                max_query_terms=settings.access.max_query_terms,
                cross_encoder=build_cross_encoder(settings.rerank, http),
                generated_code=settings.search.generated_code,
                offload=bounded(search_cpu),
                max_concurrent=settings.search.max_concurrent,
                dense_weight=settings.embedding.fusion_weight,
                libraries=_readable_libraries(db) if db is not None else None,
            ),
            next_embedder=following,
            db=db,
            queue=queue,
            gitlab=gitlab,
            executor=executor,
        )


def _readable_libraries(db: Database) -> ReadableLibraries:
    """Which library versions a caller may read: those its readable projects declare (`app.libraries.usage`)."""
    from app.libraries.usage import readable_versions

    return lambda access: readable_versions(db, access)


def _serving(store: Store, current: Embedder | None, next_model: Embedder | None) -> Embedder | None:
    """The embedder of the alias's generation: routed between two dense models while a rebuild changes it."""
    if current is None or next_model is None:
        return current  # lexical-only on either side: the new model is taken at the next start (operations.md)
    return RoutedEmbedder(store, current, next_model)


async def _open_db(settings: Settings, stack: AsyncExitStack) -> Database:
    dsn = settings.postgres.dsn.get_secret_value()
    from app.db import Database
    from app.db.migrate import apply_migrations

    await asyncio.to_thread(apply_migrations, dsn)  # safe on every start: yoyo locks and skips applied ones
    db = await Database.connect(dsn, min_size=settings.postgres.min_pool, max_size=settings.postgres.max_pool)
    stack.push_async_callback(db.close)
    return db


async def _open_queue(settings: Settings, stack: AsyncExitStack) -> ArqRedis:
    from app.jobs.redis import open_pool

    pool = await open_pool(settings.redis.url, settings.redis.queue)
    stack.push_async_callback(pool.aclose)
    return pool


def _open_gitlab(settings: Settings, stack: AsyncExitStack) -> GitLabClient:
    from app.gitlab.client import GitLabClient

    client = GitLabClient(settings.gitlab)
    stack.callback(client.close)
    return client


def _open_executor(settings: Settings, stack: AsyncExitStack) -> Executor | None:
    processes = settings.worker.parse_processes
    if processes <= 0:
        return None  # the event loop's default thread pool
    pool = ProcessPoolExecutor(max_workers=processes)
    stack.callback(pool.shutdown, wait=False, cancel_futures=True)
    return pool
