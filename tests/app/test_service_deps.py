"""Each entry point is composed with the parts it needs, typed: a missing one stops it at start (issue 25).

`javakb search` and the local API take `Deps` (the store and search alone); the web app and the worker
take `ServiceDeps` (PostgreSQL and Redis), and the jobs that read GitLab `SyncDeps`. Composed from a
`Deps` without them, they refuse with a `ConfigError` that names what is missing, before any request
or job runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from pydantic import SecretStr

from app.core.errors import ConfigError
from app.core.settings import GitLabSettings, PostgresSettings, QdrantSettings, QueueSettings, Settings
from app.runtime import Deps, ServiceDeps, SyncDeps, service_deps, sync_deps
from entry.deps import open_deps, open_service
from entry.web import create_app
from entry.worker import build_worker, purge_project, sync_of


def service_settings(dsn: str, redis_url: str) -> Settings:
    return Settings(
        postgres=PostgresSettings(dsn=SecretStr(dsn)),
        redis=QueueSettings(url=redis_url, queue="javakb:test:deps"),
        qdrant=QdrantSettings(path=":memory:"),
    )


@pytest.fixture
async def search_only() -> AsyncIterator[Deps]:
    """What `javakb search` composes: no PostgreSQL, Redis or GitLab."""
    async with open_deps(Settings(qdrant=QdrantSettings(path=":memory:"))) as deps:
        yield deps


async def test_the_web_app_composed_without_postgresql_and_redis_refuses_at_start(search_only: Deps) -> None:
    with pytest.raises(ConfigError, match=r"^this process was started without PostgreSQL and Redis$"):
        create_app(search_only.settings, search_only)  # at composition: no lifespan, no request yet


async def test_the_worker_composed_without_postgresql_and_redis_refuses_at_start(search_only: Deps) -> None:
    with pytest.raises(ConfigError, match=r"^this process was started without PostgreSQL and Redis$"):
        build_worker(search_only.settings, search_only, burst=True, handle_signals=False)


async def test_narrowing_names_every_missing_part(search_only: Deps) -> None:
    with pytest.raises(ConfigError, match=r"^this process was started without PostgreSQL and Redis and GitLab access$"):
        sync_deps(search_only)


async def test_a_service_without_gitlab_serves_and_refuses_only_what_reads_gitlab(
    clean_db: str, clean_redis: str
) -> None:
    settings = service_settings(clean_db, clean_redis)
    async with open_service(settings) as service:
        assert type(service) is ServiceDeps
        assert service_deps(service) is service  # narrowing an already narrowed value keeps it
        create_app(settings, service)
        worker = build_worker(settings, service, burst=True, handle_signals=False)
        assert worker.ctx["deps"] is service
        with pytest.raises(ConfigError, match=r"^this process was started without GitLab access$"):
            sync_deps(service)
        with pytest.raises(ConfigError, match="without GitLab access"):
            await purge_project({"deps": service}, 7)  # `javakb serve` on bare defaults: this job cannot run


async def test_a_service_with_gitlab_is_the_sync_deps_its_jobs_take(clean_db: str, clean_redis: str) -> None:
    gitlab = GitLabSettings(url="http://127.0.0.1:9", token=SecretStr("t"))  # opened, never called
    settings = service_settings(clean_db, clean_redis).model_copy(update={"gitlab": gitlab})
    async with open_service(settings, with_gitlab=True) as service:
        assert isinstance(service, SyncDeps)
        assert sync_of({"deps": service}) is service
        assert service.gitlab is not None and service.db is not None and service.queue is not None
