"""Runtime resources in one frozen `Deps`: what the services read, built by `entry.deps.open_deps`."""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from app.core.errors import ConfigError
from app.core.settings import Settings
from app.search.service import SearchService
from app.store.embeddings import Embedder
from app.store.engines import Store
from app.store.indexing import Indexer
from app.store.models import RoutedEmbedder, model_of
from app.store.vectors import IndexModel

if TYPE_CHECKING:  # PostgreSQL, Redis and GitLab are imported when opened: `javakb search` needs none of them
    from arq.connections import ArqRedis

    from app.db import Database
    from app.gitlab.client import GitLabClient


@dataclass(frozen=True, slots=True, kw_only=True)
class Deps:
    """What the CLI, the web app, the worker and the MCP server share."""

    settings: Settings
    http: httpx.AsyncClient
    store: Store
    embedder: Embedder | None
    indexer: Indexer
    next_embedder: Embedder | None = None  # what a model rebuild embeds with (`JAVAKB_NEXT_EMBEDDING__*`)
    search: SearchService
    db: Database | None = None
    queue: ArqRedis | None = None
    gitlab: GitLabClient | None = None
    executor: Executor | None = None

    async def index_model(self) -> IndexModel:
        """The model the configured embedder produces (probing its dimension once if needed)."""
        if isinstance(self.embedder, RoutedEmbedder):
            return await model_of(await self.embedder.serving())
        return await model_of(self.embedder)

    def require_db(self) -> Database:
        """The database, which this process must have opened."""
        if self.db is None:
            raise ConfigError("this process was started without PostgreSQL")
        return self.db

    def require_queue(self) -> ArqRedis:
        """The arq queue, which this process must have opened."""
        if self.queue is None:
            raise ConfigError("this process was started without Redis")
        return self.queue

    def require_gitlab(self) -> GitLabClient:
        """The GitLab client, which this process must have opened."""
        if self.gitlab is None:
            raise ConfigError("this process was started without GitLab access")
        return self.gitlab
