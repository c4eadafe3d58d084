"""`GET /admin/rebuilds/{id}`'s answer, read from a rebuild's row and progress (pure)."""

from __future__ import annotations

from datetime import datetime

from app.core.states import RebuildProjectStatus, RebuildStatus
from app.db import RebuildProgress, RebuildRow
from app.rest.schemas import RebuildFailure, RebuildReport


def rebuild_report(row: RebuildRow, progress: RebuildProgress, now: datetime) -> RebuildReport:
    """The answer, with the rate so far and the time left at that rate (pure)."""
    rate, eta = None, None
    if row.started_at is not None:
        elapsed = ((row.finished_at or now) - row.started_at).total_seconds()
        rate = progress.chunks / elapsed if elapsed > 0 else None
        pending = progress.projects.get(RebuildProjectStatus.PENDING, 0)
        done = sum(progress.projects.values()) - pending
        if row.status == RebuildStatus.BUILDING and done and elapsed > 0:
            eta = elapsed / done * pending
    return RebuildReport.model_validate(
        {
            "id": row.id,
            "status": row.status,
            "collection": row.collection,
            "previous": row.previous,
            "embedding_model": row.embedding_model,
            "dimension": row.dimension,
            "error": row.error,
            "created_at": row.created_at,
            "started_at": row.started_at,
            "finished_at": row.finished_at,
            "projects": progress.projects,
            "files": progress.files,
            "chunks": progress.chunks,
            "chunks_per_s": rate,
            "eta_s": eta,
            "failed": [RebuildFailure(project_id=p, detail=d) for p, d in progress.failed],
        }
    )
