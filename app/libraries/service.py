"""Dependency sources: record what a project's build declares (at its sync), index library versions once for the org.

`record_dependencies` is the sync's one call (`app.sync.syncer`): it reads the build files at the
head when they changed (or were never read), records the declared dependencies, and when the set
changed enqueues the library job. `index_libraries` is that job: it plans (`app.libraries.plan`),
purges versions nobody uses, fetches each wanted sources jar (`app.libraries.maven`) and writes its
Java files through the same pipeline and `Indexer` as the org's code, under
`maven:<group>:<artifact>:<version>` with the `library` flag. A missing jar is a status, never a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import Protocol

from app.core.errors import QueueUnavailableError, ServiceError, StorageError
from app.core.states import LibraryStatus
from app.db import Coordinates, Database
from app.gitlab.client import GitLabClient, RawFile
from app.jobs.queue import enqueue_libraries
from app.jobs.targets import collections, write_targets
from app.libraries.jars import java_files
from app.libraries.maven import Fetched, Missing, fetch_sources
from app.libraries.plan import LibraryPlan, plan_libraries
from app.runtime import ServiceDeps
from app.store import filters
from pipeline.buildfiles import is_build_file, library_repo_path, read_builds
from pipeline.chunking import chunk_source
from pipeline.model import ChunkerConfig, FileResult, SourceContext
from pipeline.scope import Scope, glob_to_regex

logger = logging.getLogger(__name__)

LIBRARIES_LOCK = -16
"""The advisory lock the library job holds (`Database.project_lock`): no GitLab project has a negative id."""
MAX_BUILD_FILES = 500
"""Build files read per project at most (a monorepo of 500 modules); the rest are not read, and said so."""
BATCH = 64


def build_scope(config: ChunkerConfig) -> Scope:
    """Build files worth reading: any path, less the chunker's excludes (generated code, build output) and test code."""
    return Scope(
        include=(glob_to_regex("**"),),
        exclude=tuple(glob_to_regex(p) for p in config.exclude),
        tests=tuple(glob_to_regex(p) for p in config.tests),
    )


class SeenPlan(Protocol):
    """What a sync's plan tells about the build files (`app.sync.syncer.SyncPlan`)."""

    @property
    def touched(self) -> tuple[str, ...] | None:
        """Every path a compare saw change; None: not a compare."""
        ...

    @property
    def build_blobs(self) -> Mapping[str, str] | None:
        """The build files at the head and their blobs, when the plan saw the whole tree."""
        ...

    @property
    def fetched(self) -> Mapping[str, RawFile]:
        """Files already in hand (an archive's)."""
        ...


async def record_dependencies(
    deps: ServiceDeps, db: Database, gitlab: GitLabClient, project_id: int, head: str, *, plan: SeenPlan
) -> bool:
    """Record what the build files at `head` declare; True when the set of library versions changed.

    Nothing is read when a compare touched no build file and the build was read before. A tree walk or
    an archive already saw the build files (`plan.build_blobs`, an archive's bytes in `plan.fetched`):
    only a changed blob is downloaded. A compare that touched one lists the tree. Never raises a
    `ServiceError`: the project's sync does not depend on its build files.
    """
    if not deps.settings.libraries.enabled:
        return False
    touched = plan.touched
    if touched is not None and not any(is_build_file(p) for p in touched) and await db.dependencies_sha(project_id):
        await db.set_dependencies_sha(project_id, head)
        return False
    try:
        changed = await _read_and_record(deps, db, gitlab, project_id, head, plan)
    except ServiceError as exc:
        logger.warning("project %s: build files not read: %s: %s", project_id, type(exc).__name__, exc)
        with contextlib.suppress(StorageError):
            await db.set_dependencies_sha(project_id, None)  # read them again at the next sync
        return False
    if changed:
        await ask_for_run(deps)
    return changed


async def ask_for_run(deps: ServiceDeps) -> None:
    """Enqueue the library job; when Redis fails, the reconcile sweep asks again (`Database.libraries_behind`)."""
    try:
        await enqueue_libraries(deps.queue)
    except QueueUnavailableError as exc:
        logger.warning("library job not enqueued (the sweep asks again): %s", exc)


async def _read_and_record(
    deps: ServiceDeps, db: Database, gitlab: GitLabClient, project_id: int, head: str, plan: SeenPlan
) -> bool:
    config = deps.settings.chunking.to_config()
    scope = build_scope(config)
    blobs = plan.build_blobs if plan.build_blobs is not None else await gitlab.tree(project_id, head)
    wanted = dict(sorted((p, b) for p, b in blobs.items() if is_build_file(p) and scope.matches(p))[:MAX_BUILD_FILES])
    if wanted == await db.dependency_files(project_id) and await db.dependencies_sha(project_id):
        await db.set_dependencies_sha(project_id, head)
        return False

    async def raw(path: str, blob: str) -> RawFile:
        in_hand = plan.fetched.get(path)
        return in_hand if in_hand is not None else await gitlab.raw_blob(project_id, blob, config.max_file_bytes)

    raws = await asyncio.gather(*(raw(path, blob) for path, blob in wanted.items()))
    files = {path: r.data for path, r in zip(wanted, raws, strict=True) if r.data is not None}
    reading = await asyncio.get_running_loop().run_in_executor(None, read_builds, files)
    problems = {p.source: p.detail for p in reading.problems}
    for path in wanted:
        if path not in files:
            problems[path] = f"over {config.max_file_bytes} bytes: not read"
    recorded = {path: (blob, problems.get(path)) for path, blob in wanted.items()}
    changed = await db.replace_dependencies(project_id, recorded, reading.dependencies, reading.groups)
    await db.set_dependencies_sha(project_id, head)
    unresolved = sum(1 for d in reading.dependencies if d.unresolved)
    logger.info(
        "project %s: %d build files, %d dependencies (%d unresolved), %d problems%s",
        project_id, len(wanted), len(reading.dependencies), unresolved, len(problems), " (changed)" * changed,
    )  # fmt: skip
    return changed


async def forget_project(deps: ServiceDeps, db: Database, project_id: int) -> None:
    """A project left the scope or is gone: its declarations go, and the library job purges what it alone used."""
    if await db.forget_dependencies(project_id):
        await ask_for_run(deps)


async def index_libraries(deps: ServiceDeps) -> str:
    """The library job: plan, purge unused versions, fetch and index wanted ones. Busy: raises `LibrariesBusy`."""
    db = deps.db
    async with db.project_lock(LIBRARIES_LOCK) as locked:
        if not locked:
            raise LibrariesBusyError("another library job is running")
        usage, known, own = await db.library_usage(), await db.libraries(), await db.own_groups()
        plan = plan_libraries(usage, known, deps.settings.libraries, own=own)
        await _purge(deps, db, plan)
        for coordinates, (status, detail) in plan.mark.items():
            await db.set_library(coordinates, status, detail)
        missing_points = [c for c in plan.keep if not await _has_points(deps, c)]  # a model rebuild left them out
        return await _fetch_all(deps, db, [*missing_points, *plan.fetch], plan)


class LibrariesBusyError(ServiceError):
    """Another library job holds the lock: this one retries later."""


async def _purge(deps: ServiceDeps, db: Database, plan: LibraryPlan) -> None:
    for coordinates in (*plan.unindex, *plan.forget):
        await _delete_points(deps, coordinates)
    for coordinates in plan.forget:
        await db.delete_library(coordinates)


def _library_filter(coordinates: Coordinates) -> filters.Filter:
    return filters.all_of(filters.eq("repo_path", library_repo_path(*coordinates)))


async def _delete_points(deps: ServiceDeps, coordinates: Coordinates) -> None:
    for collection in await collections(deps):
        await deps.store.delete_where(_library_filter(coordinates), collection=collection)


async def _has_points(deps: ServiceDeps, coordinates: Coordinates) -> bool:
    return await deps.store.count(where=_library_filter(coordinates)) > 0


async def _fetch_all(deps: ServiceDeps, db: Database, wanted: Sequence[Coordinates], plan: LibraryPlan) -> str:
    settings = deps.settings.libraries
    if not settings.repositories:
        for coordinates in plan.fetch:
            await db.set_library(
                coordinates, LibraryStatus.PENDING, "no Maven repository configured (JAVAKB_LIBRARIES__REPOSITORIES)"
            )
        return f"{len(plan.fetch)} library versions wanted; no Maven repository configured"
    known = await db.libraries()
    spent = sum(known[c].jar_bytes or 0 for c in plan.keep if c in known and c not in wanted)
    counts: dict[str, int] = {}
    for coordinates in wanted:
        status = await _fetch_one(deps, db, coordinates, settings.max_bytes - spent)
        if status is LibraryStatus.INDEXED:
            spent += (await db.libraries())[coordinates].jar_bytes or 0
        counts[status] = counts.get(status, 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "nothing to fetch"
    return f"libraries: {summary}; {len(plan.forget)} purged, {len(plan.unindex)} unindexed"


async def _fetch_one(deps: ServiceDeps, db: Database, coordinates: Coordinates, budget: int) -> LibraryStatus:
    settings = deps.settings.libraries
    outcome = await fetch_sources(
        deps.http, settings.repositories, coordinates, max_bytes=min(settings.max_jar_bytes, max(budget, 0)) or 1,
        timeout_s=settings.timeout_s,
    )  # fmt: skip
    if isinstance(outcome, Missing):
        await db.set_library(coordinates, LibraryStatus.NO_SOURCES, outcome.detail)
        return LibraryStatus.NO_SOURCES
    if not isinstance(outcome, Fetched):
        over = "over the limit" in outcome.detail and budget < settings.max_jar_bytes
        status = LibraryStatus.OVER_BUDGET if over else LibraryStatus.FAILED
        detail = f"past JAVAKB_LIBRARIES__MAX_BYTES ({outcome.detail})" if over else outcome.detail
        await db.set_library(coordinates, status, detail)
        return status
    indexed = await _index_jar(deps, coordinates, outcome.data)
    if isinstance(indexed, str):
        await db.set_library(coordinates, LibraryStatus.FAILED, indexed, source_url=outcome.url)
        return LibraryStatus.FAILED
    chunks, cut = indexed
    await db.set_library(
        coordinates, LibraryStatus.INDEXED, cut, source_url=outcome.url, jar_bytes=len(outcome.data), chunks=chunks
    )
    return LibraryStatus.INDEXED


async def _index_jar(deps: ServiceDeps, coordinates: Coordinates, data: bytes) -> tuple[int, str | None] | str:
    """Chunk and write the Java files of a sources jar within its caps: (chunks, why cut short), or why unreadable."""
    config, settings = deps.settings.chunking.to_config(), deps.settings.libraries
    loop = asyncio.get_running_loop()
    jar = await loop.run_in_executor(
        None,
        lambda: java_files(
            data, max_file_bytes=config.max_file_bytes, max_total=settings.max_jar_bytes * 4,
            max_files=settings.max_jar_entries,
        ),
    )  # fmt: skip
    if jar.problem is not None:
        return jar.problem
    repo_path = library_repo_path(*coordinates)
    context = SourceContext(repo_path=repo_path, library=True)
    targets = await write_targets(deps)
    chunks, cut = 0, jar.cut
    for start in range(0, len(jar.files), BATCH):
        batch = jar.files[start : start + BATCH]
        results: list[FileResult] = list(
            await asyncio.gather(
                *(loop.run_in_executor(deps.executor, chunk_source, raw, path, context, config) for path, raw in batch)
            )
        )
        kept = _within(results, settings.max_library_chunks - chunks)
        for target in targets:
            await target.indexer.write(repo_path, kept, collection=target.collection)
        chunks += sum(len(r.chunks) for r in kept)
        if len(kept) < len(results):
            cut = f"{chunks} chunks, the next file past JAVAKB_LIBRARIES__MAX_LIBRARY_CHUNKS"
            break
    return chunks, None if cut is None else f"partly indexed: {cut}"


def _within(results: Sequence[FileResult], room: int) -> list[FileResult]:
    """The leading whole files whose chunks fit in `room` (issue 24: a jar of 20,000 one-line classes)."""
    kept: list[FileResult] = []
    for result in results:
        room -= len(result.chunks)
        if room < 0:
            break
        kept.append(result)
    return kept
