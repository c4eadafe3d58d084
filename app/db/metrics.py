"""What `/metrics` reads from PostgreSQL at scrape time: projects by state and the index lag, aggregated in SQL."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.db.pool import Pool


@dataclass(frozen=True, slots=True, kw_only=True)
class LagSummary:
    """Projects by shown state; per lag bound, how many are behind at least that long; the furthest behind."""

    states: dict[str, int]
    at_least: dict[float, int]
    top: list[tuple[str, float]]  # (repo_path, seconds behind), furthest first


class MetricQueries(Pool):
    """Aggregates for the metrics endpoint: a few rows whatever the number of projects."""

    async def lag_summary(self, bounds: Sequence[float], top: int) -> LagSummary:
        """`LagSummary` over every project (lag: seconds since it went behind, `projects.behind_since`)."""
        states = await self._fetch(
            """
            SELECT CASE WHEN status = 'ok' AND behind_since IS NOT NULL THEN 'pending' ELSE status END AS state,
                   count(*) AS n
            FROM projects GROUP BY 1
            """
        )
        lags = await self._fetch(
            """
            SELECT b AS bound, count(p.id) AS n FROM unnest($1::float8[]) AS b
            LEFT JOIN projects p ON p.behind_since IS NOT NULL
                AND extract(epoch FROM now() - p.behind_since) >= b
            GROUP BY b
            """,
            [0.0, *bounds],
        )
        furthest = await self._fetch(
            """
            SELECT repo_path, extract(epoch FROM now() - behind_since)::float8 AS lag FROM projects
            WHERE behind_since IS NOT NULL ORDER BY behind_since, id LIMIT $1
            """,
            top,
        )
        return LagSummary(
            states={str(r["state"]): int(r["n"]) for r in states},
            at_least={float(r["bound"]): int(r["n"]) for r in lags},
            top=[(str(r["repo_path"]), float(r["lag"])) for r in furthest],
        )
