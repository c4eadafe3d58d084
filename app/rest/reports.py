"""The admin API's answers read from PostgreSQL's rows: a sync run, a backfill's report.

`GET /admin/jobs`, `GET /admin/backfills/{id}` (`entry.admin`) and the operator's page
(`app.console`) show the same values, built here once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from app.db import Database
from app.rest.schemas import BackfillReport, BackfillResult, JobState
from app.sync.backfill import rate


def job_state(row: Mapping[str, Any]) -> JobState:
    """A row of `index_jobs` as the API shows it."""
    return JobState.model_validate({k: row[k] for k in JobState.model_fields})


async def backfill_report(db: Database, row: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> BackfillReport:
    """A backfill's progress (projects by state, files, chunks, throughput, ETA), with `results` (its projects)."""
    backfill_id = row["id"]
    totals = await db.backfill_totals(backfill_id)
    started: datetime | None = row["started_at"]
    end = row["finished_at"] or datetime.now(tz=UTC)
    pace = rate(totals.projects, totals.files, (end - started).total_seconds() if started else 0.0)
    return BackfillReport.model_validate(
        {
            "id": backfill_id,
            "status": row["status"],
            "target": row["target"] or {},
            "projects": row["project_ids"],
            "full": row["full_sync"],
            "force": row["force_embed"],
            "error": row["error"],
            "created_at": row["created_at"],
            "started_at": started,
            "finished_at": row["finished_at"],
            "counts": await db.backfill_outcomes(backfill_id),
            "progress": totals.projects,
            "files": totals.files,
            "chunks": totals.chunks,
            "files_per_s": round(pace.files_per_s, 3),
            "projects_per_s": round(pace.projects_per_s, 3),
            "eta_s": None if pace.eta_s is None else round(pace.eta_s, 1),
            "results": [BackfillResult.model_validate(r) for r in results],
        }
    )
