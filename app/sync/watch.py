"""`javakb serve --watch PATH...`: index local checkouts, then keep them fresh while serving.

Each checkout is indexed once at start (`index_directory`, incremental by content hash), then polled
every `interval_s`: a file whose modification time or size changed, or that appeared, is chunked
again and written through the same `Indexer` (which re-embeds only chunks whose content hash
changed); a vanished file's points are deleted. Polling (`os.stat` of the in-scope files) needs no
platform file-watch API and sees edits made by any tool, including a `git checkout`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from app.core.errors import ServiceError
from app.core.states import SyncTrigger
from app.runtime import Deps
from app.store.indexing import RunCounts
from app.sync.local_index import log_skipped
from app.sync.local_project import build_files, index_local, recorded
from app.sync.localfs import chunk_local_files, iter_sources
from pipeline.buildfiles import is_build_file
from pipeline.model import ChunkerConfig, SourceContext
from pipeline.scope import Scope

logger = logging.getLogger(__name__)

Snapshot = dict[str, tuple[int, int]]  # repository-relative path -> (mtime_ns, size)


@dataclass(frozen=True, slots=True)
class Changes:
    """What differs between two snapshots of a checkout."""

    changed: list[str]  # new or modified, sorted
    removed: list[str]  # sorted

    def __bool__(self) -> bool:
        return bool(self.changed or self.removed)


def diff(before: Mapping[str, tuple[int, int]], after: Mapping[str, tuple[int, int]]) -> Changes:
    """Files added or modified (by mtime or size) and files removed (pure)."""
    changed = sorted(path for path, stat in after.items() if before.get(path) != stat)
    return Changes(changed=changed, removed=sorted(set(before) - set(after)))


def snapshot(root: Path, scope: Scope, config: ChunkerConfig | None = None) -> Snapshot:
    """Modification time and size of every in-scope file under `root` (a vanished file is left out).

    With `config`, the build files a sync reads too (`local_project.build_files`): a changed one is a change.
    """
    seen: Snapshot = {}
    builds = build_files(root, config) if config is not None else []
    for rel, path in [*iter_sources(root, scope), *builds]:
        try:
            stat = path.stat()
        except OSError:
            continue
        seen[rel] = (stat.st_mtime_ns, stat.st_size)
    return seen


async def sync_changes(deps: Deps, root: Path, repo_path: str, changes: Changes) -> RunCounts:
    """Write what changed in a checkout: chunk the changed sources again, delete the removed ones.

    A build file among them is not chunked: its run reads the dependencies again (`local_project.recorded`).
    """
    counts = RunCounts()
    config = deps.settings.chunking.to_config()
    files = [(rel, root / rel) for rel in changes.changed if not is_build_file(rel)]
    if files:
        results = await asyncio.to_thread(
            lambda: list(chunk_local_files(files, SourceContext(repo_path=repo_path), config))
        )
        plan = await deps.indexer.write(repo_path, results)
        counts.add(plan, results)
        log_skipped(results)
    if changes.removed:
        await deps.indexer.delete_files(repo_path, changes.removed)
    return counts


async def _synced(deps: Deps, root: Path, repo_path: str, changes: Changes) -> RunCounts:
    """`sync_changes`, recorded as a run of the checkout's local project when PostgreSQL is there."""
    db = deps.db
    if db is None:
        return await sync_changes(deps, root, repo_path, changes)
    project = await db.local_project(repo_path, str(root.resolve()))
    done: list[RunCounts] = []

    async def work() -> tuple[RunCounts, int, Sequence[str] | None, Sequence[str]]:
        done.append(await sync_changes(deps, root, repo_path, changes))
        return done[0], len(changes.removed), changes.changed, changes.removed

    await recorded(deps, db, project, root, SyncTrigger.LOCAL, work)
    return done[0]


def log_progress(root: Path, done: int, total: int) -> None:
    """A first pass's progress, at INFO: what `javakb index` shows as its bar (`index_directory`'s `progress`)."""
    logger.info("watch: indexing %s: %d/%d files", root, done, total)


async def watch(deps: Deps, roots: Sequence[Path], interval_s: float, stop: asyncio.Event) -> None:
    """Index every checkout, then re-sync changed files every `interval_s` until `stop` is set."""
    config = deps.settings.chunking.to_config()
    scope = Scope.from_config(config)
    seen: dict[Path, Snapshot] = {}
    for root in roots:
        seen[root] = await asyncio.to_thread(snapshot, root, scope, config)
        run = await index_local(deps, root, root.resolve().name, progress=partial(log_progress, root))
        logger.info("watch: indexed %s (%d files, %d chunks written)", root, run.counts.files, run.counts.embedded)
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval_s)
        for root in roots if not stop.is_set() else ():
            seen[root] = await _resync(deps, root, scope, seen[root])


async def _resync(deps: Deps, root: Path, scope: Scope, before: Snapshot) -> Snapshot:
    after = await asyncio.to_thread(snapshot, root, scope, deps.settings.chunking.to_config())
    changes = diff(before, after)
    if not changes:
        return after
    try:
        counts = await _synced(deps, root, root.resolve().name, changes)
    except ServiceError as exc:  # the store or the embedder failed: try these files again next time
        logger.warning("watch: re-sync of %s failed, retrying: %s", root, exc)
        return before
    logger.info(
        "watch: %s: %d changed, %d removed files, %d chunks written",
        root,
        len(changes.changed),
        len(changes.removed),
        counts.embedded,
    )
    return after
