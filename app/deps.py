"""Runtime resources in one frozen `Deps`, built by an async context manager in the entrypoints."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx

from app.embeddings import Embedder, build_embedder
from app.indexing import Clock, Indexer, utc_now
from app.search import SearchService
from app.settings import Settings
from app.vectors import IndexModel, VectorStore, open_client


@dataclass(frozen=True, slots=True, kw_only=True)
class Deps:
    """What the CLI, the web app, the worker and the MCP server share."""

    settings: Settings
    http: httpx.AsyncClient
    store: VectorStore
    embedder: Embedder | None
    indexer: Indexer
    search: SearchService

    async def index_model(self) -> IndexModel:
        """The model the configured embedder produces (probing its dimension once if needed)."""
        if self.embedder is None:
            return IndexModel(embedding_model=None, dimension=None)
        return IndexModel(embedding_model=self.embedder.model, dimension=await self.embedder.dimension())


@asynccontextmanager
async def open_deps(settings: Settings, *, clock: Clock = utc_now) -> AsyncIterator[Deps]:
    """Open the HTTP client, the Qdrant client and the services over them; close them on exit."""
    timeout = httpx.Timeout(settings.embedding.timeout_s)
    async with httpx.AsyncClient(timeout=timeout) as http:
        store = VectorStore(open_client(settings.qdrant), settings.qdrant.collection, server=bool(settings.qdrant.url))
        try:
            embedder = build_embedder(settings.embedding, http)
            yield Deps(
                settings=settings,
                http=http,
                store=store,
                embedder=embedder,
                indexer=Indexer(store, embedder, clock),
                search=SearchService(store, embedder, settings.gitlab_url),
            )
        finally:
            await store.close()
