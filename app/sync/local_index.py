"""Index a local checkout (the `javakb index` command): chunk, write in batches, drop vanished files."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from app.auth.access import LOCAL
from app.core.env_names import SCOPE_SETTING
from app.core.errors import ConfigError, StorageError
from app.runtime import Deps
from app.store.indexing import RunCounts
from app.store.payloads import stamped_files
from app.store.vectors import StoredState
from app.sync.localfs import chunk_local_files, iter_sources, left_out_java, source_hashes
from pipeline.model import ChunkerConfig, FileResult, SourceContext
from pipeline.records import skipped_record
from pipeline.scope import Scope

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]  # (files done, files total)
Walk = Callable[[Path, Scope], Iterator[tuple[str, Path]]]
ChunkFiles = Callable[[list[tuple[str, Path]], SourceContext, ChunkerConfig, int], Iterator[FileResult]]
RemoveVanished = Callable[[Deps, StoredState, set[str]], Awaitable[int]]


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalRun:
    """What `javakb index` did."""

    repo_path: str
    counts: RunCounts
    removed_files: int
    collection: str | None  # the new generation when rebuilt
    left_out: int | None = None  # with no file in scope: the `.java` files the scope left out (`warn_left_out`)


@dataclass(frozen=True, slots=True)
class LocalSteps:
    """The steps of a local run, each replaceable: a benchmark passes timed ones."""

    walk: Walk
    chunk: ChunkFiles
    remove_vanished: RemoveVanished


async def index_directory(
    deps: Deps,
    root: Path,
    repo_path: str,
    *,
    rebuild: bool = False,
    drop_others: bool = False,
    jobs: int = 1,
    progress: Progress | None = None,
    steps: LocalSteps | None = None,
) -> LocalRun:
    """Index every in-scope file under `root` as repository `repo_path`, incrementally by content hash.

    A file whose source hash (its bytes, this chunker and its config: `app.sync.localfs.source_hash`) is the
    one its stored points carry is not chunked again: its points are counted as reused.

    A rebuild writes a new collection from this checkout alone, so it refuses while the current
    collection holds other repositories, unless `drop_others` says they may go.
    """
    steps = steps or LOCAL_STEPS
    config = deps.settings.chunking.to_config()
    scope = Scope.from_config(config)
    files = list(steps.walk(root, scope))
    left_out = warn_left_out(root, scope) if not files else None
    if rebuild and not drop_others:
        await _refuse_losing_others(deps, repo_path)
    model = await deps.index_model()
    target = await deps.store.create_generation(model) if rebuild else None
    if target is None:
        await deps.store.ensure(model)
    context = SourceContext(repo_path=repo_path)
    sources = source_hashes(files, context, config)
    # What is stored is read once (a new generation holds nothing yet), not once per batch.
    known, unchanged = await stored_for(deps, repo_path, sources) if target is None else (StoredState(), {})
    counts = RunCounts()
    counts.add_unchanged(len(unchanged), sum(unchanged.values()))
    changed = [item for item in files if item[0] not in unchanged]
    results = steps.chunk(changed, context, config, jobs)
    for done, batch in _batches(results, deps.settings.worker.files_per_batch):
        plan = await deps.indexer.write(repo_path, batch, collection=target, known=known, sources=sources)
        counts.add(plan, batch)
        log_skipped(batch)
        if progress is not None:
            progress(len(unchanged) + done, len(files))
    if progress is not None and not changed:
        progress(len(files), len(files))
    removed = 0
    if target is None:
        removed = await steps.remove_vanished(deps, known, {rel for rel, _ in files})
    else:
        previous = await deps.store.switch_alias(target)
        if previous is not None and previous != target:
            await deps.store.drop_collection(previous)
    return LocalRun(repo_path=repo_path, counts=counts, removed_files=removed, collection=target, left_out=left_out)


def warn_left_out(root: Path, scope: Scope) -> int:
    """Say at WARNING that nothing under `root` is in scope, and how many `.java` files the scope left out."""
    left_out = left_out_java(root, scope)
    logger.warning(
        "%s: no file in scope; %d .java files left out by the scope rules (set %s, e.g. '[\"**/*.java\"]')",
        root,
        left_out,
        SCOPE_SETTING,
    )
    return left_out


def log_skipped(results: Iterable[FileResult]) -> None:
    """Log each skipped file or span at INFO with its reason, as `javakb chunks` prints it (`skipped_record`)."""
    for result in results:
        for item in result.skipped:
            logger.info("skipped: %s", json.dumps(skipped_record(item), ensure_ascii=False))


async def stored_for(deps: Deps, repo_path: str, sources: Mapping[str, str]) -> tuple[StoredState, dict[str, int]]:
    """What a run needs of the repository's stored state, and its unchanged files with their number of points.

    One facet of the points' stamps (`payloads.source_stamp`) tells the unchanged files without reading
    a payload; then only the points of the other stored files (changed or gone) are read. Where some
    point has no stamp with its path (a store written before paths were stamped, a repository also synced
    from GitLab) or more than `MAX_LISTED` stored files changed, the whole state is read, as before.
    """
    counts = await deps.store.stamp_counts(repo_path)
    stamped = None if counts is None else stamped_files(counts)
    if stamped is not None:
        unchanged = {rel: stamped.points[rel] for rel, h in sources.items() if stamped.sources.get(rel) == h}
        rest = sorted(set(stamped.points) - set(unchanged))
        if len(rest) <= MAX_LISTED:
            return await deps.store.stored_state(repo_path, rest), unchanged
    known = await deps.store.stored_state(repo_path, None)
    return known, {rel: len(known.by_file[rel]) for rel, h in sources.items() if known.source_of(rel) == h}


MAX_LISTED = 2_000
"""Stored files a run reads by name (`stored_for`); past it, the whole state in one scroll."""


async def _refuse_losing_others(deps: Deps, repo_path: str) -> None:
    try:
        others = sorted(r for r in await deps.search.repositories(LOCAL) if r != repo_path)
    except StorageError:
        return  # no collection yet: nothing to lose
    if others:
        raise ConfigError(
            f"--rebuild builds the new collection from this checkout only, and the current one also holds "
            f"{', '.join(others[:10])}{' ...' if len(others) > 10 else ''}; rebuild those too afterwards and pass "
            "--drop-other-repos to accept that they are missing until then"
        )


def _batches(results: Iterable[FileResult], size: int) -> Iterable[tuple[int, list[FileResult]]]:
    batch: list[FileResult] = []
    done = 0
    for result in results:
        batch.append(result)
        done += 1
        if len(batch) >= size:
            yield done, batch
            batch = []
    if batch:
        yield done, batch


async def remove_vanished(deps: Deps, known: StoredState, present: set[str]) -> int:
    """Delete the points of files that were indexed before but are gone (or out of scope) now."""
    vanished = sorted(set(known.by_file) - present)
    stale = [point_id for path in vanished for point_id in known.by_file[path]]
    await deps.store.delete_ids(stale)
    return len(vanished)


LOCAL_STEPS = LocalSteps(walk=iter_sources, chunk=chunk_local_files, remove_vanished=remove_vanished)
