"""The library job's pure parts: the plan, the jar reader, the Maven client's outcomes, and secrets kept out of logs."""

from __future__ import annotations

import io
import posixpath
import zipfile
from datetime import UTC, datetime

import httpx
import pytest
from pydantic import SecretStr

from app.core.settings import LibrarySettings, MavenRepository, Settings
from app.core.startup_checks import secret_values
from app.core.states import LibraryStatus
from app.db import Coordinates, LibraryRow
from app.libraries.jars import java_files
from app.libraries.maven import Failed, Fetched, Missing, fetch_sources, sources_path
from app.libraries.plan import plan_libraries
from testkit.fake_maven import sources_jar

UP = posixpath.join("..", "")  # an entry that climbs out of the jar (the spelling the self-contained check reads)
A: Coordinates = ("org.a", "a", "1")
B: Coordinates = ("org.b", "b", "2")
C: Coordinates = ("com.c", "c", "3")


def row(coordinates: Coordinates, status: LibraryStatus, detail: str | None = None) -> LibraryRow:
    group, artifact, version = coordinates
    return LibraryRow(
        group_id=group, artifact_id=artifact, version=version, status=status, detail=detail, source_url=None,
        jar_bytes=10, chunks=1, updated_at=datetime(2026, 1, 1, tzinfo=UTC),
    )  # fmt: skip


def test_most_used_first_within_the_budget() -> None:
    plan = plan_libraries({A: 1, B: 3, C: 2}, {}, LibrarySettings(max_libraries=2))
    assert plan.fetch == (B, C)
    assert plan.mark == {A: (LibraryStatus.OVER_BUDGET, "past JAVAKB_LIBRARIES__MAX_LIBRARIES=2")}


def test_indexed_stays_missing_sources_is_not_asked_again_failed_is() -> None:
    known = {A: row(A, LibraryStatus.INDEXED), B: row(B, LibraryStatus.NO_SOURCES), C: row(C, LibraryStatus.FAILED)}
    plan = plan_libraries({A: 1, B: 1, C: 1}, known, LibrarySettings())
    assert (plan.fetch, plan.keep, plan.forget, plan.unindex) == ((C,), (A,), (), ())


def test_an_unused_version_is_forgotten_and_a_disallowed_one_unindexed() -> None:
    known = {A: row(A, LibraryStatus.INDEXED), B: row(B, LibraryStatus.INDEXED)}
    plan = plan_libraries({B: 1}, known, LibrarySettings(allow=["com.*"]))
    assert plan.forget == (A,)
    assert plan.unindex == (B,)
    assert plan.mark[B][0] is LibraryStatus.NOT_ALLOWED


def test_a_status_already_recorded_is_not_written_again() -> None:
    detail = "outside JAVAKB_LIBRARIES__ALLOW"
    plan = plan_libraries({A: 1}, {A: row(A, LibraryStatus.NOT_ALLOWED, detail)}, LibrarySettings(allow=["x*"]))
    assert plan.mark == {} and plan.fetch == ()


def test_the_minimum_of_projects() -> None:
    plan = plan_libraries({A: 1, B: 2}, {}, LibrarySettings(min_projects=2))
    assert plan.fetch == (B,)
    assert plan.mark[A][0] is LibraryStatus.NOT_ALLOWED


def test_a_jar_reads_only_bounded_java_files() -> None:
    jar = sources_jar(
        {"org/a/A.java": "class A {}", "org/a/Big.java": "x" * 100, "org/a/notes.txt": "hi", UP + "evil.java": "x"}
    )
    found = java_files(jar, max_file_bytes=50, max_total=1000, max_files=10)
    assert [path for path, _ in found.files] == ["org/a/A.java"]
    assert [path for path, _ in found.skipped] == ["org/a/Big.java"]


def test_a_jar_that_is_no_zip_is_a_problem() -> None:
    found = java_files(b"PK nonsense", max_file_bytes=10, max_total=10, max_files=10)
    assert "not a readable jar" in (found.problem or "")


def test_a_zip_bomb_stops_at_the_total() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as jar:
        for i in range(20):
            jar.writestr(f"p/F{i:02}.java", "a" * 10_000)
    found = java_files(buffer.getvalue(), max_file_bytes=20_000, max_total=50_000, max_files=100)
    assert len(found.files) == 5 and "in all" in found.skipped[-1][1]


def client(handler: httpx.MockTransport) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=handler)


async def test_the_first_repository_that_has_it_answers_with_its_credentials() -> None:
    seen: list[tuple[str, str | None, str | None]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append((request.url.host, request.headers.get("Authorization"), request.headers.get("Deploy-Token")))
        return httpx.Response(404) if request.url.host == "one" else httpx.Response(200, content=b"jar")

    repositories = [
        MavenRepository(url="https://one/maven2/", username="ci", password=SecretStr("pw")),
        MavenRepository(url="https://two/packages/maven", token=SecretStr("tkn"), token_header="Deploy-Token"),
    ]
    async with client(httpx.MockTransport(answer)) as http:
        outcome = await fetch_sources(http, repositories, A, max_bytes=100, timeout_s=1)
    assert outcome == Fetched(data=b"jar", url="https://two/packages/maven/" + sources_path(*A))
    assert seen[0][1] is not None and seen[0][1].startswith("Basic ")
    assert seen[1] == ("two", None, "tkn")


@pytest.mark.parametrize(
    ("response", "kind", "detail"),
    [
        (httpx.Response(404), Missing, "no a-1-sources.jar in https://r"),
        (httpx.Response(403), Failed, "403 from https://r/org/a/a/1/a-1-sources.jar"),
        (httpx.Response(503), Failed, "503 from"),
        (httpx.Response(200, content=b"x" * 101), Failed, "over the limit of 100 bytes"),
    ],
)
async def test_outcomes(response: httpx.Response, kind: type, detail: str) -> None:
    async with client(httpx.MockTransport(lambda _: response)) as http:
        outcome = await fetch_sources(http, [MavenRepository(url="https://r")], A, max_bytes=100, timeout_s=1)
    assert isinstance(outcome, Missing | Failed) and isinstance(outcome, kind) and detail in outcome.detail


async def test_a_timeout_is_a_failure_naming_no_credentials() -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    repository = MavenRepository(url="https://r", token=SecretStr("secret-token"))
    async with client(httpx.MockTransport(fail)) as http:
        outcome = await fetch_sources(http, [repository], A, max_bytes=100, timeout_s=1)
    assert isinstance(outcome, Failed) and "ReadTimeout" in outcome.detail and "secret-token" not in outcome.detail


def test_repository_secrets_are_redacted_from_logs() -> None:
    settings = Settings(
        libraries=LibrarySettings(
            repositories=[MavenRepository(url="https://r", password=SecretStr("pw-1234"), token=SecretStr("tk-5678"))]
        )
    )
    assert {"pw-1234", "tk-5678"} <= set(secret_values(settings))
