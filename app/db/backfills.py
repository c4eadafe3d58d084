"""Backfills and their per-project results (`backfills`, `backfill_projects`).

A project's progress in a backfill (`BackfillProgress`) is derived when read, from what the backfill
recorded (`backfill_projects.outcome`, the generation it requested) and the project's own state: a
requested project is done once its `done_gen` covers that generation, running while it syncs, failed
while its last run failed. Nothing writes it, so no writer can forget to (docs/decisions.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.states import BackfillOutcome, BackfillProgress, BackfillStatus, ProjectStatus
from app.db.pool import Pool
from app.db.rows import Opened

Out = BackfillOutcome
P = BackfillProgress
SETTLED_AT_RESOLUTION: Mapping[BackfillOutcome, BackfillProgress] = {
    Out.NOT_FOUND: P.FAILED,
    Out.FORBIDDEN: P.FAILED,
    Out.FAILED: P.FAILED,
    Out.OUT_OF_SCOPE: P.SKIPPED,
    Out.EMPTY: P.SKIPPED,
    Out.WAITING: P.QUEUED,
}
"""The progress of a project the backfill did not request a sync for (yet)."""


def _progress_sql() -> str:
    by_outcome = " ".join(f"WHEN bp.outcome = '{o}' THEN '{p}'" for o, p in SETTLED_AT_RESOLUTION.items())
    return f"""
        CASE {by_outcome}
            WHEN p.id IS NULL THEN '{P.FAILED}'
            WHEN p.done_gen >= bp.gen AND p.status = '{ProjectStatus.OUT_OF_SCOPE}' THEN '{P.SKIPPED}'
            WHEN p.done_gen >= bp.gen THEN '{P.DONE}'
            WHEN p.status = '{ProjectStatus.SYNCING}' THEN '{P.RUNNING}'
            WHEN p.status = '{ProjectStatus.FAILED}' THEN '{P.FAILED}'
            ELSE '{P.QUEUED}'
        END"""


STATES = f"""
    SELECT bp.project_id, bp.outcome, {_progress_sql()} AS state
    FROM backfill_projects bp LEFT JOIN projects p ON p.id = bp.project_id
    WHERE bp.backfill_id = $1
"""
"""Every project of backfill $1 with its derived progress only (what the dispatcher counts, every step)."""

PER_PROJECT = f"""
    SELECT bp.project_id, bp.repo_path, bp.outcome, {_progress_sql()} AS state,
        CASE WHEN bp.outcome = '{Out.REQUESTED}' AND p.status = '{ProjectStatus.FAILED}' AND p.done_gen < bp.gen
             THEN p.last_error ELSE bp.detail END AS detail,
        COALESCE(r.files, 0) AS files, COALESCE(r.chunks, 0) AS chunks
    FROM backfill_projects bp
    LEFT JOIN projects p ON p.id = bp.project_id
    LEFT JOIN LATERAL (
        SELECT sum(j.files_parsed + j.files_skipped) AS files, sum(j.chunks_embedded + j.chunks_reused) AS chunks
        FROM index_jobs j WHERE j.project_id = bp.project_id AND j.started_at >= bp.requested_at
    ) r ON bp.requested_at IS NOT NULL
    WHERE bp.backfill_id = $1
"""
"""Every project of backfill $1 with its derived progress, detail, and files and chunks written since requested."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolved:
    """A project the backfill found, with what it decided for it."""

    project_id: int
    repo_path: str | None
    outcome: BackfillOutcome
    detail: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Totals:
    """A backfill's projects by progress, and the files and chunks its syncs wrote so far."""

    projects: dict[str, int]
    files: int
    chunks: int


class BackfillQueries(Pool):
    """Open, advance and report backfills."""

    async def create_backfill(
        self,
        project_ids: Sequence[int] | None,
        full: bool,
        target: Mapping[str, Any] | None = None,
        force: bool = False,
    ) -> Opened:
        """Open a backfill (status `queued`): its id and job token."""
        row = await self._fetchrow(
            """
            INSERT INTO backfills (project_ids, full_sync, target, force_embed) VALUES ($1, $2, $3, $4)
            RETURNING id, job_token
            """,
            project_ids, full, json.dumps(dict(target or {})), force,
        )  # fmt: skip
        assert row is not None  # an INSERT … RETURNING answers its row
        return Opened(id=int(row["id"]), job_token=str(row["job_token"]))

    async def set_backfill_status(self, backfill_id: int, status: BackfillStatus, error: str | None = None) -> None:
        """Move a backfill to `running`, `done` or `failed` (the last two close it)."""
        await self._execute(
            """
            UPDATE backfills SET status = $2, error = $3,
                finished_at = CASE WHEN $2 IN ('done', 'failed') THEN now() END
            WHERE id = $1
            """,
            backfill_id, status, error,
        )  # fmt: skip

    async def add_backfill_projects(self, backfill_id: int, found: Sequence[Resolved]) -> None:
        """Record the projects a backfill resolved, and that it is resolved (`started_at`), in one statement.

        A retried resolution overwrites. The dispatcher waits for `started_at`.
        """
        await self._execute(
            """
            WITH resolved AS (UPDATE backfills SET started_at = COALESCE(started_at, now()) WHERE id = $1)
            INSERT INTO backfill_projects (backfill_id, project_id, repo_path, outcome, detail)
            SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[])
            ON CONFLICT (backfill_id, project_id) DO UPDATE SET
                repo_path = EXCLUDED.repo_path, outcome = EXCLUDED.outcome, detail = EXCLUDED.detail
            """,
            backfill_id, [f.project_id for f in found], [f.repo_path for f in found],
            [str(f.outcome) for f in found], [f.detail for f in found],
        )  # fmt: skip

    async def note_backfill_step(self, backfill_id: int, step: int) -> bool:
        """Record that dispatcher step `step` ran; False when the backfill is not running (nothing to do)."""
        result = await self._execute(
            "UPDATE backfills SET step = GREATEST(step, $2) WHERE id = $1 AND status = 'running'", backfill_id, step
        )
        return result.endswith(" 1")

    async def running_backfills(self) -> dict[int, tuple[str, int]]:
        """Running backfills: id → (job token, the last dispatcher step that ran): the sweep restarts a lost chain."""
        rows = await self._fetch(
            "SELECT id, job_token, step FROM backfills WHERE status = 'running' AND started_at IS NOT NULL"
        )
        return {int(r["id"]): (str(r["job_token"]), int(r["step"])) for r in rows}

    async def backfill_in_flight(self, backfill_id: int) -> int:
        """Requested projects of the backfill not settled yet (queued or running syncs)."""
        value = await self._fetchval(
            f"SELECT count(*) FROM ({STATES}) x WHERE x.outcome = '{Out.REQUESTED}' AND x.state IN ($2, $3)",
            backfill_id, P.QUEUED, P.RUNNING,
        )  # fmt: skip
        return int(value)

    async def waiting_projects(self, backfill_id: int, limit: int) -> list[tuple[int, str]]:
        """Up to `limit` projects whose sync the backfill has not requested yet: (id, path), by id."""
        rows = await self._fetch(
            f"""
            SELECT project_id, repo_path FROM backfill_projects
            WHERE backfill_id = $1 AND outcome = '{Out.WAITING}' ORDER BY project_id LIMIT $2
            """,
            backfill_id, max(0, limit),
        )  # fmt: skip
        return [(int(r["project_id"]), str(r["repo_path"])) for r in rows]

    async def mark_backfill_requested(self, backfill_id: int, project_id: int, gen: int) -> None:
        """The backfill requested this project's sync at generation `gen`."""
        await self._execute(
            f"""
            UPDATE backfill_projects SET outcome = '{Out.REQUESTED}', gen = $3::bigint, requested_at = now(),
                detail = 'sync generation ' || $3::bigint
            WHERE backfill_id = $1 AND project_id = $2
            """,
            backfill_id, project_id, gen,
        )  # fmt: skip

    async def waiting_in_backfills(self, project_ids: Sequence[int]) -> set[int]:
        """Which of these projects wait for a slot in an open backfill (the sweep leaves them to it)."""
        rows = await self._fetch(
            f"""
            SELECT DISTINCT bp.project_id FROM backfill_projects bp JOIN backfills b ON b.id = bp.backfill_id
            WHERE b.status IN ('queued', 'running') AND bp.outcome = '{Out.WAITING}'
                AND bp.project_id = ANY($1::bigint[])
            """,
            list(project_ids),
        )
        return {int(r["project_id"]) for r in rows}

    async def backfills_page(self, status: BackfillStatus | None, after: int, limit: int) -> list[dict[str, Any]]:
        """Backfills with an id above `after`, oldest first, of one status if given (`GET /admin/backfills`)."""
        rows = await self._fetch(
            """
            SELECT id, status, target, full_sync, force_embed, error, created_at, started_at, finished_at
            FROM backfills WHERE id > $1 AND ($2::text IS NULL OR status = $2) ORDER BY id LIMIT $3
            """,
            after, status, limit,
        )  # fmt: skip
        return [dict(r) | {"target": _target(r["target"])} for r in rows]

    async def backfill(self, backfill_id: int) -> dict[str, Any] | None:
        """A backfill's row; None when unknown."""
        row = await self._fetchrow("SELECT * FROM backfills WHERE id = $1", backfill_id)
        if row is None:
            return None
        found = dict(row)
        found["target"] = _target(found["target"])
        return found

    async def backfill_totals(self, backfill_id: int) -> Totals:
        """The backfill's projects counted by progress, and the files and chunks written so far."""
        rows = await self._fetch(
            f"""
            SELECT state, count(*) AS n, sum(files) AS files, sum(chunks) AS chunks
            FROM ({PER_PROJECT}) x GROUP BY state
            """,
            backfill_id,
        )
        return Totals(
            projects={str(r["state"]): int(r["n"]) for r in rows},
            files=sum(int(r["files"] or 0) for r in rows),
            chunks=sum(int(r["chunks"] or 0) for r in rows),
        )

    async def backfill_outcomes(self, backfill_id: int) -> dict[str, int]:
        """The backfill's projects counted by what it decided for each (`BackfillOutcome`)."""
        rows = await self._fetch(
            "SELECT outcome, count(*) AS n FROM backfill_projects WHERE backfill_id = $1 GROUP BY outcome",
            backfill_id,
        )
        return {str(r["outcome"]): int(r["n"]) for r in rows}

    async def backfill_projects(
        self, backfill_id: int, *, after: int = 0, limit: int = 100, state: BackfillProgress | None = None
    ) -> list[dict[str, Any]]:
        """One page of the backfill's projects (by id, after `after`), with progress, detail and counts."""
        rows = await self._fetch(
            f"""
            SELECT * FROM ({PER_PROJECT}) x WHERE x.project_id > $2 AND ($3::text IS NULL OR x.state = $3)
            ORDER BY x.project_id LIMIT $4
            """,
            backfill_id, after, state, limit,
        )  # fmt: skip
        return [dict(r) for r in rows]


def _target(stored: Any) -> Any:
    """A backfill's `target` column as JSON (asyncpg answers jsonb as text)."""
    return json.loads(stored) if isinstance(stored, str) else stored
