"""Only the adapters touch their clients (issue 11), checked by reading every module's source.

PostgreSQL's client (asyncpg) is imported by the `app/db/` package alone and qdrant-client by the Qdrant
adapter (`app/store/vectors.py`, its filters `app/store/filters.py` and the embedded-mode thread
`app/store/qdrant_thread.py`), and no module reaches through the store to its client (`store.client`):
so every call goes through the one place that translates its errors into `StorageError`. Likewise
redis-py is imported, and its `RedisError` named, by the Redis adapter (`app/jobs/redis.py`) alone
(issue 25): every other module catches `QueueUnavailableError`. Imports are read as
tests/pipeline/test_purity.py reads them (top level, in functions, dynamic).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.pipeline.test_purity import imported_modules

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("entry", "app", "hooks", "mcp_server")
ADAPTERS = {
    "asyncpg": {"app/db/"},  # a folder: every module in it
    # The Edge adapter and the store Protocol use qdrant-client's model types (the store's vocabulary:
    # filters, points, results); only app/store/vectors.py and app/store/qdrant_thread.py call its client.
    "qdrant_client": {
        "app/store/vectors.py",
        "app/store/filters.py",
        "app/store/qdrant_thread.py",
        "app/store/engines.py",
        "app/store/edge.py",
        "app/store/edge_filters.py",
        "app/store/edge_shard.py",
    },
    # The Edge adapter: the store, its filters and shard, and its background index build (issue 26).
    "qdrant_edge": {
        "app/store/edge.py",
        "app/store/edge_filters.py",
        "app/store/edge_shard.py",
        "app/store/edge_index.py",
        "app/store/edge_optimize.py",
    },
    # arq's `ArqRedis` is a redis-py client: its failures are translated in one module (issue 25).
    "redis": {"app/jobs/redis.py"},
}
REDIS_ADAPTER = "app/jobs/redis.py"
MODULES = sorted(p.relative_to(ROOT).as_posix() for package in PACKAGES for p in (ROOT / package).glob("**/*.py"))


def owns(owners: set[str], module: str) -> bool:
    """Whether `module` is one of `owners` (a file, or any file in a folder ending with `/`)."""
    return any(module == owner or (owner.endswith("/") and module.startswith(owner)) for owner in owners)


def store_client_uses(source: str) -> list[int]:
    """Lines that read `.client` off something named like a store (`store.client`, `deps.store.client`)."""
    lines: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr == "client":
            owner = node.value
            name = owner.id if isinstance(owner, ast.Name) else owner.attr if isinstance(owner, ast.Attribute) else ""
            if "store" in name.lower():
                lines.append(node.lineno)
    return sorted(lines)


def redis_error_names(source: str) -> list[int]:
    """Lines that name redis-py's error base, however it was reached (`RedisError`, `x.RedisError`)."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if (isinstance(node, ast.Name) and node.id == "RedisError")
        or (isinstance(node, ast.Attribute) and node.attr == "RedisError")
    )


def test_the_service_packages_have_modules() -> None:
    assert "app/search/service.py" in MODULES and "app/db/pool.py" in MODULES and len(MODULES) > 30


@pytest.mark.parametrize("module", MODULES)
def test_only_the_adapters_import_their_clients(module: str) -> None:
    roots = {name.split(".")[0] for name in imported_modules(ROOT / module)}
    trespassing = sorted(client for client, owners in ADAPTERS.items() if client in roots and not owns(owners, module))
    assert trespassing == []


@pytest.mark.parametrize("module", [m for m in MODULES if m != "app/store/vectors.py"])
def test_no_module_reaches_through_the_store_to_its_client(module: str) -> None:
    assert store_client_uses((ROOT / module).read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("module", [m for m in MODULES if m != REDIS_ADAPTER])
def test_only_the_redis_adapter_names_redis_errors(module: str) -> None:
    # A module catching `RedisError` (imported from arq, say) would bypass `app.jobs.redis.translated`.
    assert redis_error_names((ROOT / module).read_text(encoding="utf-8")) == []


def test_the_redis_adapter_is_where_the_redis_errors_are_caught() -> None:
    assert redis_error_names((ROOT / REDIS_ADAPTER).read_text(encoding="utf-8")) != []


def test_the_error_walker_sees_each_way_of_naming_redis_errors() -> None:
    source = (
        "from arq.connections import RedisError\n"  # an import names it as a string: line 1 is not a use
        "try:\n"
        "    pass\n"
        "except (RedisError, OSError):\n"
        "    pass\n"
        "except redis.exceptions.RedisError:\n"
        "    pass\n"
        "except QueueUnavailableError:\n"
        "    pass\n"
    )
    assert redis_error_names(source) == [4, 6]


def test_the_client_walker_sees_each_way_of_reaching_the_client() -> None:
    source = (
        "async def f(deps, store, self):\n"
        "    await store.client.query_points('c')\n"
        "    await deps.store.client.scroll('c')\n"
        "    c = self.store.client\n"
        "    g = self.gitlab.client\n"  # another adapter's client: allowed
    )
    assert store_client_uses(source) == [2, 3, 4]


def test_the_import_check_catches_a_client_imported_by_a_service(tmp_path: Path) -> None:
    sample = tmp_path / "service.py"
    sample.write_text(
        "from qdrant_client.http.exceptions import ApiException\nimport asyncpg.exceptions\n"
        "def check():\n    import redis.asyncio\n"
    )
    roots = {name.split(".")[0] for name in imported_modules(sample)}
    assert roots & set(ADAPTERS) == {"qdrant_client", "asyncpg", "redis"}
