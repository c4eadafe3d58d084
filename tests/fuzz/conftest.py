"""The whole app on a loopback port for the fuzzers, and a snapshot of everything a request may leave behind."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import httpx
import psycopg
import pytest
import redis
from pydantic import SecretStr

from app.core.settings import GitLabSettings, PostgresSettings, QdrantSettings, QueueSettings, Settings
from testkit.fake_gitlab import FakeGitLab
from tests.conftest import REDIS, reset_services
from tests.support.live_app import LiveApp, serve_app
from tests.support.tokens import admin_token, index_job_token, service_token

HOOK_SECRET: Final = "fuzz-hook-secret-0123456789"
ADMIN_TOKEN: Final = "fuzz-admin-token-0123456789"
API_TOKEN: Final = "fuzz-api-token-0123456789"
INDEX_TOKEN: Final = "fuzz-index-job-token-0123456789"
QUEUE: Final = "javakb:test-fuzz"
KEPT = ("deliveries", "projects", "backfills", "backfill_projects", "index_requests")


@dataclass(frozen=True, slots=True)
class Fuzzed:
    """The running app and the databases it writes to."""

    app: LiveApp
    pg: psycopg.Connection[tuple[object, ...]]
    redis: redis.Redis
    http: httpx.Client


_COUNTS = " UNION ALL ".join(f"SELECT count(*) FROM {table}" for table in KEPT)


def kept(fuzzed: Fuzzed) -> tuple[int, ...]:
    """Rows in every table a request may write, and jobs on the queue (any new one is something kept)."""
    rows = fuzzed.pg.execute(_COUNTS).fetchall()
    queued: Any = fuzzed.redis.zcard(QUEUE)
    jobs = len(list(fuzzed.redis.scan_iter("arq:job:*"))) + int(queued)
    return (*(int(str(r[0])) for r in rows), jobs)


@pytest.fixture(scope="module")
def fuzzed(pg_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    reset_services(pg_dsn)
    with FakeGitLab(tmp_path_factory.mktemp("fuzz-gitlab")) as gitlab:
        yield from _serve(pg_dsn, gitlab)


def _serve(pg_dsn: str, gitlab: FakeGitLab) -> Iterator[Fuzzed]:
    settings = Settings(
        postgres=PostgresSettings(dsn=SecretStr(pg_dsn)),
        redis=QueueSettings(url=REDIS, queue=QUEUE),
        qdrant=QdrantSettings(path=":memory:"),
        # A GitLab that answers: a fuzzed bearer is refused by it (401), as it would be. An accepted
        # backfill is queued, and no worker runs it here.
        gitlab=GitLabSettings(url=gitlab.url, webhook_secret=SecretStr(HOOK_SECRET)),
        admin_tokens=[admin_token(ADMIN_TOKEN)],
        service_tokens=[service_token(API_TOKEN)],
        index_job_tokens=[index_job_token(INDEX_TOKEN, project_id=1)],
    )
    with (
        serve_app(settings) as app,
        psycopg.connect(pg_dsn, autocommit=True) as pg,
        httpx.Client(base_url=app.base_url, timeout=10) as http,
    ):
        queue = redis.Redis.from_url(REDIS)
        try:
            yield Fuzzed(app=app, pg=pg, redis=queue, http=http)
        finally:
            queue.close()
