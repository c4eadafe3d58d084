"""Local checkouts are projects like any other (issue 27): their runs recorded where a GitLab sync records its.

A local checkout has a `projects` row (`Database.local_project`, `source = local`, its working tree in
`local_root`), and every run over it writes what a GitLab sync writes: a run in `index_jobs`, the file
manifest (file and chunk counts), the dependencies its build files declare (`project_dependencies`, the
library job asked when they changed), and `mark_synced` with the working tree's state. So `index_status`,
`refresh_repo`, `find_library_usages`, `GET /admin/projects` and `javakb admin status` read it through their
one query each.

A working tree has no commit to compare: its state (`tree_state`) is a digest of the path, modification
time and size of every file a run reads (the in-scope sources and the build files). It stands where a
GitLab project has commits: `indexed_sha` is the state a run read, `head_sha` the state last seen
(`check_local_heads`, before each status answer), so a tree changed after indexing shows `behind` with
its lag in seconds exactly as a GitLab project whose head moved. A refresh asks for a sync like any other,
and the worker's sync of a local project runs `index_local` over its working tree (`sync_local`).

Without PostgreSQL (`javakb index` while no `javakb serve` runs) the store alone is indexed; the run is noted
beside the store and the next `javakb serve` records it through `sync_local` (`app.sync.indexed_here`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from app.core.context import bound
from app.core.errors import QueueUnavailableError, ServiceError
from app.core.states import ProjectStatus, RunStatus, SyncMode, SyncTrigger, Trigger
from app.db import Database, ProjectRow
from app.db.rows import JobCounts
from app.jobs.queue import enqueue_libraries
from app.libraries.service import MAX_BUILD_FILES, build_scope
from app.runtime import Deps
from app.store.indexing import RunCounts
from app.sync.local_index import LocalRun, index_directory
from app.sync.localfs import in_scope, walk_names
from pipeline.buildfiles import is_build_file, read_builds
from pipeline.model import ChunkerConfig
from pipeline.scope import Scope

logger = logging.getLogger(__name__)

Work = Callable[[], Awaitable[tuple[RunCounts, int, Sequence[str] | None, Sequence[str]]]]
"""A run's work: (its counts, files removed, the files it wrote (None: every file), the files it removed)."""


def tree_state(root: Path, config: ChunkerConfig) -> str:
    """The working tree's state as a run reads it: a digest of each source's and build file's path, mtime and size.

    One walk of strings (`walk_names`), one `stat` per file read: checked at every status answer.
    """
    source, build = in_scope(root, Scope.from_config(config)), build_scope(config)
    sha = hashlib.sha256()
    for rel, full in sorted(walk_names(root)):
        if source(rel) or (is_build_file(rel) and build.matches(rel)):
            with contextlib.suppress(OSError):
                stat = os.stat(full)
                sha.update(f"{rel}\0{stat.st_mtime_ns}\0{stat.st_size}\n".encode())
    return sha.hexdigest()


def build_files(root: Path, config: ChunkerConfig) -> list[tuple[str, Path]]:
    """The build files under `root` a sync reads (`app.libraries.service.build_scope`), at most `MAX_BUILD_FILES`."""
    scope = build_scope(config)
    found = sorted((rel, full) for rel, full in walk_names(root) if is_build_file(rel) and scope.matches(rel))
    return [(rel, Path(full)) for rel, full in found[:MAX_BUILD_FILES]]


async def index_local(
    deps: Deps, root: Path, repo_path: str, *, trigger: Trigger = SyncTrigger.LOCAL, **options: Any
) -> LocalRun:
    """`index_directory` over a checkout, recorded as its local project's run when PostgreSQL is there."""
    db = deps.db
    if db is None:
        return await index_directory(deps, root, repo_path, **options)
    project = await db.local_project(repo_path, str(root.resolve()))
    runs: list[LocalRun] = []

    async def work() -> tuple[RunCounts, int, Sequence[str] | None, Sequence[str]]:
        run = await index_directory(deps, root, project.repo_path, **options)
        runs.append(run)
        return run.counts, run.removed_files, None, ()

    await recorded(deps, db, project, root, trigger, work)
    return runs[0]


async def recorded(deps: Deps, db: Database, project: ProjectRow, root: Path, trigger: Trigger, work: Work) -> None:
    """Run `work` over a local project as a sync run: its run row, manifest, dependencies and indexed state.

    Raises what `work` raises (a `ServiceError`), after recording it as the run's and the project's error.
    """
    config = deps.settings.chunking.to_config()
    with bound(project_id=project.id):
        state = await asyncio.to_thread(tree_state, root, config)  # before reading: a later edit shows as lag
        run_id = await db.start_run(project.id, trigger, project.indexed_sha)
        await db.set_status(project.id, ProjectStatus.SYNCING)
        try:
            counts, removed, written, gone = await work()
            await _record_manifest(deps, db, project, written, gone)
            await record_local_dependencies(deps, db, project.id, root, state)
        except ServiceError as exc:
            error = f"{type(exc).__name__}: {exc}"
            failed = RunStatus.FAILED
            await db.finish_run(run_id, status=failed, to_sha=state, mode=None, counts=JobCounts(), error=error)
            await db.set_status(project.id, ProjectStatus.FAILED, error)
            raise
        mode = SyncMode.TREE if written is None else SyncMode.COMPARE
        await db.finish_run(
            run_id, status=RunStatus.DONE, to_sha=state, mode=mode, counts=_job_counts(counts, removed), error=None
        )
        await db.mark_synced(project.id, state, project.requested_gen, None)


def _job_counts(counts: RunCounts, removed: int) -> JobCounts:
    return JobCounts(
        files_changed=counts.files + removed,
        files_parsed=counts.files,
        files_skipped=counts.skipped,
        files_deleted=removed,
        chunks_embedded=counts.embedded,
        chunks_reused=counts.reused,
        chunks_deleted=counts.deleted,
    )


async def _record_manifest(
    deps: Deps, db: Database, project: ProjectRow, written: Sequence[str] | None, gone: Sequence[str]
) -> None:
    """The manifest of the files written (None: every file) from what the store holds now: each file's points."""
    stored = await deps.store.stored_state(project.repo_path, None if written is None else list(written))
    upserts = {path: (stored.source_of(path) or "", ids) for path, ids in stored.by_file.items()}
    if written is None:
        deletes = sorted(set(await db.manifest(project.id)) - set(upserts))
    else:
        deletes = sorted({*gone, *(path for path in written if path not in upserts)})
    await db.update_manifest(project.id, upserts, deletes)


async def record_local_dependencies(deps: Deps, db: Database, project_id: int, root: Path, state: str) -> bool:
    """Record what the working tree's build files declare (as `record_dependencies` does); True when it changed."""
    if not deps.settings.libraries.enabled:
        return False
    config = deps.settings.chunking.to_config()
    files = await asyncio.to_thread(_read_build_files, root, config)
    reading = await asyncio.to_thread(read_builds, {path: data for path, data in files.items() if data is not None})
    problems = {p.source: p.detail for p in reading.problems}
    recorded_files = {
        path: (
            hashlib.sha1(data).hexdigest() if data is not None else "",
            problems.get(path) if data is not None else f"over {config.max_file_bytes} bytes: not read",
        )
        for path, data in files.items()
    }
    changed = await db.replace_dependencies(project_id, recorded_files, reading.dependencies, reading.groups)
    await db.set_dependencies_sha(project_id, state)
    if changed and deps.queue is not None:
        try:
            await enqueue_libraries(deps.queue)
        except QueueUnavailableError as exc:
            logger.warning("library job not enqueued (the sweep asks again): %s", exc)
    return changed


def _read_build_files(root: Path, config: ChunkerConfig) -> dict[str, bytes | None]:
    """Each build file's bytes (None: larger than `max_file_bytes`, or unreadable)."""
    found: dict[str, bytes | None] = {}
    for rel, path in build_files(root, config):
        try:
            found[rel] = path.read_bytes() if path.stat().st_size <= config.max_file_bytes else None
        except OSError:
            found[rel] = None
    return found


async def check_local_heads(db: Database, config: ChunkerConfig) -> None:
    """Record the state of every local project's working tree on this machine as its head (`record_heads`).

    A state other than the indexed one makes the project `behind` from now on (`projects.behind_since`).
    A working tree this process cannot see (another machine's, or gone) keeps its last head.
    """
    roots = {p.id: Path(p.local_root) for p in await db.local_projects() if p.local_root}
    if not roots:
        return

    def states() -> list[tuple[int, str | None]]:
        return [(project_id, tree_state(root, config)) for project_id, root in roots.items() if root.is_dir()]

    heads = await asyncio.to_thread(states)
    if heads:
        await db.record_heads(heads)


async def sync_local(deps: Deps, project: ProjectRow, trigger: Trigger) -> str:
    """The worker's sync of a local project (a refresh, the sweep): `index_local` over its working tree."""
    root = Path(project.local_root or "")
    if not project.local_root or not root.is_dir():
        error = f"its working tree {project.local_root or '(none recorded)'} is not on this machine"
        if deps.db is not None:
            await deps.db.set_status(project.id, ProjectStatus.FAILED, error)
        return error
    run = await index_local(deps, root, project.repo_path, trigger=trigger)
    return f"local {project.repo_path}: {run.counts.files} files, {run.counts.embedded} chunks written"
