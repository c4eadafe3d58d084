"""What the index status reads (`projects`, `file_manifest`, `index_jobs`), filtered to what the caller may read."""

from __future__ import annotations

from collections.abc import Sequence

from app.db.pool import Pool, storable
from app.db.rows import StatusRow, dataclass_row

# The caller's readable set is a condition of the query itself (never a filter after it): `$1` reads
# everything, else a project is readable by id (`$2`), by exact path (`$3`) or under a group prefix
# ending in '/' (`$4`), the rule of `app.auth.access.Access.may_read`. `$5` is the repository asked
# for (a path, or a prefix ending in '/'), or NULL for all. `$6` false skips the manifest counts (files
# and chunks read 0): the operator's page reads every project's state that way, then counts the few it lists.
_STATUS = """
    SELECT now() AS now, p.id, p.repo_path, p.source, p.default_branch, p.indexed_sha, p.indexed_at, p.head_sha,
           p.head_checked_at, p.behind_since, p.lag_commits, p.status, p.last_error, p.requested_gen, p.done_gen,
           p.full_sync, COALESCE(m.files, 0) AS files, COALESCE(m.chunks, 0) AS chunks,
           r.status AS run_status, r.trigger AS run_trigger, r.mode AS run_mode, r.error AS run_error,
           r.finished_at AS run_finished_at
    FROM projects p
    LEFT JOIN LATERAL (
        SELECT count(*) AS files, sum(cardinality(f.chunk_ids)) AS chunks FROM file_manifest f
        WHERE $6::bool AND f.project_id = p.id
    ) m ON true
    LEFT JOIN LATERAL (
        SELECT j.status, j.trigger, j.mode, j.error, j.finished_at FROM index_jobs j
        WHERE j.project_id = p.id ORDER BY j.id DESC LIMIT 1
    ) r ON true
    WHERE ($1::bool OR p.id = ANY($2::bigint[]) OR p.repo_path = ANY($3::text[])
           OR EXISTS (SELECT 1 FROM unnest($4::text[]) AS x(prefix) WHERE starts_with(p.repo_path, x.prefix)))
      AND ($5::text IS NULL OR p.repo_path = $5 OR (right($5, 1) = '/' AND starts_with(p.repo_path, $5)))
    ORDER BY p.repo_path
"""


class StatusQueries(Pool):
    """The index status of the projects a caller may read."""

    async def statuses(
        self,
        *,
        everything: bool,
        ids: Sequence[int] = (),
        paths: Sequence[str] = (),
        prefixes: Sequence[str] = (),
        repo: str | None = None,
        counts: bool = True,
    ) -> list[StatusRow]:
        """Readable projects (everything, or by id, exact path or group prefix), optionally one repository or group.

        Without `counts` the manifest is not read: `files` and `chunks` are 0 (a fraction of the cost).
        """
        if repo is not None and not storable(repo):
            return []  # no stored path holds what PostgreSQL cannot store
        rows = await self._fetch(_STATUS, everything, list(ids), list(paths), list(prefixes), repo, counts)
        return [dataclass_row(StatusRow, r) for r in rows]
