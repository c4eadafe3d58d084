"""`index_status(repo?)` and `refresh_repo(repo)` (issue 14) on the fake GitLab, real PostgreSQL and Redis:
filtered to what the caller may read, answers that match their output schemas, and a refresh that is
permission-checked, idempotent (deduplicated with the queue's job ids) and rate-limited per project.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest_asyncio
from fastmcp import Client

from app.auth.access import Access, everything
from app.jobs.queue import sync_job_id
from mcp_server.server import create_server
from testkit.sync_env import SyncEnv, sync_env
from tests.hooks.test_receiver import afetch
from tests.mcp_server.test_tools import assert_tool_error, data, text
from tests.support.sources import service_java as service

SRC = "src/main/java/com/acme/"
ACME = Access(subject="service:acme", repo_prefixes=("acme/",))


@pytest_asyncio.fixture
async def env(tmp_path: Path, clean_db: str, clean_redis: str) -> AsyncIterator[SyncEnv]:
    async with sync_env(tmp_path, clean_db, clean_redis) as e:
        for path in ("acme/shop", "acme/billing", "other/secret"):
            await e.push(e.gitlab.create_project(path), {SRC + "A.java": service("A")})
        await e.work()
        yield e


async def call(env: SyncEnv, access: Access, tool: str, **arguments: Any) -> Any:
    async with Client(create_server(lambda: env.deps, unauthenticated=access)) as client:
        schema = {t.name: t.output_schema for t in await client.list_tools()}[tool]
        result = await client.call_tool(tool, arguments, raise_on_error=False)
        if not result.is_error:
            jsonschema.validate(data(result), schema)
        return result


async def rows(env: SyncEnv, query: str) -> list[dict[str, Any]]:
    return await afetch(env.settings.postgres.dsn.get_secret_value(), query)


async def test_index_status_lists_only_the_readable_repositories_with_their_state(env: SyncEnv) -> None:
    result = await call(env, ACME, "index_status")
    items = data(result)["results"]
    assert [i["repo"] for i in items] == ["acme/billing", "acme/shop"]
    assert all(i["state"] == "ok" and not i["behind"] and i["gitlab_head"] == i["indexed_sha"] for i in items)
    assert "acme/shop  state=ok" in text(result) and "up to date" in text(result) and "other/secret" not in text(result)
    one = data(await call(env, ACME, "index_status", repo="acme/shop"))["results"]
    assert [i["repo"] for i in one] == ["acme/shop"]
    everything_seen = data(await call(env, everything("local"), "index_status"))["results"]
    assert [i["repo"] for i in everything_seen] == ["acme/billing", "acme/shop", "other/secret"]


async def test_index_status_of_an_unreadable_repository_says_nothing_about_it(env: SyncEnv) -> None:
    hidden = await call(env, ACME, "index_status", repo="other/secret")
    missing = await call(env, ACME, "index_status", repo="other/nothing")
    assert_tool_error(hidden, "No index status for repository 'other/secret'")
    assert text(hidden).replace("other/secret", "R") == text(missing).replace("other/nothing", "R")


async def test_a_refresh_syncs_what_no_hook_told_and_says_so_in_the_status(env: SyncEnv) -> None:
    project = env.gitlab.project(1)
    lost = project.commit({SRC + "B.java": service("B")}, "a push whose hook never came")
    result = await call(env, ACME, "refresh_repo", repo="acme/shop")
    [item] = data(result)["results"]
    assert item["state"] == "queued" and item["request_id"] is not None and item["repo"] == "acme/shop"
    assert sync_job_id(project.id, item["generation"]) in await queued(env)
    waiting = data(await call(env, ACME, "index_status", repo="acme/shop"))["results"][0]
    assert waiting["behind"] and waiting["state"] == "pending"
    await env.work()
    done = data(await call(env, ACME, "index_status", repo="acme/shop"))["results"][0]
    assert (done["indexed_sha"], done["gitlab_head"], done["behind"]) == (lost, lost, False)
    assert done["last_run_trigger"] == "refresh"
    await env.audit(project)


async def test_a_second_refresh_while_one_waits_asks_for_nothing_new(env: SyncEnv) -> None:
    first = data(await call(env, ACME, "refresh_repo", repo="acme/shop"))["results"][0]
    jobs = await queued(env)
    again = data(await call(env, ACME, "refresh_repo", repo="acme/shop"))["results"][0]
    assert again["generation"] == first["generation"] and again["request_id"] is None
    assert "already waiting" in again["detail"]
    assert await queued(env) == jobs  # the queue's job id `sync:<project>:<generation>` deduplicated it
    assert len(await rows(env, "SELECT * FROM index_requests")) == 1


async def test_refreshes_of_one_project_are_rate_limited(env: SyncEnv) -> None:
    await call(env, ACME, "refresh_repo", repo="acme/shop")
    await env.work()  # caught up: the next refresh would ask for new work
    limited = await call(env, ACME, "refresh_repo", repo="acme/shop")
    assert_tool_error(limited, "'acme/shop' was refreshed moments ago; ask again in ")
    assert 1 <= int(re.search(r"ask again in (\d+) s", text(limited)).group(1)) <= 60  # type: ignore[union-attr]
    other = await call(env, ACME, "refresh_repo", repo="acme/billing")  # the limit is per project
    assert not other.is_error
    assert len(await rows(env, "SELECT * FROM index_requests")) == 2


async def test_a_refresh_of_an_unreadable_repository_is_refused_as_unknown(env: SyncEnv) -> None:
    hidden = await call(env, ACME, "refresh_repo", repo="other/secret")
    missing = await call(env, ACME, "refresh_repo", repo="other/nothing")
    assert_tool_error(hidden, "Unknown repository 'other/secret'.")
    assert_tool_error(missing, "Unknown repository 'other/nothing'.")
    assert await rows(env, "SELECT * FROM index_requests") == []
    assert await queued(env) == set()


async def queued(env: SyncEnv) -> set[str]:
    queue = env.deps.queue
    return {m.decode() for m in await queue.zrange(env.settings.redis.queue, 0, -1)}
