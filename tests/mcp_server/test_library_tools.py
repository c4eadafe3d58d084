"""MCP over library code (issue 16): the `scope` argument, library hits with their users, `find_library_usages`.

Two projects use one library version; the caller reads only one of them. Library code answers for
a caller who reads one of its users; which projects use it names only the readable one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from fastmcp import Client
from fastmcp.exceptions import ToolError

from app.auth.access import Access
from app.core.settings import LibrarySettings, MavenRepository
from mcp_server.server import create_server
from testkit.fake_maven import FakeMaven
from testkit.sync_env import SyncEnv, sync_env
from tests.support.sources import service_java

SRC = "src/main/java/com/acme/"
POM = (
    '<project xmlns="http://maven.apache.org/POM/4.0.0"><groupId>com.acme</groupId><artifactId>x</artifactId>'
    "<version>1</version><dependencies><dependency><groupId>org.lib</groupId><artifactId>clock</artifactId>"
    "<version>4.2</version></dependency></dependencies></project>"
)
CLOCK = {
    "org/lib/clock/Ticker.java": "package org.lib.clock;\n\n/** Ticks once per second. */\n"
    "public class Ticker {\n    public long tick() {\n        return 1L;\n    }\n}\n",
}


@pytest.fixture
def maven() -> Iterator[FakeMaven]:
    with FakeMaven() as repository:
        repository.publish("org.lib", "clock", "4.2", CLOCK)
        yield repository


@pytest_asyncio.fixture
async def env(tmp_path: Path, clean_db: str, clean_redis: str, maven: FakeMaven) -> AsyncIterator[SyncEnv]:
    settings = LibrarySettings(repositories=[MavenRepository(url=maven.url)])
    async with sync_env(tmp_path, clean_db, clean_redis, libraries=settings) as e:
        public = e.gitlab.create_project("acme/public")
        hidden = e.gitlab.create_project("acme/hidden")
        for project in (public, hidden):
            await e.push(project, {"pom.xml": POM, SRC + "A.java": service_java("A")})
        await e.work()
        yield e


def reader(env: SyncEnv) -> Access:
    [public] = [p for p in env.gitlab.snapshots() if p.path_with_namespace == "acme/public"]
    return Access(subject="user:1", project_ids=frozenset({public.id}))


async def call(env: SyncEnv, tool: str, *, caller: Access | None = None, **arguments: Any) -> Any:
    async with Client(create_server(lambda: env.deps, unauthenticated=caller or reader(env))) as client:
        return await client.call_tool(tool, arguments)


async def test_get_symbol_reads_library_code_only_in_a_library_scope(env: SyncEnv) -> None:
    with pytest.raises(ToolError, match="No symbol named"):
        await call(env, "get_symbol", name="Ticker")
    result = await call(env, "get_symbol", name="Ticker", scope="libraries")
    [item] = result.structured_content["results"]
    assert item["repo_path"] == "maven:org.lib:clock:4.2"
    assert item["library"] == {"group": "org.lib", "artifact": "clock", "version": "4.2", "used_by": ["acme/public"]}
    text = result.content[0].text
    assert "library, version 4.2; used by: acme/public" in text and "acme/hidden" not in text


async def test_scope_all_searches_both(env: SyncEnv) -> None:
    result = await call(env, "semantic_search", query="tick service run", scope="all")
    repos = {item["repo_path"] for item in result.structured_content["results"]}
    assert repos == {"acme/public", "maven:org.lib:clock:4.2"}


async def test_list_repos_by_scope(env: SyncEnv) -> None:
    code = await call(env, "list_repos")
    libraries = await call(env, "list_repos", scope="libraries")
    assert [i["repo"] for i in code.structured_content["results"]] == ["acme/public"]
    assert [i["repo"] for i in libraries.structured_content["results"]] == ["maven:org.lib:clock:4.2"]


async def test_find_library_usages_names_only_readable_projects(env: SyncEnv) -> None:
    result = await call(env, "find_library_usages", library="org.lib:clock")
    [item] = result.structured_content["results"]
    assert (item["repo"], item["version"], item["build_file"], item["sources"]) == (
        "acme/public",
        "4.2",
        "pom.xml",
        "indexed",
    )
    assert "acme/hidden" not in result.content[0].text


@pytest.mark.parametrize("library", ["", ":", "a:b:c:d", "org.none"])
async def test_find_library_usages_refuses_or_misses_clearly(env: SyncEnv, library: str) -> None:
    with pytest.raises(ToolError):
        await call(env, "find_library_usages", library=library)


SECRET = {
    "org/zebrasecret/privonly/Plan.java": "package org.zebrasecret.privonly;\n\n/** Zebra launch plan. */\n"
    "public class ZebraPlan {\n    public long launchZebra() {\n        return 9L;\n    }\n}\n",
}
SECRET_DEPENDENCY = (
    "<dependency><groupId>org.zebrasecret</groupId><artifactId>privonly</artifactId><version>9.9</version></dependency>"
)
SECRET_POM = POM.replace("</dependencies>", SECRET_DEPENDENCY + "</dependencies>")
SECRET_PATH = "maven:org.zebrasecret:privonly:9.9"


async def test_a_library_only_a_private_project_uses_is_read_only_by_its_readers(
    env: SyncEnv, maven: FakeMaven
) -> None:
    """Issue 24: that a version is used at all is the using project's secret; counts say nothing of it either."""
    maven.publish("org.zebrasecret", "privonly", "9.9", SECRET)
    [hidden] = [p for p in env.gitlab.snapshots() if p.path_with_namespace == "acme/hidden"]
    await env.push(env.gitlab.project(hidden.id), {"pom.xml": SECRET_POM})
    await env.work()
    member = Access(subject="user:2", project_ids=frozenset({hidden.id}))
    stranger = Access(subject="user:3", project_ids=frozenset())

    for caller, sees in ((member, True), (reader(env), False), (stranger, False)):
        for scope in ("libraries", "all"):
            repos = [i["repo"] for i in await _results(env, caller, "list_repos", scope=scope)]
            assert (SECRET_PATH in repos) is sees, (caller.subject, scope, repos)
            found = await _results(env, caller, "semantic_search", query="zebra launch plan", scope=scope)
            assert (SECRET_PATH in {i["repo_path"] for i in found}) is sees, (caller.subject, scope)
            symbol = await _results(env, caller, "get_symbol", name="ZebraPlan", scope=scope)
            assert bool(symbol) is sees
    counts = {i["repo"]: i["chunks"] for i in await _results(env, reader(env), "list_repos", scope="all")}
    assert set(counts) == {"acme/public", "maven:org.lib:clock:4.2"}
    with pytest.raises(ToolError, match="No readable project declares"):
        await call(env, "find_library_usages", library="org.zebrasecret")
    with pytest.raises(ToolError, match="No library is indexed"):  # as for a store without libraries
        await call(env, "semantic_search", caller=stranger, query="zebra", scope="libraries")
    refusals = []
    for repo in (SECRET_PATH, "maven:org.none:none:1.0"):  # the unreadable version answers as one never indexed
        with pytest.raises(ToolError) as refused:
            await call(env, "find_implementations", type="Codec", repo=repo, scope="all")
        refusals.append(str(refused.value).replace(repo, "<repo>"))
    assert refusals[0] == refusals[1]


async def _results(env: SyncEnv, caller: Access, tool: str, **arguments: Any) -> list[dict[str, Any]]:
    try:
        result = await call(env, tool, caller=caller, **arguments)
    except ToolError:
        return []
    return list(result.structured_content["results"])
