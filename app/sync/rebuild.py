"""A model rebuild in service mode: fill a new generation from every project, then switch the alias.

`POST /admin/rebuild` (or `javakb admin rebuild`) opens a rebuild; the worker then runs:

1. `start`: create the new generation with the next model (`JAVAKB_NEXT_EMBEDDING__*`, else the
   current one), and, holding the generations lock exclusively (no project lock is held), record it
   and list every known project. From then on every sync, rename, citation and purge writes both
   generations (`app.jobs.targets`), under the project's lock as before.
2. `rebuild_project`, one job per project, under the project's lock: the files the manifest lists
   at the indexed commit are fetched by blob id (no tree walk, no compare), chunked, embedded with
   the next model and written to the new generation. Nothing is copied from the old vectors.
3. `finish`, once no project is pending, holding the generations lock exclusively again: the alias
   moves to the new generation in one call, then the old one is dropped.

Searches read the alias, so they are served by the old generation until the switch and by the new
one after it; `RoutedEmbedder` embeds questions with the model of the generation the alias names.
A project that cannot be rebuilt for good (GitLab lost a blob, the token was refused) fails the
rebuild: the new generation is dropped and the old one keeps serving (docs/operations.md).
"""

from __future__ import annotations

import logging

from app.core.errors import (
    TRANSIENT_ERRORS,
    ConfigError,
    GitLabNotFoundError,
    QueueUnavailableError,
    ServiceError,
    StorageError,
)
from app.core.settings import GITLAB_UNSET
from app.core.states import ProjectStatus, RebuildProjectStatus, RebuildStatus
from app.db import Database, ProjectRow, RebuildRow
from app.jobs.queue import (
    REBUILD,
    REBUILD_FINISH,
    REBUILD_PROJECT,
    enqueue_libraries,
    enqueue_once,
    rebuild_finish_job_id,
    rebuild_job_id,
    rebuild_project_job_id,
)
from app.runtime import ServiceDeps, SyncDeps
from app.store.models import model_of
from app.sync.lifecycle import confirm_gone, held
from app.sync.syncer import Fetch, Syncer
from pipeline.model import SourceContext

logger = logging.getLogger(__name__)


async def request(deps: ServiceDeps) -> int:
    """Open a rebuild and queue its start (`POST /admin/rebuild`, `javakb admin rebuild`); its id.

    Raises:
        ConfigError: GitLab is not configured (nothing to rebuild from).
        ConflictError: another rebuild is not finished.
        StorageError: PostgreSQL failed, or the queue did not take the job (the rebuild is closed as failed).
    """
    if not deps.settings.gitlab.url:
        raise ConfigError(GITLAB_UNSET)
    db = deps.db
    opened = await db.create_rebuild()
    rebuild_id = opened.id
    try:
        await enqueue_once(deps.queue, REBUILD, rebuild_job_id(rebuild_id, opened.job_token), rebuild_id)
    except QueueUnavailableError as exc:
        await db.set_rebuild_status(rebuild_id, RebuildStatus.FAILED, error=f"the queue is unavailable: {exc}")
        raise StorageError(f"the queue is unavailable: {exc}") from exc
    return rebuild_id


async def start(deps: ServiceDeps, rebuild_id: int) -> str:
    """Create the new generation, start writing pushes to it, and queue one job per project."""
    db = deps.db
    row = await db.rebuild(rebuild_id)
    if row is None or row.status != RebuildStatus.QUEUED:
        return f"rebuild {rebuild_id} is not waiting to start"
    model = await model_of(deps.next_embedder)
    collection = await deps.store.create_generation(model)
    async with db.generations_lock() as conn:
        listed = await db.start_rebuild(rebuild_id, collection, model.embedding_model, model.dimension, conn=conn)
    logger.info("rebuild %s: filling %s (%s) from %d projects", rebuild_id, collection, model.describe(), listed)
    pending = await db.pending_rebuild_projects(rebuild_id)
    for project_id in pending:
        await enqueue_once(
            deps.queue,
            REBUILD_PROJECT,
            rebuild_project_job_id(rebuild_id, row.job_token, project_id),
            rebuild_id,
            project_id,
        )
    if not pending:
        await _queue_finish(deps, row)
    return f"rebuild {rebuild_id}: {collection} for {len(pending)} projects"


async def rebuild_project(deps: SyncDeps, rebuild_id: int, project_id: int) -> str:
    """Fill the new generation with one project, under its lock (busy: `ProjectBusyError`, retried)."""
    db = deps.db
    row = await db.rebuild(rebuild_id)
    if row is None or row.status != RebuildStatus.BUILDING:
        return f"rebuild {rebuild_id} is not building"
    if not await db.rebuild_pending(rebuild_id, project_id):
        return f"rebuild {rebuild_id}: project {project_id} is not pending"
    error: str | None = None
    async with held(deps, project_id):
        try:
            status, files, chunks, detail = await _fill_or_skip(deps, db, row, project_id)
        except TRANSIENT_ERRORS:
            raise
        except ServiceError as exc:
            error = f"project {project_id}: {type(exc).__name__}: {exc}"
        else:
            await db.finish_rebuild_project(rebuild_id, project_id, status, files, chunks, detail)
    if error is not None:  # outside the project's lock: `fail` takes the generations lock exclusively
        await fail(deps, rebuild_id, error)
        return f"rebuild {rebuild_id} failed: {error}"
    if not await db.rebuild_pending(rebuild_id):
        await _queue_finish(deps, row)
    return f"rebuild {rebuild_id}, project {project_id}: {status}, {files} files, {chunks} chunks"


async def _fill_or_skip(
    deps: SyncDeps, db: Database, rebuild: RebuildRow, project_id: int
) -> tuple[RebuildProjectStatus, int, int, str]:
    """`_fill`; a project GitLab no longer has is skipped (its destroy hook, or the sweep, purges it everywhere)."""
    try:
        return await _fill(deps, db, rebuild, project_id)
    except GitLabNotFoundError:
        gone = await confirm_gone(deps.gitlab, project_id)
        if gone is None:
            raise
        return RebuildProjectStatus.SKIPPED, 0, 0, f"gone from GitLab: {gone}"


async def _fill(
    deps: SyncDeps, db: Database, rebuild: RebuildRow, project_id: int
) -> tuple[RebuildProjectStatus, int, int, str]:
    """Write the files the manifest lists into the new generation: (status, files, chunks, detail)."""
    project = await db.project(project_id)
    if project is None or project.indexed_sha is None or project.status == ProjectStatus.OUT_OF_SCOPE:
        return RebuildProjectStatus.SKIPPED, 0, 0, "nothing indexed"
    manifest = await db.manifest(project_id)
    syncer = Syncer(deps)
    indexer = deps.indexer.using(deps.next_embedder)
    context = _context(project)
    fetches = [Fetch(path=path, blob_id=blob) for path, blob in sorted(manifest.items())]
    chunks = 0
    for start_at in range(0, len(fetches), syncer.batch):
        _, results = await syncer.fetch_and_chunk(project_id, fetches[start_at : start_at + syncer.batch], context)
        plan = await indexer.write(project.repo_path, results, collection=rebuild.collection)
        chunks += len(plan.embed) + len(plan.refresh) + len(plan.move)
    return RebuildProjectStatus.DONE, len(fetches), chunks, f"at {project.indexed_sha}"


def _context(project: ProjectRow) -> SourceContext:
    """The chunks of a rebuilt project cite the commit its index equals."""
    return SourceContext(
        repo_path=project.repo_path,
        gitlab_project_id=project.id,
        commit_sha=project.indexed_sha,
        branch=project.default_branch,
    )


async def _queue_finish(deps: ServiceDeps, rebuild: RebuildRow) -> None:
    job_id = rebuild_finish_job_id(rebuild.id, rebuild.job_token)
    await enqueue_once(deps.queue, REBUILD_FINISH, job_id, rebuild.id)


async def finish(deps: ServiceDeps, rebuild_id: int) -> str:
    """Switch the alias to the full new generation (no project lock is held meanwhile), then drop the old one."""
    db = deps.db
    async with db.generations_lock() as conn:  # its queries on its connection (`generations_lock`)
        row = await db.rebuild(rebuild_id, conn=conn)
        if row is None or row.collection is None or row.status not in (RebuildStatus.BUILDING, RebuildStatus.SWITCHING):
            return f"rebuild {rebuild_id} is not building"
        if await db.rebuild_pending(rebuild_id, conn=conn):
            return f"rebuild {rebuild_id}: projects are still pending"
        previous = row.previous
        if row.status == RebuildStatus.BUILDING:  # a retried finish knows the old generation from the row
            previous = await deps.store.target()
            await db.set_rebuild_status(rebuild_id, RebuildStatus.SWITCHING, previous=previous, conn=conn)
        await deps.store.switch_alias(row.collection)
        await db.set_rebuild_status(rebuild_id, RebuildStatus.DONE, conn=conn)
    if previous is not None and previous != row.collection:
        await deps.store.drop_collection(previous)
    logger.info("rebuild %s: the alias now points at %s; dropped %s", rebuild_id, row.collection, previous)
    await enqueue_libraries(deps.queue)  # library versions are not in the projects' manifests: the job fills them in
    return f"rebuild {rebuild_id}: switched to {row.collection}"


async def fail(deps: ServiceDeps, rebuild_id: int, error: str) -> None:
    """Stop a rebuild: pushes stop going to its generation, which is dropped; the old one keeps serving."""
    db = deps.db
    async with db.generations_lock() as conn:
        row = await db.rebuild(rebuild_id, conn=conn)
        await db.set_rebuild_status(rebuild_id, RebuildStatus.FAILED, error=error, conn=conn)
    logger.error("rebuild %s failed: %s", rebuild_id, error)
    if row is not None and row.collection is not None and row.collection != await deps.store.target():
        await deps.store.drop_collection(row.collection)
