"""One sync run of one project: make the index equal to the default branch's head, per file.

`plan_compare` and `plan_tree` are pure: they turn GitLab's view of what changed into files to
fetch and paths to drop. `Syncer.sync_once` does the I/O: read the head, plan (compare from the
indexed commit, or walk the tree against the manifest), fetch only changed blobs, chunk off the
event loop, write through the `Indexer`, then advance `indexed_sha` last.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from app.auth.access import PROJECT_ID_FIELD
from app.core.errors import GitLabError, GitLabUnavailableError, StorageError
from app.core.states import ProjectStatus, RunStatus, SyncMode, Trigger
from app.db import Database, JobCounts, ProjectRow
from app.gitlab.client import Comparison, Diff, ProjectInfo, RawFile
from app.jobs.targets import collections, write_targets
from app.libraries.service import forget_project, record_dependencies
from app.runtime import Deps, ServiceDeps, SyncDeps
from app.store import filters
from app.store.filters import Condition, Filter
from app.store.indexing import WritePlan
from app.store.payloads import commit_payload, repo_payload
from app.sync.scope import InScope, decide
from pipeline.buildfiles import is_build_file
from pipeline.languages import chunk_file
from pipeline.model import ChunkerConfig, FileResult, Skipped, SkipReason, SourceContext
from pipeline.scope import Scope

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class Fetch:
    """A file to fetch and index; `blob_id` when the tree walk knows it, `moved_from` for a rename."""

    path: str
    blob_id: str | None = None
    moved_from: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncPlan:
    """Files to fetch and paths whose points go."""

    mode: SyncMode  # compare or tree
    fetch: tuple[Fetch, ...]
    delete: tuple[str, ...]
    cite_head: bool = False
    """Every chunk's `commit_sha` becomes the new head: the indexed commit may not be on the branch any more."""
    fetched: Mapping[str, RawFile] = field(default_factory=dict)
    """Files already in hand (a repository archive): not downloaded again."""
    touched: tuple[str, ...] | None = None
    """Every path a compare saw change, in the code scope or not (build files: issue 16); None: not a compare."""
    build_blobs: Mapping[str, str] | None = None
    """The build files at the head and their blob ids when the plan saw the whole tree (a walk, an archive)."""


def plan_compare(diffs: Iterable[Diff], scope: Scope) -> SyncPlan:
    """Plan from a `straight=true` compare: added/modified fetch, deleted drop, renames move."""
    fetch: list[Fetch] = []
    delete: list[str] = []
    touched: dict[str, None] = {}
    for d in diffs:
        touched.update(dict.fromkeys((d.old_path, d.new_path)))
        old_in, new_in = scope.matches(d.old_path), scope.matches(d.new_path)
        if d.deleted_file:
            if old_in:
                delete.append(d.old_path)
        elif d.renamed_file:
            if new_in:
                fetch.append(Fetch(path=d.new_path, moved_from=d.old_path if old_in else None))
            elif old_in:
                delete.append(d.old_path)
        elif new_in:
            fetch.append(Fetch(path=d.new_path))
    return SyncPlan(mode=SyncMode.COMPARE, fetch=tuple(fetch), delete=tuple(delete), touched=tuple(touched))


def plan_tree(
    tree: Mapping[str, str], manifest: Mapping[str, str], scope: Scope, *, every_file: bool = False
) -> SyncPlan:
    """Plan from a full tree walk diffed against the manifest of indexed blobs.

    A path that vanished whose blob reappears under a new path is taken as a rename, so its
    chunks move instead of being embedded again. `every_file` fetches unchanged files too (a forced
    re-embedding).
    """
    wanted = {path: blob for path, blob in tree.items() if scope.matches(path)}
    gone = {path: blob for path, blob in manifest.items() if path not in wanted}
    gone_by_blob = {blob: path for path, blob in gone.items()}
    fetch: list[Fetch] = []
    for path, blob in sorted(wanted.items()):
        if manifest.get(path) == blob and not every_file:
            continue
        moved = gone_by_blob.pop(blob, None) if path not in manifest else None
        fetch.append(Fetch(path=path, blob_id=blob, moved_from=moved))
    moved_away = {f.moved_from for f in fetch if f.moved_from}
    delete = tuple(sorted(p for p in gone if p not in moved_away))
    return SyncPlan(mode=SyncMode.TREE, fetch=tuple(fetch), delete=delete)


def plan_archive(files: Mapping[str, RawFile], manifest: Mapping[str, str]) -> SyncPlan:
    """Plan from a repository archive (already filtered to the scope): every file, and what the manifest has extra.

    Used when every file is fetched anyway (a first sync, a forced re-embedding), so nothing moves.
    """
    fetch = tuple(Fetch(path=path, blob_id=raw.blob_id) for path, raw in sorted(files.items()))
    delete = tuple(sorted(path for path in manifest if path not in files))
    return SyncPlan(mode=SyncMode.ARCHIVE, fetch=fetch, delete=delete, fetched=files)


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncOutcome:
    """What a run did."""

    project_id: int
    from_sha: str | None
    to_sha: str | None
    mode: SyncMode
    counts: JobCounts
    seconds: float


class Syncer:
    """Runs sync steps with the service's resources."""

    def __init__(self, deps: SyncDeps) -> None:
        self.deps = deps
        self.db = deps.db
        self.gitlab = deps.gitlab
        self.executor = deps.executor
        self.config: ChunkerConfig = deps.settings.chunking.to_config()
        self.scope = Scope.from_config(self.config)
        self.batch = deps.settings.worker.files_per_batch

    async def sync_once(self, row: ProjectRow, trigger: Trigger) -> SyncOutcome:
        """Bring one project's index to its default branch head (or do nothing when it is there)."""
        started = time.monotonic()
        info = await self.gitlab.project(row.id)
        if (left := await self._screen(row, info, started)) is not None:
            return left
        await self._follow_rename(row, info)
        head = await self.gitlab.branch_head(row.id, info.default_branch) if info.default_branch else None
        gen = row.requested_gen
        if head is None or (head == row.indexed_sha and not row.full_sync):
            await self.db.mark_synced(row.id, head or row.indexed_sha, gen, info.default_branch)
            return SyncOutcome(
                project_id=row.id, from_sha=row.indexed_sha, to_sha=head, mode=SyncMode.NOOP, counts=JobCounts(),
                seconds=time.monotonic() - started,
            )  # fmt: skip
        await self.db.record_heads([(row.id, head)])  # the head GitLab reports, checked now (index status)
        await self.db.set_status(row.id, ProjectStatus.SYNCING, row.last_error)
        run_id = await self.db.start_run(row.id, trigger, row.indexed_sha)
        try:
            plan = await self._plan(row, head)
            context = SourceContext(
                repo_path=info.path_with_namespace,
                gitlab_project_id=row.id,
                commit_sha=head,
                branch=info.default_branch,
            )
            counts = await self._apply(row, plan, context, run_id)
            await record_dependencies(self.deps, self.db, self.gitlab, row.id, head, plan=plan)
        except (Exception, asyncio.CancelledError) as exc:
            # Cancellation is how arq stops a job (shutdown, job_timeout): close the run all the same.
            error = str(exc) or type(exc).__name__
            if isinstance(exc, asyncio.CancelledError):
                error = "cancelled (worker stopped or job timed out)"
            await asyncio.shield(self._record_failure(run_id, row.id, head, error))
            raise
        await self.db.mark_synced(row.id, head, gen, info.default_branch)  # last: only after every write
        await self.db.finish_run(run_id, status=RunStatus.DONE, to_sha=head, mode=plan.mode, counts=counts, error=None)
        return SyncOutcome(
            project_id=row.id, from_sha=row.indexed_sha, to_sha=head, mode=plan.mode, counts=counts,
            seconds=time.monotonic() - started,
        )  # fmt: skip

    async def _screen(self, row: ProjectRow, info: ProjectInfo, started: float) -> SyncOutcome | None:
        """Record who may read the project; out of the indexing scope, purge it and say why (issue 9)."""
        await record_access(self.db, info)
        decision = decide(info, self.deps.settings.scope)
        if isinstance(decision, InScope):
            return None
        await leave_scope(self.deps, self.db, row.id, decision.reason, row.requested_gen)
        if info.path_with_namespace != row.repo_path:  # nothing is left to move: only the state follows
            await self.db.rename_project(row.id, info.path_with_namespace)
        logger.info("project %s (%s) is out of scope: %s", row.id, info.path_with_namespace, decision.reason)
        return SyncOutcome(
            project_id=row.id, from_sha=row.indexed_sha, to_sha=None, mode=SyncMode.OUT_OF_SCOPE, counts=JobCounts(),
            seconds=time.monotonic() - started,
        )  # fmt: skip

    async def _record_failure(self, run_id: int, project_id: int, head: str, error: str) -> None:
        # Best effort: when PostgreSQL is what failed, the original error must still reach the job's
        # retry policy (a lost status write leaves a RUNNING run, which the next holder closes).
        try:
            await self.db.finish_run(
                run_id, status=RunStatus.FAILED, to_sha=head, mode=None, counts=JobCounts(), error=error
            )
            await self.db.set_status(project_id, ProjectStatus.FAILED, error)
        except StorageError as exc:
            logger.warning("project %s: cannot record the failed run: %s", project_id, exc)

    async def _follow_rename(self, row: ProjectRow, info: ProjectInfo) -> None:
        # A rename whose hook was missed: catch up before writing under the new path.
        if info.path_with_namespace != row.repo_path:
            await rename_points(self.deps, row.id, info.path_with_namespace)
            await self.db.rename_project(row.id, info.path_with_namespace)

    async def _plan(self, row: ProjectRow, head: str) -> SyncPlan:
        # Unchanged chunks cite the head (where their content is identical) unless the indexed commit is
        # known to be its ancestor: a force push or an amend rewrote it away, a 404 means it is gone,
        # a full reindex repairs whatever citations drifted.
        rewritten = row.indexed_sha is not None
        if self.deps.settings.backfill.archive and (row.indexed_sha is None or row.force_embed):
            archived = await self._archive(row.id, head)
            if archived is not None:
                code = {path: raw for path, raw in archived.items() if self.scope.matches(path)}
                builds = {path: raw.blob_id for path, raw in archived.items() if path not in code}
                plan = plan_archive(code, await self.db.manifest(row.id))
                return replace(plan, cite_head=rewritten, fetched=archived, build_blobs=builds)
        if row.indexed_sha and not row.full_sync and not row.force_embed:
            comparison = await self._compare(row.id, row.indexed_sha, head)
            if comparison is not None:
                await self.db.set_lag_commits(row.id, head, comparison.commits)
                rewritten = row.indexed_sha not in comparison.parent_ids
                if not comparison.overflow:
                    return replace(plan_compare(comparison.diffs, self.scope), cite_head=rewritten)
            logger.info("project %s: compare %s", row.id, "overflowed" if comparison else "failed or lost its base")
        tree = await self.gitlab.tree(row.id, head)
        plan = plan_tree(tree, await self.db.manifest(row.id), self.scope, every_file=row.force_embed)
        return replace(plan, cite_head=rewritten, build_blobs={p: b for p, b in tree.items() if is_build_file(p)})

    async def _archive(self, project_id: int, head: str) -> dict[str, RawFile] | None:
        """Every in-scope file and build file at the head from one archive request; None when GitLab refuses it."""
        wanted = lambda path: self.scope.matches(path) or is_build_file(path)  # noqa: E731
        try:
            return await self.gitlab.archive(project_id, head, wanted, self.config.max_file_bytes)
        except GitLabError as exc:  # rate-limited, not allowed, export attributes, cut while streaming
            logger.info("project %s: no archive (%s: %s), walking the tree", project_id, type(exc).__name__, exc)
            return None

    async def _compare(self, project_id: int, base: str, head: str) -> Comparison | None:
        """The compare, or None when its base is gone or GitLab keeps failing it (the tree walk takes over)."""
        try:
            return await self.gitlab.compare(project_id, base, head)
        except GitLabUnavailableError as exc:
            # A compare can fail for good on one project (a huge diff timing out) while the rest of
            # GitLab works: retrying it for the job's ~18 minutes of tries never heals that (issue 10).
            logger.warning("project %s: compare %s..%s failed: %s", project_id, base[:10], head[:10], exc)
            return None

    async def fetch_and_chunk(
        self,
        project_id: int,
        batch: Sequence[Fetch],
        context: SourceContext,
        fetched: Mapping[str, RawFile] | None = None,
    ) -> tuple[list[RawFile], list[FileResult]]:
        """Download some files (at most `files_per_batch` at once) and chunk them off the event loop.

        Files in `fetched` (a repository archive) are already in hand and not downloaded.
        """
        raws = await asyncio.gather(*(self._download(project_id, f, context, fetched) for f in batch))
        results = await asyncio.gather(*(self._chunk(f, raw, context) for f, raw in zip(batch, raws, strict=True)))
        return list(raws), list(results)

    async def _apply(self, row: ProjectRow, plan: SyncPlan, context: SourceContext, run_id: int) -> JobCounts:
        project_id = row.id
        totals = JobCounts(files_changed=len(plan.fetch) + len(plan.delete))
        targets = await write_targets(self.deps)  # under the project's lock: stays true for this run
        for start in range(0, len(plan.fetch), self.batch):
            batch = plan.fetch[start : start + self.batch]
            raws, results = await self.fetch_and_chunk(project_id, batch, context, plan.fetched)
            moved = {f.path: f.moved_from for f in batch if f.moved_from}
            for n, target in enumerate(targets):  # the first is the alias's generation: it is what is counted
                written = await target.indexer.write(
                    context.repo_path, results, moved_from=moved, collection=target.collection, force=row.force_embed
                )
                if n == 0:
                    add_batch(totals, written, results)
            upserts = {
                f.path: (raw.blob_id, [c.id for c in result.chunks])
                for f, raw, result in zip(batch, raws, results, strict=True)
            }
            await self.db.update_manifest(project_id, upserts, list(moved.values()))
            await self.db.progress_run(run_id, totals)  # what a backfill report shows "so far"
        if plan.delete:
            for n, target in enumerate(targets):
                deleted = await target.indexer.delete_files(
                    context.repo_path, plan.delete, collection=target.collection
                )
                totals.chunks_deleted += deleted if n == 0 else 0
            await self.db.update_manifest(project_id, {}, plan.delete)
        totals.files_deleted = len(plan.delete)
        if plan.cite_head and context.commit_sha:
            await cite_commit(self.deps, project_id, context.commit_sha)
        return totals

    async def _download(
        self, project_id: int, f: Fetch, context: SourceContext, fetched: Mapping[str, RawFile] | None = None
    ) -> RawFile:
        in_hand = (fetched or {}).get(f.path)
        if in_hand is not None:
            return in_hand
        limit = self.config.max_file_bytes
        if f.blob_id:
            return await self.gitlab.raw_blob(project_id, f.blob_id, limit)
        assert context.commit_sha is not None
        return await self.gitlab.raw_file(project_id, f.path, context.commit_sha, limit)

    async def _chunk(self, f: Fetch, raw: RawFile, context: SourceContext) -> FileResult:
        if raw.data is None:
            detail = f"{raw.size} bytes is above the limit of {self.config.max_file_bytes}"
            return FileResult(
                file_path=f.path, skipped=(Skipped(file_path=f.path, reason=SkipReason.TOO_LARGE, detail=detail),)
            )
        loop = asyncio.get_running_loop()
        # Parsing is CPU-bound: never on the event loop.
        return await loop.run_in_executor(self.executor, chunk_file, raw.data, f.path, context, self.config)


def add_batch(counts: JobCounts, plan: WritePlan, results: Sequence[FileResult]) -> None:
    """Add one written batch to a run's counts."""
    counts.files_parsed += sum(1 for r in results if r.chunks or not r.skipped)
    counts.files_skipped += sum(1 for r in results if r.skipped and not r.chunks)
    counts.chunks_embedded += len(plan.embed)
    counts.chunks_reused += len(plan.refresh) + len(plan.move)
    counts.chunks_deleted += len(plan.delete)


def _project_filter(project_id: int, *, none_of: Sequence[Condition] = ()) -> Filter:
    return filters.all_of(filters.eq(PROJECT_ID_FIELD, project_id), none_of=none_of)


async def rename_points(deps: Deps, project_id: int, repo_path: str) -> None:
    """Rewrite repo_path in a project's points (rename or transfer): payload only, no re-embedding."""
    for collection in await collections(deps):
        await deps.store.set_payload_where(_project_filter(project_id), repo_payload(repo_path), collection=collection)


async def cite_commit(deps: Deps, project_id: int, sha: str) -> None:
    """Make every chunk of a project cite `sha`, the head its content now equals: payload only.

    Called after a sync whose indexed commit may have left the branch, so no permalink names a
    rewritten-away commit (docs/decisions.md, "GitLab sync").
    """
    stale = _project_filter(project_id, none_of=[filters.eq("commit_sha", sha)])  # none_of: written by this run
    for collection in await collections(deps):
        await deps.store.set_payload_where(stale, commit_payload(sha), collection=collection)


async def purge_points(deps: Deps, project_id: int) -> None:
    """Delete every point of a project (from a rebuild's new generation too)."""
    for collection in await collections(deps):
        await deps.store.delete_where(_project_filter(project_id), collection=collection)


async def record_access(db: Database, info: ProjectInfo) -> None:
    """Record the project's visibility and repository access, which the permission model reads."""
    if info.visibility is not None and info.repository_access is not None:
        await db.set_project_access(info.id, info.visibility, info.repository_access)


async def leave_scope(deps: ServiceDeps, db: Database, project_id: int, reason: str, gen: int) -> None:
    """A project left the indexing scope: delete its points, then mark it (call it holding the project's lock)."""
    await purge_points(deps, project_id)
    await db.mark_out_of_scope(project_id, reason, gen)
    await forget_project(deps, db, project_id)
