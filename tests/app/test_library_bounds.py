"""Hostile input to the library job (issue 24): coordinates that would leave the Maven repository's base path.

A push writes the coordinates; the fake Maven (real HTTP on loopback) records every path it is asked
for, so these tests prove that no request leaves the base path.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from app.core.settings import LibrarySettings, MavenRepository
from app.core.states import LibraryStatus
from app.libraries.jars import java_files
from app.libraries.maven import Failed, fetch_sources, under_base
from app.store import filters
from pipeline.buildfiles import Dependency
from pipeline.buildfiles.model import OVER_VALUE
from testkit.fake_maven import FakeMaven, sources_jar
from testkit.sync_env import SyncEnv, sync_env
from tests.pipeline.test_buildfile_bounds import HOSTILE, TRAVERSAL, bomb, pom_of
from tests.support.sources import service_java

GOOD = ("org.lib", "util", "1.0")


@pytest.fixture
def maven() -> Iterator[FakeMaven]:
    with FakeMaven() as repository:
        repository.publish(*GOOD, {"org/lib/util/Codec.java": "package org.lib.util;\npublic interface Codec {}\n"})
        yield repository


@pytest_asyncio.fixture
async def env(tmp_path: Path, clean_db: str, clean_redis: str, maven: FakeMaven) -> AsyncIterator[SyncEnv]:
    settings = LibrarySettings(repositories=[MavenRepository(url=maven.url)])
    async with sync_env(tmp_path, clean_db, clean_redis, libraries=settings) as e:
        yield e


def outside(maven: FakeMaven) -> list[str]:
    """Every path the fake was asked for that is not a sources jar of GOOD under its base path."""
    return [p for p in maven.requested if p != "/maven2/org/lib/util/1.0/util-1.0-sources.jar"]


@pytest.mark.parametrize("coordinates", HOSTILE, ids=[":".join(c)[:40] for c in HOSTILE])
async def test_the_maven_client_refuses_a_hostile_coordinate_without_a_request(
    maven: FakeMaven, coordinates: tuple[str, str, str]
) -> None:
    async with httpx.AsyncClient() as http:
        outcome = await fetch_sources(
            http, [MavenRepository(url=maven.url)], coordinates, max_bytes=10_000, timeout_s=5
        )
    assert isinstance(outcome, Failed) and outcome.detail.startswith("refused, no request sent")
    assert maven.requested == []


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://r/maven2/org/a/a/1/a-1-sources.jar", True),
        ("https://r/maven2/org/a/a/1/../../../../admin", False),
        ("https://r/maven2/org/a/%2e%2e/%2e%2e/admin", False),
        ("https://r/maven2/org%2F..%2F..%2Fadmin", False),
        ("https://r/maven2/org/a?all=true", False),
        ("https://r/maven2/org/a#x", False),
        ("https://r/maven2-evil/org/a", False),
        ("https://r:8443/maven2/org/a", False),
        ("http://r/maven2/org/a", False),
        ("https://other/maven2/org/a", False),
        ("https://r/maven2/org/a%5C..%5Cadmin", False),
    ],
)
def test_a_url_must_stay_under_the_base_path(url: str, expected: bool) -> None:
    assert under_base("https://r/maven2/", url) is expected
    assert under_base("https://r/maven2", url) is expected


async def test_a_pushed_traversal_is_recorded_unresolved_and_never_fetched(env: SyncEnv, maven: FakeMaven) -> None:
    project = env.gitlab.create_project("acme/shop")
    hostile = [("org.lib", "util-admin", TRAVERSAL), *(c for c in HOSTILE if c[:2] != GOOD[:2])]
    await env.push(project, {"pom.xml": pom_of(GOOD, *hostile).decode()})
    await env.work()
    db = env.deps.db
    assert {c: row.status for c, row in (await db.libraries()).items()} == {GOOD: LibraryStatus.INDEXED}
    assert outside(maven) == []
    [row] = await db.usages("org.lib", "util-admin", None, everything=True)
    assert row.version.startswith("1.0/..") and (row.unresolved or "").startswith("not a Maven coordinate")


async def test_a_hostile_coordinate_recorded_before_the_check_is_marked_not_fetched(
    env: SyncEnv, maven: FakeMaven
) -> None:
    project = env.gitlab.create_project("acme/shop")
    await env.push(project, {"pom.xml": pom_of(GOOD).decode()})
    await env.work()
    db = env.deps.db
    declared = [
        Dependency(group=g, artifact=a, version=v, scope=f"s{i}", source="pom.xml")
        for i, (g, a, v) in enumerate((GOOD, *HOSTILE[:6]))
    ]
    await db.replace_dependencies(project.id, {"pom.xml": ("blob", None)}, declared)  # as a reading before issue 24
    await env.work()  # the reconcile sweep sees versions without a row and runs the library job
    rows = await db.libraries()
    assert {c for c, r in rows.items() if r.status is LibraryStatus.NOT_ALLOWED} == set(HOSTILE[:6])
    assert all((rows[c].detail or "").startswith("not a Maven coordinate") for c in HOSTILE[:6])
    assert outside(maven) == []


async def test_a_property_bomb_is_recorded_once_and_not_read_again_until_it_changes(
    env: SyncEnv, maven: FakeMaven
) -> None:
    project = env.gitlab.create_project("acme/shop")
    good = "<dependency><groupId>org.lib</groupId><artifactId>util</artifactId><version>1.0</version></dependency>"
    java = "src/main/java/com/acme/"
    await env.push(project, {"pom.xml": bomb(3, extra=good).decode(), java + "A.java": service_java("A")})
    await env.work()
    db = env.deps.db
    assert await db.build_problems(project.id) == {"pom.xml": OVER_VALUE}
    assert await db.dependencies_sha(project.id) == project.head()  # stored: not read again at every sync
    assert {c: row.status for c, row in (await db.libraries()).items()} == {GOOD: LibraryStatus.INDEXED}

    def reads() -> int:
        return sum(env.gitlab.call_count(p) for p in ("/archive", "/repository/tree", "/blobs/"))

    before = reads()
    await env.push(project, {java + "B.java": service_java("B")})
    await env.work()
    assert reads() == before
    await env.push(project, {"pom.xml": bomb(1, extra=good).decode()})  # changed: read again, within the bounds
    await env.work()
    assert reads() > before and await db.build_problems(project.id) == {}


def tiny_classes(count: int) -> dict[str, str]:
    """A sources jar's worth of one-line classes (issue 24: 20,000 of them in 3 MB)."""
    return {f"org/many/C{i:05}.java": f"package org.many; public class C{i:05} {{}}\n" for i in range(count)}


@pytest.mark.parametrize(
    ("caps", "most", "named"),
    [
        ({"max_jar_entries": 40}, 40, "JAVAKB_LIBRARIES__MAX_JAR_ENTRIES"),
        ({"max_library_chunks": 25}, 25, "JAVAKB_LIBRARIES__MAX_LIBRARY_CHUNKS"),
    ],
)
async def test_a_jar_of_many_tiny_classes_is_cut_at_its_caps_and_says_so(
    tmp_path: Path, clean_db: str, clean_redis: str, maven: FakeMaven, caps: dict[str, int], most: int, named: str
) -> None:
    many = ("org.many", "classes", "1.0")
    maven.publish(*many, tiny_classes(300))
    settings = LibrarySettings(repositories=[MavenRepository(url=maven.url)], **caps)  # type: ignore[arg-type]
    async with sync_env(tmp_path, clean_db, clean_redis, libraries=settings) as env:
        project = env.gitlab.create_project("acme/shop")
        await env.push(project, {"pom.xml": pom_of(many).decode()})
        await env.work()
        row = (await env.deps.db.libraries())[many]
        assert row.status is LibraryStatus.INDEXED and row.chunks is not None and 0 < row.chunks <= most
        assert (row.detail or "").startswith("partly indexed") and named in (row.detail or "")
        where = filters.all_of(filters.eq("repo_path", "maven:org.many:classes:1.0"))
        assert await env.deps.store.count(where=where) == row.chunks


def test_the_jar_reader_stops_at_its_entry_cap() -> None:
    jar = sources_jar(tiny_classes(30))
    found = java_files(jar, max_file_bytes=1000, max_total=10**6, max_files=10)
    assert [p for p, _ in found.files] == [f"org/many/C{i:05}.java" for i in range(10)]
    assert found.cut is not None and "MAX_JAR_ENTRIES" in found.cut
    assert java_files(jar, max_file_bytes=1000, max_total=10**6, max_files=30).cut is None


async def test_a_groupid_postgresql_cannot_index_is_not_stored_and_the_build_is_recorded(env: SyncEnv) -> None:
    noise = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(250))  # 16,000 characters
    project = env.gitlab.create_project("acme/shop")
    good = "<dependency><groupId>org.lib</groupId><artifactId>util</artifactId><version>1.0</version></dependency>"
    data = f"<project><groupId>com.{noise}</groupId><artifactId>shop</artifactId><version>1</version>"
    await env.push(project, {"pom.xml": f"{data}<dependencies>{good}</dependencies></project>"})
    await env.work()
    db = env.deps.db
    assert await db.dependencies_sha(project.id) == project.head()
    assert await db.own_groups() == frozenset()
    assert {c: row.status for c, row in (await db.libraries()).items()} == {GOOD: LibraryStatus.INDEXED}
