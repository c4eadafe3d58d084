"""What the reconcile sweep reads and marks (`sweeps`, `projects.head_checked_at`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from app.db.pool import Pool
from app.db.rows import HeadSeen, SweepMarks


class SweepQueries(Pool):
    """The reconcile sweep's reads and marks."""

    async def settled_paths(self) -> dict[int, str]:
        """Indexed (or failed) projects that are not behind and not out of scope: id → path (the scope sweep)."""
        rows = await self._fetch(
            "SELECT id, repo_path FROM projects WHERE status <> 'out_of_scope' AND done_gen >= requested_gen"
        )
        return {int(r["id"]): str(r["repo_path"]) for r in rows}

    async def unlisted(self, listed: Sequence[int]) -> tuple[list[int], int]:
        """Known projects (not out of scope) missing from a full listing, and how many known projects there are."""
        rows = await self._fetch(
            """
            SELECT id, NOT (id = ANY($1::bigint[])) AS missing FROM projects WHERE status <> 'out_of_scope'
            """,
            list(listed),
        )
        return sorted(int(r["id"]) for r in rows if r["missing"]), len(rows)

    async def behind(self) -> list[int]:
        """Projects whose requested generation was not synced yet (for the reconcile sweep)."""
        rows = await self._fetch("SELECT id FROM projects WHERE requested_gen > done_gen ORDER BY id")
        return [int(r["id"]) for r in rows]

    async def sweep_start(self, name: str) -> SweepMarks:
        """PostgreSQL's clock now, and when the sweep `name` last listed projects (all of them: `full_at`)."""
        row = await self._fetchrow(
            """
            SELECT now() AS now, (SELECT listed_at FROM sweeps WHERE name = $1) AS listed_at,
                   (SELECT full_at FROM sweeps WHERE name = $1) AS full_at
            """,
            name,
        )
        assert row is not None
        return SweepMarks(now=row["now"], listed_at=row["listed_at"], full_at=row["full_at"])

    async def sweep_done(self, name: str, started: datetime, *, full: bool) -> None:
        """Record that the sweep `name` that began at `started` listed projects (every one when `full`)."""
        await self._execute(
            """
            INSERT INTO sweeps (name, listed_at, full_at) VALUES ($1, $2, $2)
            ON CONFLICT (name) DO UPDATE SET listed_at = $2,
                full_at = CASE WHEN $3 THEN $2 ELSE sweeps.full_at END
            """,
            name, started, full,
        )  # fmt: skip

    async def heads_seen(self, project_ids: Sequence[int]) -> dict[int, HeadSeen]:
        """What the sweep compares GitLab's listing with, for these projects (unknown ones are absent)."""
        rows = await self._fetch(
            """
            SELECT id, repo_path, default_branch, indexed_sha, head_checked_at, requested_gen > done_gen AS behind,
                   status = 'out_of_scope' AS out_of_scope
            FROM projects WHERE id = ANY($1::bigint[])
            """,
            list(project_ids),
        )
        return {int(r["id"]): HeadSeen(**{name: r[name] for name in HeadSeen.__dataclass_fields__}) for r in rows}

    async def mark_heads_checked(self, project_ids: Sequence[int], at: datetime) -> None:
        """GitLab reported these projects' heads equal to the index at `at` (PostgreSQL's clock)."""
        await self._execute(
            "UPDATE projects SET head_checked_at = GREATEST(head_checked_at, $2) WHERE id = ANY($1::bigint[])",
            list(project_ids), at,
        )  # fmt: skip
