"""What the reconcile sweep reads and marks (`sweeps`, `projects.head_checked_at`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from app.core.states import ProjectSource
from app.db.pool import Pool
from app.db.rows import HeadSeen, SweepMarks


class SweepQueries(Pool):
    """The reconcile sweep's reads and marks."""

    async def settled_paths(self) -> dict[int, str]:
        """Indexed (or failed) projects that are not behind and not out of scope: id → path (the scope sweep)."""
        rows = await self._fetch(
            "SELECT id, repo_path FROM projects WHERE status <> 'out_of_scope' AND done_gen >= requested_gen"
            f" AND source = '{ProjectSource.GITLAB}'"
        )
        return {int(r["id"]): str(r["repo_path"]) for r in rows}

    async def unlisted(self, listed: Sequence[int]) -> tuple[list[int], int]:
        """Known projects (not out of scope) missing from a full listing, and how many known projects there are."""
        rows = await self._fetch(
            """
            SELECT id, NOT (id = ANY($1::bigint[])) AS missing FROM projects WHERE status <> 'out_of_scope'
                AND source = 'gitlab'
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

    async def record_heads(self, heads: Sequence[tuple[int, str | None]], at: datetime | None = None) -> None:
        """GitLab reported these (project, default-branch head) pairs at `at` (PostgreSQL's clock; None: now).

        One statement for every checked project. A head other than the indexed commit starts the lag
        (`behind_since`, kept when already set); the head equal to the index has no commit to catch up;
        None is a branch without a commit (nothing to index).
        """
        await self._execute(
            """
            UPDATE projects SET head_sha = h.head,
                head_checked_at = GREATEST(projects.head_checked_at, COALESCE($3, now())),
                behind_since = CASE WHEN h.head IS NOT NULL AND h.head IS DISTINCT FROM projects.indexed_sha
                                    THEN COALESCE(projects.behind_since, $3, now()) ELSE projects.behind_since END,
                lag_commits = CASE WHEN h.head IS NOT DISTINCT FROM projects.indexed_sha THEN 0
                                   WHEN h.head IS DISTINCT FROM projects.head_sha THEN NULL
                                   ELSE projects.lag_commits END
            FROM unnest($1::bigint[], $2::text[]) AS h(id, head)
            WHERE projects.id = h.id
            """,
            [h[0] for h in heads], [h[1] for h in heads], at,
        )  # fmt: skip

    async def set_lag_commits(self, project_id: int, head: str, commits: int) -> None:
        """A compare counted `commits` from the indexed commit to `head` (still the head GitLab reported)."""
        await self._execute(
            "UPDATE projects SET lag_commits = $3 WHERE id = $1 AND head_sha = $2", project_id, head, commits
        )

    async def request_syncs(self, drifts: Sequence[tuple[int, str, str | None, bool]]) -> list[int]:
        """`request_sync` for many (project, path, default branch, full) at once: their new generations, in order."""
        rows = await self._fetch(
            """
            WITH input AS (
                SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bool[])
                    WITH ORDINALITY AS t(id, repo_path, default_branch, full_sync, ord)
            ),
            bumped AS (
                INSERT INTO projects (id, repo_path, default_branch, requested_gen, full_sync, behind_since)
                SELECT id, repo_path, default_branch, 1, full_sync, now() FROM input
                ON CONFLICT (id) DO UPDATE SET
                    -- repo_path stays: the sync sees a different path from GitLab and moves first
                    default_branch = COALESCE(EXCLUDED.default_branch, projects.default_branch),
                    requested_gen = projects.requested_gen + 1,
                    full_sync = projects.full_sync OR EXCLUDED.full_sync,
                    behind_since = COALESCE(projects.behind_since, now()),
                    updated_at = now()
                RETURNING id, requested_gen
            )
            SELECT input.ord, bumped.requested_gen FROM input JOIN bumped USING (id) ORDER BY input.ord
            """,
            [d[0] for d in drifts], [d[1] for d in drifts], [d[2] for d in drifts], [d[3] for d in drifts],
        )  # fmt: skip
        return [int(r["requested_gen"]) for r in rows]
