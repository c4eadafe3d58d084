"""Dependency sources end to end (issue 16, part 1): pushes through the fake GitLab, a Maven repository over HTTP.

The build files and the libraries' Java are written for these tests; each sources jar is built by the
test (`testkit.fake_maven.sources_jar`) and served by a loopback repository in Maven Central's layout.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from pydantic import SecretStr

from app.auth.access import LOCAL, Access
from app.core.settings import LibrarySettings, MavenRepository
from app.core.states import LibraryStatus
from app.libraries.usage import LibraryName, usages, with_users
from app.search.scoping import SearchScope
from app.store import filters
from testkit.fake_maven import FakeMaven
from testkit.sync_env import SyncEnv, sync_env
from tests.support.sources import service_java

SRC = "src/main/java/com/acme/"
TOKEN = "maven-registry-token-0123456789"


def pom(*dependencies: tuple[str, str, str], properties: str = "") -> str:
    items = "".join(
        f"<dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version></dependency>"
        for g, a, v in dependencies
    )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        f"<groupId>com.acme</groupId><artifactId>app</artifactId><version>1.0</version>"
        f"<properties>{properties}</properties><dependencies>{items}</dependencies></project>"
    )


def util_java(version: str) -> dict[str, str]:
    """A small library: an interface, its implementation and a helper, whose javadoc names the version."""
    return {
        "org/lib/util/Codec.java": "package org.lib.util;\n\n/** Encodes text. */\npublic interface Codec {\n"
        "    String encode(String text);\n}\n",
        "org/lib/util/Rot13Codec.java": "package org.lib.util;\n\n"
        f"/** Rotates letters, since {version}. */\npublic class Rot13Codec implements Codec {{\n"
        "    @Override\n    public String encode(String text) {\n        return Strings.rotate(text, 13);\n    }\n}\n",
        "org/lib/util/Strings.java": "package org.lib.util;\n\npublic final class Strings {\n"
        "    public static String rotate(String text, int by) {\n        return text;\n    }\n}\n",
    }


@pytest.fixture
def maven() -> Iterator[FakeMaven]:
    with FakeMaven() as repository:
        repository.publish("org.lib", "util", "1.0", util_java("1.0"))
        repository.publish("org.lib", "util", "2.0", util_java("2.0"))
        repository.publish("org.other", "text", "3.1", {"org/other/text/Words.java": "package org.other.text;\n"
                           "public class Words {\n    public int count(String s) { return 1; }\n}\n"})  # fmt: skip
        yield repository


def library_settings(maven: FakeMaven, **overrides: object) -> LibrarySettings:
    return LibrarySettings(repositories=[MavenRepository(url=maven.url)], **overrides)  # type: ignore[arg-type]


@pytest_asyncio.fixture
async def env(tmp_path: Path, clean_db: str, clean_redis: str, maven: FakeMaven) -> AsyncIterator[SyncEnv]:
    async with sync_env(tmp_path, clean_db, clean_redis, libraries=library_settings(maven)) as e:
        yield e


async def library_points(env: SyncEnv, repo_path: str) -> int:
    return await env.deps.store.count(where=filters.all_of(filters.eq("repo_path", repo_path)))


async def statuses(env: SyncEnv) -> dict[str, LibraryStatus]:
    return {":".join(c): row.status for c, row in (await env.deps.db.libraries()).items()}


async def test_a_version_bump_indexes_the_new_version_and_purges_the_old(env: SyncEnv, maven: FakeMaven) -> None:
    project = env.gitlab.create_project("acme/shop")
    first = pom(("org.lib", "util", "${util.version}"), properties="<util.version>1.0</util.version>")
    await env.push(project, {"pom.xml": first, SRC + "A.java": service_java("A")})
    await env.work()
    assert await statuses(env) == {"org.lib:util:1.0": LibraryStatus.INDEXED}
    assert await library_points(env, "maven:org.lib:util:1.0") > 0
    await env.audit(project)  # the project's own index is untouched by its libraries

    await env.push(project, {"pom.xml": pom(("org.lib", "util", "2.0"))})
    await env.work()

    assert await statuses(env) == {"org.lib:util:2.0": LibraryStatus.INDEXED}
    assert await library_points(env, "maven:org.lib:util:1.0") == 0
    assert await library_points(env, "maven:org.lib:util:2.0") > 0
    [hit] = await env.deps.search.within(SearchScope.LIBRARIES).symbol(LOCAL, "Rot13Codec")
    assert hit.repo_path == "maven:org.lib:util:2.0" and hit.chunk.library and hit.chunk.gitlab_project_id is None
    assert "since 2.0" in hit.code


async def test_a_library_used_by_two_projects_is_indexed_once(env: SyncEnv, maven: FakeMaven) -> None:
    for path in ("acme/shop", "acme/billing"):
        project = env.gitlab.create_project(path)
        await env.push(project, {"pom.xml": pom(("org.lib", "util", "1.0")), SRC + "A.java": service_java("A")})
    await env.work()
    assert maven.asked("util-1.0-sources.jar") == 1
    rows = await usages(env.deps.db, LOCAL, LibraryName.parse("org.lib:util"))
    assert sorted(r.repo_path for r in rows) == ["acme/billing", "acme/shop"]


async def test_a_push_that_leaves_the_build_alone_does_not_read_it(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {"pom.xml": pom(("org.lib", "util", "1.0")), SRC + "A.java": service_java("A")})
    await env.work()
    trees = env.gitlab.call_count("repository/tree")
    await env.push(project, {SRC + "B.java": service_java("B")})
    await env.work()
    assert env.gitlab.call_count("repository/tree") == trees
    assert await env.deps.db.dependencies_sha(project.id) == project.head()


async def test_a_missing_sources_jar_is_a_status_and_the_project_syncs(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {"pom.xml": pom(("org.nosrc", "thing", "1.0")), SRC + "A.java": service_java("A")})
    await env.work()
    rows = await env.deps.db.libraries()
    row = rows[("org.nosrc", "thing", "1.0")]
    assert row.status is LibraryStatus.NO_SOURCES and "thing-1.0-sources.jar" in (row.detail or "")
    assert (await env.deps.db.project(project.id)).state == "ok"  # type: ignore[union-attr]
    await env.audit(project)


async def test_a_bad_pom_is_recorded_and_the_project_syncs(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {"pom.xml": "<project><dependencies>", SRC + "A.java": service_java("A")})
    await env.work()
    await env.audit(project)
    db = env.deps.db
    assert await db.dependency_files(project.id) != {}
    assert await db.library_usage() == {}


async def test_out_of_scope_forgets_the_dependencies_and_purges_the_library(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {"pom.xml": pom(("org.lib", "util", "1.0")), SRC + "A.java": service_java("A")})
    await env.work()
    env.gitlab.set_project_attributes(project.id, archived=True)
    await env.push(project, {SRC + "B.java": service_java("B")})
    await env.work()
    assert await statuses(env) == {}
    assert await library_points(env, "maven:org.lib:util:1.0") == 0


async def test_the_allowlist_and_the_minimum_of_projects(
    tmp_path: Path, clean_db: str, clean_redis: str, maven: FakeMaven
) -> None:
    settings = library_settings(maven, allow=["org.lib*"], min_projects=2)
    async with sync_env(tmp_path, clean_db, clean_redis, libraries=settings) as env:
        first = env.gitlab.create_project("acme/shop")
        await env.push(first, {"pom.xml": pom(("org.lib", "util", "1.0"), ("org.other", "text", "3.1"))})
        await env.work()
        assert await statuses(env) == {
            "org.lib:util:1.0": LibraryStatus.NOT_ALLOWED,
            "org.other:text:3.1": LibraryStatus.NOT_ALLOWED,
        }
        assert maven.requested == []
        second = env.gitlab.create_project("acme/billing")
        await env.push(second, {"pom.xml": pom(("org.lib", "util", "1.0"), ("org.other", "text", "3.1"))})
        await env.work()
        assert await statuses(env) == {
            "org.lib:util:1.0": LibraryStatus.INDEXED,
            "org.other:text:3.1": LibraryStatus.NOT_ALLOWED,
        }
        assert maven.asked("org/other") == 0


async def test_the_budget_of_libraries_and_bytes(
    tmp_path: Path, clean_db: str, clean_redis: str, maven: FakeMaven
) -> None:
    async with sync_env(tmp_path, clean_db, clean_redis, libraries=library_settings(maven, max_libraries=1)) as env:
        project = env.gitlab.create_project("acme/shop")
        other = env.gitlab.create_project("acme/billing")
        await env.push(project, {"pom.xml": pom(("org.lib", "util", "1.0"), ("org.other", "text", "3.1"))})
        await env.push(other, {"pom.xml": pom(("org.lib", "util", "1.0"))})
        await env.work()
        # The most used first: util (2 projects) fits, text does not.
        assert await statuses(env) == {
            "org.lib:util:1.0": LibraryStatus.INDEXED,
            "org.other:text:3.1": LibraryStatus.OVER_BUDGET,
        }


async def test_the_byte_budget(tmp_path: Path, clean_db: str, clean_redis: str, maven: FakeMaven) -> None:
    async with sync_env(tmp_path, clean_db, clean_redis, libraries=library_settings(maven, max_bytes=100)) as env:
        project = env.gitlab.create_project("acme/shop")
        await env.push(project, {"pom.xml": pom(("org.lib", "util", "1.0"))})
        await env.work()
        [row] = (await env.deps.db.libraries()).values()
        assert row.status is LibraryStatus.OVER_BUDGET and "MAX_BYTES" in (row.detail or "")
        assert await library_points(env, "maven:org.lib:util:1.0") == 0


async def test_credentials_are_sent_and_never_logged(
    tmp_path: Path, clean_db: str, clean_redis: str, caplog: pytest.LogCaptureFixture
) -> None:
    with FakeMaven(credentials=("Private-Token", TOKEN)) as maven:
        maven.publish("org.lib", "util", "1.0", util_java("1.0"))
        good = LibrarySettings(repositories=[MavenRepository(url=maven.url, token=SecretStr(TOKEN))])
        caplog.set_level(logging.DEBUG)
        async with sync_env(tmp_path, clean_db, clean_redis, libraries=good) as env:
            project = env.gitlab.create_project("acme/shop")
            await env.push(project, {"pom.xml": pom(("org.lib", "util", "1.0"))})
            await env.work()
            assert await statuses(env) == {"org.lib:util:1.0": LibraryStatus.INDEXED}
        assert TOKEN not in caplog.text


async def test_a_refusing_repository_fails_the_library_not_the_project(
    tmp_path: Path, clean_db: str, clean_redis: str
) -> None:
    with FakeMaven(credentials=("Private-Token", TOKEN)) as maven:
        maven.publish("org.lib", "util", "1.0", util_java("1.0"))
        async with sync_env(
            tmp_path, clean_db, clean_redis, libraries=LibrarySettings(repositories=[MavenRepository(url=maven.url)])
        ) as env:
            project = env.gitlab.create_project("acme/shop")
            await env.push(project, {"pom.xml": pom(("org.lib", "util", "1.0")), SRC + "A.java": service_java("A")})
            await env.work()
            [row] = (await env.deps.db.libraries()).values()
            assert (
                row.status is LibraryStatus.FAILED
                and row.detail == f"401 from {maven.url}/org/lib/util/1.0/util-1.0-sources.jar"
            )
            await env.audit(project)


async def test_scopes_inside_the_query(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    mine = "package com.acme;\npublic class MyCodec implements org.lib.util.Codec {\n    String encode(String t);\n}\n"
    await env.push(project, {"pom.xml": pom(("org.lib", "util", "1.0")), SRC + "MyCodec.java": mine})
    await env.work()
    search = env.deps.search

    code = {h.repo_path for h in await search.implementations(LOCAL, "Codec")}
    libraries = {h.repo_path for h in await search.within(SearchScope.LIBRARIES).implementations(LOCAL, "Codec")}
    both = {h.repo_path for h in await search.within(SearchScope.ALL).implementations(LOCAL, "Codec")}

    assert code == {"acme/shop"}
    assert libraries == {"maven:org.lib:util:1.0"}
    assert both == {"acme/shop", "maven:org.lib:util:1.0"}
    assert set(await search.repositories(LOCAL)) == {"acme/shop"}
    assert set(await search.within(SearchScope.LIBRARIES).repositories(LOCAL)) == {"maven:org.lib:util:1.0"}
    hits = await search.within(SearchScope.LIBRARIES).search(LOCAL, "rotate letters encode")
    assert hits and all(h.chunk.library for h in hits)
    callees = await search.within(SearchScope.LIBRARIES).callees(LOCAL, "Rot13Codec.encode")
    assert [(call, [t.qualified_name for t in targets]) for call, targets in callees] == [
        ("Strings.rotate", ["org.lib.util.Strings.rotate"])
    ]


async def test_library_code_is_readable_by_readers_of_a_user_and_names_only_readable_users(env: SyncEnv) -> None:
    shop = env.gitlab.create_project("acme/shop")
    secret = env.gitlab.create_project("acme/secret")
    for project in (shop, secret):
        await env.push(project, {"pom.xml": pom(("org.lib", "util", "1.0")), SRC + "A.java": service_java("A")})
    await env.work()
    reader = Access(subject="user:7", project_ids=frozenset({shop.id}))
    nobody = Access(subject="user:8", project_ids=frozenset())
    search = env.deps.search

    # The org's code is filtered as before; library code is there for a caller who reads one of its users.
    assert {h.repo_path for h in await search.symbol(reader, "A")} == {"acme/shop"}
    assert {h.repo_path for h in await search.within(SearchScope.ALL).symbol(reader, "A")} == {"acme/shop"}
    assert await search.symbol(nobody, "A") == []
    assert await search.within(SearchScope.ALL).symbol(nobody, "Rot13Codec") == []  # issue 24
    assert await search.within(SearchScope.LIBRARIES).repositories(nobody) == {}
    [library_hit] = await search.within(SearchScope.ALL).symbol(reader, "Rot13Codec")

    db = env.deps.db
    [named] = await with_users(db, reader, [library_hit])
    assert named.used_by == ("acme/shop",)
    [anonymous] = await with_users(db, nobody, [library_hit])
    assert anonymous.used_by == ()
    assert [r.repo_path for r in await usages(db, reader, LibraryName.parse("org.lib"))] == ["acme/shop"]
    assert await usages(db, nobody, LibraryName.parse("org.lib:util:1.0")) == []


async def test_an_artifact_of_the_orgs_own_group_is_never_indexed_as_a_library(env: SyncEnv, maven: FakeMaven) -> None:
    maven.publish("com.acme", "billing-client", "1.0", {"com/acme/billing/Secret.java": "package com.acme.billing;\n"
                  "public class Secret { int key() { return 42; } }\n"})  # fmt: skip
    project = env.gitlab.create_project("acme/shop")  # its pom's groupId is com.acme
    await env.push(project, {"pom.xml": pom(("com.acme", "billing-client", "1.0"))})
    await env.work()
    [row] = (await env.deps.db.libraries()).values()
    assert row.status is LibraryStatus.NOT_ALLOWED and "organization's projects" in (row.detail or "")
    assert maven.asked("billing-client") == 0


async def test_the_sweep_asks_again_for_a_library_job_redis_lost(env: SyncEnv, maven: FakeMaven) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {"pom.xml": pom(("org.lib", "util", "1.0"))})
    await env.work()
    db = env.deps.db
    assert not await db.libraries_behind()
    await db.delete_library(("org.lib", "util", "1.0"))  # as if the job had never run
    assert await db.libraries_behind()
    await env.work()  # the worker's reconcile sweep runs at start
    assert await statuses(env) == {"org.lib:util:1.0": LibraryStatus.INDEXED}
    assert maven.asked("util-1.0-sources.jar") == 2


async def test_a_first_sync_reads_the_build_from_its_archive(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/shop")
    gradle = "dependencies {\n  implementation 'org.other:text:3.1'\n}\n"
    files: dict[str, str | bytes | None] = {"pom.xml": pom(("org.lib", "util", "1.0")), "svc/build.gradle": gradle}
    files[SRC + "A.java"] = service_java("A")
    await env.push(project, files)
    await env.work()
    assert env.gitlab.call_count("/archive") == 1
    assert env.gitlab.call_count("/tree") == env.gitlab.call_count("/blobs/") == 0
    assert set(await env.deps.db.dependency_files(project.id)) == {"pom.xml", "svc/build.gradle"}
    assert await statuses(env) == {
        "org.lib:util:1.0": LibraryStatus.INDEXED,
        "org.other:text:3.1": LibraryStatus.INDEXED,
    }
    await env.audit(project)  # the build files are not in the code's manifest
