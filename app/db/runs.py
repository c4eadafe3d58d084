"""Sync runs (`index_jobs`)."""

from __future__ import annotations

from typing import Any

from app.core.states import RunStatus, SyncMode, Trigger
from app.db.pool import Pool
from app.db.rows import JobCounts


class RunQueries(Pool):
    """Open and close sync runs."""

    async def close_abandoned_runs(self, project_id: int) -> int:
        """Close runs left RUNNING by a process that died (SIGKILL, OOM); call it holding the project's lock.

        Holding the lock proves no other process is executing a run of this project.
        """
        result = await self._execute(
            """
            UPDATE index_jobs SET status = 'FAILED', finished_at = now(),
                error = 'abandoned: the worker running it stopped'
            WHERE project_id = $1 AND status = 'RUNNING'
            """,
            project_id,
        )
        return int(result.rsplit(" ", 1)[-1])

    async def start_run(self, project_id: int, trigger: Trigger, from_sha: str | None) -> int:
        """Open an `index_jobs` row for a sync run."""
        run_id = await self._fetchval(
            """
            INSERT INTO index_jobs (project_id, trigger, from_sha, status, started_at)
            VALUES ($1, $2, $3, 'RUNNING', now()) RETURNING id
            """,
            project_id, trigger, from_sha,
        )  # fmt: skip
        return int(run_id)

    async def finish_run(
        self,
        run_id: int,
        *,
        status: RunStatus,
        to_sha: str | None,
        mode: SyncMode | None,
        counts: JobCounts,
        error: str | None,
    ) -> None:
        """Close a sync run with its outcome and counts."""
        await self._execute(
            """
            UPDATE index_jobs SET status = $2, to_sha = $3, mode = $4, files_changed = $5, files_parsed = $6,
                files_skipped = $7, files_deleted = $8, chunks_embedded = $9, chunks_reused = $10,
                chunks_deleted = $11, error = $12, finished_at = now()
            WHERE id = $1
            """,
            run_id, status, to_sha, mode, counts.files_changed, counts.files_parsed, counts.files_skipped,
            counts.files_deleted, counts.chunks_embedded, counts.chunks_reused, counts.chunks_deleted, error,
        )  # fmt: skip

    async def progress_run(self, run_id: int, counts: JobCounts) -> None:
        """A running run's counts so far (after each batch), so a backfill's report moves while it runs."""
        await self._execute(
            """
            UPDATE index_jobs SET files_changed = $2, files_parsed = $3, files_skipped = $4,
                chunks_embedded = $5, chunks_reused = $6, chunks_deleted = $7
            WHERE id = $1 AND status = 'RUNNING'
            """,
            run_id, counts.files_changed, counts.files_parsed, counts.files_skipped,
            counts.chunks_embedded, counts.chunks_reused, counts.chunks_deleted,
        )  # fmt: skip

    async def runs_page(self, status: RunStatus | None, after: int, limit: int) -> list[dict[str, Any]]:
        """Sync runs of every project with an id above `after` (oldest first), of one status if given."""
        rows = await self._fetch(
            """
            SELECT * FROM index_jobs WHERE id > $1 AND ($2::text IS NULL OR status = $2) ORDER BY id LIMIT $3
            """,
            after, status, limit,
        )  # fmt: skip
        return [dict(r) for r in rows]

    async def runs(self, project_id: int) -> list[dict[str, Any]]:
        """Sync runs of a project, newest first."""
        rows = await self._fetch("SELECT * FROM index_jobs WHERE project_id = $1 ORDER BY id DESC", project_id)
        return [dict(r) for r in rows]
