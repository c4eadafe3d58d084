"""Runtime resources as frozen values, built by `entry.deps.open_deps` and narrowed once at start.

`Deps` is what every entry point has (the store, search, the indexer); PostgreSQL, Redis and GitLab
are optional there, because `javakb search` and the local API open none of them and the readers that
use them (MCP, REST search) work without. `ServiceDeps` is what the service mode guarantees (the web
app, the receiver, the worker): PostgreSQL and Redis. `SyncDeps` adds the GitLab client, which the
jobs that read GitLab take. `service_deps` and `sync_deps` narrow a `Deps` where an entry point is
composed, so a missing part stops the process at start with a `ConfigError`, never mid-request.
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Final

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


@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceDeps(Deps):
    """What the service mode guarantees: PostgreSQL and Redis (GitLab only where its URL is set)."""

    db: Database
    queue: ArqRedis


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncDeps(ServiceDeps):
    """What the jobs that read GitLab take: PostgreSQL, Redis and the GitLab client."""

    gitlab: GitLabClient


_NAMES: Final = {"db": "PostgreSQL", "queue": "Redis", "gitlab": "GitLab access"}


def service_deps(deps: Deps) -> ServiceDeps:
    """`deps` as `ServiceDeps`, or the `ConfigError` naming what this process was started without."""
    return deps if isinstance(deps, ServiceDeps) else ServiceDeps(**_parts(deps, ("db", "queue")))


def sync_deps(deps: Deps) -> SyncDeps:
    """`deps` as `SyncDeps`, or the `ConfigError` naming what this process was started without."""
    return deps if isinstance(deps, SyncDeps) else SyncDeps(**_parts(deps, ("db", "queue", "gitlab")))


def _parts(deps: Deps, needed: tuple[str, ...]) -> dict[str, Any]:
    missing = [_NAMES[name] for name in needed if getattr(deps, name) is None]
    if missing:
        raise ConfigError(f"this process was started without {' and '.join(missing)}")
    return {f.name: getattr(deps, f.name) for f in fields(deps)}
