"""Backfills and their per-project results (`backfills`, `backfill_projects`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.core.states import BackfillOutcome, BackfillStatus
from app.db.pool import Pool


class BackfillQueries(Pool):
    """Open, advance and report backfills."""

    async def create_backfill(self, project_ids: Sequence[int] | None, full: bool) -> int:
        """Open a backfill (status `queued`); its id."""
        backfill_id = await self._fetchval(
            "INSERT INTO backfills (project_ids, full_sync) VALUES ($1, $2) RETURNING id", project_ids, full
        )
        return int(backfill_id)

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

    async def record_backfill_result(
        self, backfill_id: int, project_id: int, outcome: BackfillOutcome, detail: str
    ) -> None:
        """What the backfill did for one project (a retried backfill overwrites its earlier result)."""
        await self._execute(
            """
            INSERT INTO backfill_projects (backfill_id, project_id, outcome, detail) VALUES ($1, $2, $3, $4)
            ON CONFLICT (backfill_id, project_id) DO UPDATE SET outcome = EXCLUDED.outcome, detail = EXCLUDED.detail
            """,
            backfill_id, project_id, outcome, detail,
        )  # fmt: skip

    async def backfill(self, backfill_id: int) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """A backfill's row and its per-project results (by project id); None when unknown."""
        row = await self._fetchrow("SELECT * FROM backfills WHERE id = $1", backfill_id)
        if row is None:
            return None
        results = await self._fetch(
            "SELECT project_id, outcome, detail FROM backfill_projects WHERE backfill_id = $1 ORDER BY project_id",
            backfill_id,
        )
        return dict(row), [dict(r) for r in results]
