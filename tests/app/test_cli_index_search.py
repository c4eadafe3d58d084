"""`javakb index PATH` and `javakb search QUERY` end to end, over embedded Qdrant in a temporary folder.

The CLI builds `Settings` from the environment, so the tests set `JAVAKB_*` variables (a process edge).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import shutil
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest

from app.core.settings import Settings
from app.store import filters
from app.store.engines import Store, open_store
from app.store.vectors import IndexModel, StoredState
from app.sync.local_index import LOCAL_STEPS, LocalRun, index_directory
from entry.cli import main
from entry.deps import open_deps
from pipeline.model import FileResult
from testkit.fake_embedder import FakeEmbeddingServer
from testkit.standins import ByRole, Method
from tests.support.contract import CITATION_FIELDS
from tests.support.engines import EMBEDDED_ENGINES
from tests.support.java_fixtures import SHOP_DIR
from tests.support.shop import API_SRC, CORE_SRC

T = TypeVar("T")

REPO = "acme/shop"
ALIAS = "java_code"
OWNER_SERVICE = f"{CORE_SRC}/core/service/OwnerService.java"
WITHOUT_POINTS = tuple(
    f"{CORE_SRC}/{p}" for p in ("legacy/Blob.java", "legacy/Empty.java", "core/service/package-info.java")
)
PROJECT_FOLDERS = (f"{CORE_SRC}/core/service", f"{CORE_SRC}/core/repository", f"{CORE_SRC}/legacy", f"{API_SRC}/web")
PROJECT_FILES = 19  # 6 + 5 + 3 + 5; the binary Blob.java and the empty Empty.java are skipped
PROJECT_CHUNKS = 86  # 16 of them bodiless methods (issue 12), mostly repository interfaces
SUMMARY = re.compile(
    r"javakb index: (?P<repo>\S+): (?P<files>\d+) files, (?P<embedded>\d+) chunks "
    r"(?:embedded with \S+ and indexed|indexed \(lexical only: embedding provider none\)), (?P<reused>\d+) reused, "
    r"(?P<deleted>\d+) deleted, (?P<skipped>\d+) skipped, (?P<removed>\d+) vanished files removed"
)
CITATION = CITATION_FIELDS


@pytest.fixture(autouse=True, params=EMBEDDED_ENGINES)
def qdrant_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """Default settings, except that the embedded store (each engine in turn) lives in a temporary folder."""
    for name in list(os.environ):
        if name.upper().startswith("JAVAKB_"):
            monkeypatch.delenv(name)
    path = tmp_path / "qdrant"
    monkeypatch.setenv("JAVAKB_QDRANT__PATH", str(path))
    monkeypatch.setenv("JAVAKB_QDRANT__ENGINE", request.param)
    monkeypatch.setenv("JAVAKB_EMBEDDING__PROVIDER", "none")  # lexical orders; the model: test_cli_embedded_default
    return path


@pytest.fixture
def embedding_server() -> Iterator[FakeEmbeddingServer]:
    """Point the CLI's embedding settings at a fake server (the settings change after a first index)."""
    with FakeEmbeddingServer(dim=32) as server:
        yield server


def use_embeddings(monkeypatch: pytest.MonkeyPatch, server: FakeEmbeddingServer) -> None:
    monkeypatch.setenv("JAVAKB_EMBEDDING__PROVIDER", "endpoint")
    monkeypatch.setenv("JAVAKB_EMBEDDING__BASE_URL", server.base_url)
    monkeypatch.setenv("JAVAKB_EMBEDDING__MODEL", "fake-embed")
    monkeypatch.setenv("JAVAKB_EMBEDDING__DIMENSIONS", "32")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the CLI; a clean failure may come back as a return code or as `SystemExit`."""
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def index(capsys: pytest.CaptureFixture[str], root: Path, *extra: str) -> dict[str, Any]:
    code, _, err = run(capsys, "index", str(root), "--repo", REPO, *extra)
    assert code == 0, err
    found = SUMMARY.search(err)
    assert found is not None, err
    return {k: v if k == "repo" else int(v) for k, v in found.groupdict().items()}


def search_json(capsys: pytest.CaptureFixture[str], query: str, *extra: str) -> list[dict[str, Any]]:
    code, out, err = run(capsys, "search", query, "--json", *extra)
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert all(isinstance(r, dict) for r in records)
    return records


def stored(qdrant_path: Path) -> tuple[dict[str, str], set[str], list[dict[str, Any]]]:
    """Aliases, collections and every payload, read after the CLI has released the folder."""
    return asyncio.run(read_store(lambda store: _stored(store)))


async def _stored(store: Store) -> tuple[dict[str, str], set[str], list[dict[str, Any]]]:
    target = await store.target()
    aliases = {ALIAS: target} if target else {}
    payloads = [r.payload or {} async for r in store.scroll(filters.everything(), True)] if target else []
    return aliases, set(await store.generations()), payloads


async def read_store(read: Callable[[Store], Awaitable[T]]) -> T:
    """Open the store the CLI used (engine and folder from the environment), read it, close it."""
    store = open_store(Settings().qdrant)
    try:
        return await read(store)
    finally:
        await store.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of part of the `shop` fixture: enough to search, small enough to index in a blink."""
    root = tmp_path / "shop"
    for folder in PROJECT_FOLDERS:
        shutil.copytree(SHOP_DIR / folder, root / folder)
    return root


def test_index_then_reindex_embeds_nothing_the_second_time(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = index(capsys, project)
    second = index(capsys, project)

    assert first["repo"] == REPO
    assert first["files"] == second["files"] == PROJECT_FILES
    assert first["embedded"] == PROJECT_CHUNKS
    assert first["reused"] == 0
    assert second["embedded"] == second["deleted"] == second["removed"] == 0
    assert second["reused"] == first["embedded"]
    assert first["skipped"] == second["skipped"] == 2


def test_a_reindex_reads_the_stored_state_once_not_per_batch(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # One read per batch made an idle re-run of java.base take 160 s on local mode. The run counts the
    # points per stamp in one facet and reads the state of only the stored files it must rewrite or remove.
    monkeypatch.setenv("JAVAKB_WORKER__FILES_PER_BATCH", "2")
    index(capsys, project)
    (project / OWNER_SERVICE).unlink()
    reads: list[Sequence[str] | None] = []

    def counted(stored_state: Method) -> Method:
        async def count(repo_path: str, file_paths: Sequence[str] | None, **kw: Any) -> StoredState:
            reads.append(file_paths)
            return cast(StoredState, await stored_state(repo_path, file_paths, **kw))

        return count

    async def reindex() -> LocalRun:
        async with open_deps(Settings(), wrap=ByRole({"store": {"stored_state": counted}})) as deps:
            assert deps.settings.worker.files_per_batch == 2
            return await index_directory(deps, project, REPO)

    second = asyncio.run(reindex())  # the CLI runs its own loop too
    assert reads == [[OWNER_SERVICE]]  # the file gone, once, for 9 batches; no unchanged file's points
    assert (second.counts.embedded, second.counts.deleted, second.removed_files) == (0, 0, 1)
    assert second.counts.reused == PROJECT_CHUNKS - 13

    async def stamped_without_paths() -> None:  # as a store written before stamps carried the path
        async with open_deps(Settings()) as deps:
            await deps.store.set_payload_where(filters.all_of(filters.eq("repo_path", REPO)), {"source_hash": "h/1"})

    asyncio.run(stamped_without_paths())
    reads.clear()
    third = asyncio.run(reindex())
    assert reads == [None]  # the whole state: no stamp tells its file
    assert (third.counts.embedded, third.counts.reused) == (0, PROJECT_CHUNKS - 13)  # re-chunked, not re-embedded
    reads.clear()
    asyncio.run(reindex())
    assert reads == [[]]  # stamped again by the run before: nothing to read


def test_index_writes_one_point_per_chunk(project: Path, capsys: pytest.CaptureFixture[str], qdrant_path: Path) -> None:
    counts = index(capsys, project)

    aliases, collections, payloads = stored(qdrant_path)

    assert aliases == {ALIAS: f"{ALIAS}_1"}
    assert collections == {f"{ALIAS}_1"}
    assert len(payloads) == counts["embedded"]
    assert {p["repo_path"] for p in payloads} == {REPO}


def test_repo_defaults_to_the_directory_name(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "index", str(project))

    assert code == 0
    assert f"javakb index: shop: {PROJECT_FILES} files, {PROJECT_CHUNKS} chunks indexed (lexical only" in err


def test_index_of_a_missing_directory_fails_cleanly(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "index", str(tmp_path / "nowhere"))

    assert code == 2
    assert "not a directory" in err


def test_search_json_lines_carry_citation_and_rank(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index(capsys, project)

    records = search_json(capsys, "OwnerService.find", "--limit", "5")

    assert len(records) == 5
    assert [r["rank"] for r in records] == [1, 2, 3, 4, 5]
    for record in records:
        assert set(record) >= CITATION
        assert "score" not in record  # the order is the ranking's; no score made it (issue 28)
        assert record["repo_path"] == REPO
        assert record["commit_sha"] is None
        assert record["permalink"] is None
        assert record["line_start"] <= record["line_end"]
    assert [r["qualified_name"] for r in records[:3]] == ["com.acme.shop.core.service.OwnerService.find"] * 3
    assert records[0]["file_path"] == OWNER_SERVICE


def test_search_filters_from_the_command_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index(capsys, project)

    records = search_json(capsys, "owner", "--repo", "acme/", "--type", "interface", "--limit", "20")

    assert records
    assert {r["symbol_type"] for r in records} == {"interface"}


LIBRARY_SOURCE = """\
package org.example.lib;

/** Owners of a library, found only with a library scope. */
public class OwnerRegistry {
    public String owner(String name) {
        return name;
    }
}
"""


async def _write_library(store: Store) -> None:
    from app.store.indexing import Indexer
    from pipeline.chunking import chunk_source
    from pipeline.model import ChunkerConfig, SourceContext

    repo = "maven:org.example:lib:1.0"
    context = SourceContext(repo_path=repo, library=True)
    result = chunk_source(LIBRARY_SOURCE.encode(), "org/example/lib/OwnerRegistry.java", context, ChunkerConfig())
    await Indexer(store, None).write(repo, [result])


def test_search_scope_picks_the_org_code_the_libraries_or_both(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index(capsys, project)
    asyncio.run(read_store(_write_library))

    def repos(*scope: str) -> set[str]:
        return {r["repo_path"] for r in search_json(capsys, "owner registry", "--limit", "50", *scope)}

    assert repos() == {"acme/shop"}  # the org's code only, by default
    assert repos("--scope", "code") == {"acme/shop"}
    assert repos("--scope", "libraries") == {"maven:org.example:lib:1.0"}
    assert repos("--scope", "all") == {"acme/shop", "maven:org.example:lib:1.0"}


def test_search_prints_readable_results(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index(capsys, project)

    code, out, _ = run(capsys, "search", "OwnerController.initNewPetForm", "--limit", "1")

    assert code == 0
    assert out.startswith(" 1. com.acme.shop.api.web.OwnerController.initNewPetForm  (method, rest_controller)")
    assert "acme/shop:shop-api/src/main/java/com/acme/shop/api/web/OwnerController.java:" in out


def test_search_with_no_results(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index(capsys, project)

    assert search_json(capsys, "owner", "--repo", "nobody/") == []
    assert run(capsys, "search", "owner", "--repo", "nobody/")[1] == "no results\n"


def chunked_files(project: Path, settings: Settings) -> tuple[list[str], LocalRun]:
    """Index `project` again and note which files it chunked."""
    seen: list[str] = []

    def chunk(files: list[tuple[str, Path]], *args: Any) -> Iterator[FileResult]:
        seen.extend(rel for rel, _ in files)
        return LOCAL_STEPS.chunk(files, *args)

    async def reindex() -> LocalRun:
        async with open_deps(settings) as deps:
            steps = dataclasses.replace(LOCAL_STEPS, chunk=chunk)
            return await index_directory(deps, project, REPO, steps=steps)

    run = asyncio.run(reindex())
    return sorted(seen), run


def test_a_reindex_chunks_only_the_files_that_changed(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index(capsys, project)
    path = project / OWNER_SERVICE
    path.write_text(path.read_text().replace("lastName.strip();", "lastName.trim();"))

    seen, second = chunked_files(project, Settings())

    # The edited file, and those that have no points to carry a source hash (binary, empty, package-info).
    assert seen == sorted([OWNER_SERVICE, *WITHOUT_POINTS])
    assert (second.counts.files, second.counts.embedded, second.counts.reused) == (PROJECT_FILES, 1, PROJECT_CHUNKS - 1)
    again, third = chunked_files(project, Settings())
    assert again == sorted(WITHOUT_POINTS) and third.counts.reused == PROJECT_CHUNKS


def test_other_chunker_settings_chunk_every_file_again(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index(capsys, project)
    settings = Settings()
    tighter = settings.model_copy(update={"chunking": settings.chunking.model_copy(update={"max_chunk_tokens": 1499})})

    seen, second = chunked_files(project, tighter)

    assert len(seen) == PROJECT_FILES
    assert second.counts.embedded == 0 and second.counts.reused == PROJECT_CHUNKS


def test_reindex_after_deleting_a_file_removes_its_points(
    capsys: pytest.CaptureFixture[str], project: Path, qdrant_path: Path
) -> None:
    first = index(capsys, project)
    (project / OWNER_SERVICE).unlink()

    second = index(capsys, project)

    assert second["files"] == PROJECT_FILES - 1
    assert second["removed"] == 1
    assert second["embedded"] == 0
    _, _, payloads = stored(qdrant_path)
    assert OWNER_SERVICE not in {p["file_path"] for p in payloads}
    assert len(payloads) == first["embedded"] - 13  # OwnerService.java held 13 chunks
    records = search_json(capsys, "OwnerService.find", "--limit", "20")
    assert OWNER_SERVICE not in {r["file_path"] for r in records}


def test_reindex_after_editing_a_file_embeds_only_what_changed(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    index(capsys, project)
    path = project / OWNER_SERVICE
    path.write_text(path.read_text().replace("lastName.strip();", "lastName.trim();"))

    second = index(capsys, project)

    assert (second["embedded"], second["deleted"], second["removed"]) == (1, 0, 0)


def test_reindex_with_other_embedding_settings_fails_with_the_rebuild_command(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    embedding_server: FakeEmbeddingServer,
) -> None:
    index(capsys, project)
    use_embeddings(monkeypatch, embedding_server)

    code, _, err = run(capsys, "index", str(project), "--repo", REPO)

    assert code != 0
    assert "javakb index PATH --rebuild" in err
    assert "Traceback" not in err


def test_search_with_other_embedding_settings_fails_with_the_rebuild_command(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    embedding_server: FakeEmbeddingServer,
) -> None:
    index(capsys, project)
    use_embeddings(monkeypatch, embedding_server)

    code, out, err = run(capsys, "search", "owner", "--json")

    assert code != 0
    assert out == ""
    assert "javakb index PATH --rebuild" in err
    assert "Traceback" not in err


def test_rebuild_switches_the_alias_and_drops_the_old_collection(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    embedding_server: FakeEmbeddingServer,
    qdrant_path: Path,
) -> None:
    lexical = index(capsys, project)
    use_embeddings(monkeypatch, embedding_server)

    rebuilt = index(capsys, project, "--rebuild")

    assert rebuilt["embedded"] == lexical["embedded"]
    assert embedding_server.inputs_total == rebuilt["embedded"]
    aliases, collections, payloads = stored(qdrant_path)
    assert aliases == {ALIAS: f"{ALIAS}_2"}
    assert collections == {f"{ALIAS}_2"}
    assert len(payloads) == rebuilt["embedded"]
    recorded = asyncio.run(read_store(lambda store: store.recorded_model()))
    assert recorded == IndexModel(embedding_model="fake-embed", dimension=32)
    records = search_json(capsys, "OwnerService.find", "--limit", "3")
    assert [r["qualified_name"] for r in records] == ["com.acme.shop.core.service.OwnerService.find"] * 3


def test_rebuild_of_an_empty_store_creates_the_first_generation(
    project: Path, capsys: pytest.CaptureFixture[str], qdrant_path: Path
) -> None:
    counts = index(capsys, project, "--rebuild")

    aliases, collections, payloads = stored(qdrant_path)
    assert aliases == {ALIAS: f"{ALIAS}_1"}
    assert collections == {f"{ALIAS}_1"}
    assert len(payloads) == counts["embedded"]


def test_hybrid_index_then_reindex_embeds_nothing(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    embedding_server: FakeEmbeddingServer,
) -> None:
    use_embeddings(monkeypatch, embedding_server)
    first = index(capsys, project)
    inputs = embedding_server.inputs_total

    second = index(capsys, project)

    assert inputs == first["embedded"]
    assert second["embedded"] == 0
    assert embedding_server.inputs_total == inputs  # the dimension is configured, so not even a probe


def test_a_hybrid_index_builds_the_vector_index_unless_told_not_to(
    capsys: pytest.CaptureFixture[str],
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    embedding_server: FakeEmbeddingServer,
) -> None:
    use_embeddings(monkeypatch, embedding_server)
    code, _, err = run(capsys, "index", str(project), "--repo", REPO)
    assert code == 0 and "javakb index: vector index: " in err  # this small store: "nothing to build"
    code, _, err = run(capsys, "index", str(project), "--repo", REPO, "--no-optimize")
    assert code == 0 and "vector index" not in err
    code, _, err = run(capsys, "optimize")
    assert code == 0 and "javakb optimize: vector index: " in err


def test_a_lexical_index_has_no_vector_index_to_build(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    code, _, err = run(capsys, "index", str(project), "--repo", REPO)
    assert code == 0 and "vector index" not in err


def test_points_are_filterable_by_repo_after_indexing_two_repos(
    project: Path, capsys: pytest.CaptureFixture[str], qdrant_path: Path
) -> None:
    index(capsys, project)
    code, _, err = run(capsys, "index", str(project), "--repo", "other/shop")
    assert code == 0, err

    records = search_json(capsys, "OwnerService.find", "--repo", "other/", "--limit", "5")

    assert {r["repo_path"] for r in records} == {"other/shop"}
    other = asyncio.run(read_store(lambda store: store.count(filters.all_of(filters.eq("repo_path", "other/shop")))))
    total = asyncio.run(read_store(lambda store: store.count()))
    assert total == 2 * other


def test_rebuild_refuses_to_drop_other_repositories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVAKB_QDRANT__PATH", str(tmp_path / "kb"))
    source = tmp_path / "one"
    (source / "src/main/java/a").mkdir(parents=True)
    (source / "src/main/java/a/A.java").write_text("package a; class A { void m() {} }")
    assert main(["index", str(source), "--repo", "g/one"]) == 0
    assert main(["index", str(source), "--repo", "g/two"]) == 0
    assert main(["index", str(source), "--repo", "g/one", "--rebuild"]) == 1
    assert main(["index", str(source), "--repo", "g/one", "--rebuild", "--drop-other-repos"]) == 0
