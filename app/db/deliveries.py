"""Deliveries and the sync requests they make (`deliveries`, `projects.requested_gen`)."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.states import DeliveryOutcome
from app.db.pool import Pool
from app.db.rows import KeyedPush

REQUEST_SYNC = """
    INSERT INTO projects
        (id, repo_path, default_branch, target_sha, requested_gen, full_sync, force_embed, behind_since)
    VALUES ($1, $2, $3, $4, 1, $5 OR $6, $6, now())
    ON CONFLICT (id) DO UPDATE SET
        -- repo_path stays: the sync sees a different path from GitLab and moves first
        default_branch = COALESCE(EXCLUDED.default_branch, projects.default_branch),
        target_sha = COALESCE(EXCLUDED.target_sha, projects.target_sha),
        requested_gen = projects.requested_gen + 1,
        full_sync = projects.full_sync OR EXCLUDED.full_sync,
        force_embed = projects.force_embed OR EXCLUDED.force_embed,
        behind_since = COALESCE(projects.behind_since, now()),
        updated_at = now()
    RETURNING requested_gen
"""
"""Note that a project wants a sync (creating its row on first sight); answers the new generation.

`behind_since` keeps the first moment the index was known to lag (docs/decisions.md, "Index status").
`$6` (force) also re-embeds unchanged chunks, and implies a full walk (`$5`).
"""


class DeliveryQueries(Pool):
    """Record deliveries and bump projects' requested generations."""

    async def record_delivery(
        self,
        key: str,
        event: str,
        project_id: int | None,
        ref: str | None,
        after: str | None,
        outcome: DeliveryOutcome,
        detail: str,
    ) -> bool:
        """Record a delivery; False when its idempotency key was seen before (a duplicate)."""
        inserted = await self._fetchval(
            """
            INSERT INTO deliveries (idempotency_key, event, project_id, ref, after_sha, outcome, detail)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            ON CONFLICT (idempotency_key) DO NOTHING
            RETURNING 1
            """,
            key, event, project_id, ref, after, outcome, detail,
        )  # fmt: skip
        return inserted is not None

    async def record_sync_deliveries(self, deliveries: Sequence[KeyedPush]) -> list[int | None]:
        """Record push deliveries and bump their projects' requested generations in one round trip.

        Returns, per delivery and in order, its generation, or None when its idempotency key was seen
        before (a duplicate: nothing is bumped). Deliveries for one project get consecutive generations
        in the order given, and the last one sets `target_sha`, exactly as if they had come one by one.
        The receiver groups concurrent deliveries into one call (`app.sync.group_commit`): this is its
        only query. Keys must be distinct within one call.
        """
        rows = await self._fetch(
            """
            WITH input AS (
                SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[],
                                     $7::text[])
                    WITH ORDINALITY AS t(key, event, project_id, repo_path, default_branch, ref, after_sha, ord)
            ),
            fresh AS (
                INSERT INTO deliveries (idempotency_key, event, project_id, ref, after_sha, outcome, detail)
                SELECT key, event, project_id, ref, after_sha, 'enqueued', '' FROM input ORDER BY ord
                ON CONFLICT (idempotency_key) DO NOTHING
                RETURNING idempotency_key
            ),
            arrived AS (
                SELECT input.*,
                       row_number() OVER (PARTITION BY project_id ORDER BY ord) AS nth,
                       count(*) OVER (PARTITION BY project_id) AS n,
                       last_value(default_branch) OVER (
                           PARTITION BY project_id ORDER BY (default_branch IS NOT NULL), ord
                           ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
                       ) AS known_branch
                FROM input JOIN fresh ON fresh.idempotency_key = input.key
            ),
            latest AS (
                SELECT DISTINCT ON (project_id) project_id, repo_path, known_branch, after_sha, n
                FROM arrived ORDER BY project_id, ord DESC
            ),
            bumped AS (
                INSERT INTO projects (id, repo_path, default_branch, target_sha, requested_gen, behind_since)
                SELECT project_id, repo_path, known_branch, after_sha, n, now() FROM latest
                ON CONFLICT (id) DO UPDATE SET
                    -- repo_path stays: the sync sees a different path from GitLab and moves first
                    default_branch = COALESCE(EXCLUDED.default_branch, projects.default_branch),
                    target_sha = EXCLUDED.target_sha,
                    requested_gen = projects.requested_gen + EXCLUDED.requested_gen,
                    behind_since = COALESCE(projects.behind_since, now()),
                    updated_at = now()
                RETURNING id, requested_gen
            )
            SELECT arrived.ord, bumped.requested_gen - arrived.n + arrived.nth AS gen
            FROM arrived JOIN bumped ON bumped.id = arrived.project_id
            """,
            [key for key, _ in deliveries],
            [p.event for _, p in deliveries],
            [p.project_id for _, p in deliveries],
            [p.repo_path for _, p in deliveries],
            [p.default_branch for _, p in deliveries],
            [p.ref for _, p in deliveries],
            [p.after for _, p in deliveries],
        )
        generations: list[int | None] = [None] * len(deliveries)
        for row in rows:
            generations[row["ord"] - 1] = int(row["gen"])
        return generations

    async def delivery_outcome(self, key: str) -> str | None:
        """The recorded outcome of a delivery."""
        value = await self._fetchval("SELECT outcome FROM deliveries WHERE idempotency_key = $1", key)
        return str(value) if value is not None else None

    async def request_sync(
        self,
        project_id: int,
        repo_path: str,
        default_branch: str | None,
        target_sha: str | None,
        *,
        full: bool = False,
        force: bool = False,
    ) -> int:
        """Note that a project wants a sync (creating its row on first sight); return the new generation.

        `force` also re-embeds unchanged chunks (it implies `full`).
        """
        gen = await self._fetchval(REQUEST_SYNC, project_id, repo_path, default_branch, target_sha, full, force)
        return int(gen)
