"""The whole app on a loopback port, once per module, with the `shop` fixture indexed.

Its PostgreSQL and Redis are the suite's real ones. The tables are emptied and the Redis database
flushed when the module's server starts (what `clean_db` and `clean_redis` do per test): the tests
here only read, so one server per module serves them all and keeps each test well under a second.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import pytest
from pydantic import SecretStr

from app.core.settings import PostgresSettings, QdrantSettings, QueueSettings, Settings
from tests.conftest import REDIS, reset_services
from tests.support.java_fixtures import SHOP_DIR
from tests.support.live_app import LiveApp, serve_app
from tests.support.tokens import service_token

TOKEN: Final = "t0k"


def live_settings(dsn: str) -> Settings:
    return Settings(
        service_tokens=[service_token(TOKEN)],
        postgres=PostgresSettings(dsn=SecretStr(dsn)),
        redis=QueueSettings(url=REDIS, queue="javakb:test-mcp"),
        qdrant=QdrantSettings(path=":memory:"),
    )


@pytest.fixture(scope="module")
def live_app(pg_dsn: str) -> Iterator[LiveApp]:
    reset_services(pg_dsn)
    with serve_app(live_settings(pg_dsn), checkout=SHOP_DIR) as app:
        yield app
