"""Local checkouts as projects (issue 27): their `projects` rows, found by path, numbered from `local_project_ids`.

Everything else a local project has (its manifest, runs, dependencies, status and heads) goes through the
same queries as a GitLab project's; only how its row is made and listed is local.
"""

from __future__ import annotations

from app.core.states import ProjectSource
from app.db.pool import Pool
from app.db.rows import ProjectRow, project_row


class LocalQueries(Pool):
    """The rows of local projects."""

    async def local_project(self, repo_path: str, root: str) -> ProjectRow:
        """The local project at `repo_path`, made on first use, its working tree set to `root`."""
        row = await self._fetchrow(
            f"""
            INSERT INTO projects (id, repo_path, source, local_root)
            VALUES (nextval('local_project_ids'), $1, '{ProjectSource.LOCAL}', $2)
            ON CONFLICT (repo_path) WHERE source = '{ProjectSource.LOCAL}'
                DO UPDATE SET local_root = EXCLUDED.local_root, updated_at = now()
            RETURNING *
            """,
            repo_path, root,
        )  # fmt: skip
        assert row is not None
        return project_row(row)

    async def local_projects(self) -> list[ProjectRow]:
        """Every local project, by repository path."""
        rows = await self._fetch(f"SELECT * FROM projects WHERE source = '{ProjectSource.LOCAL}' ORDER BY repo_path")
        return [project_row(r) for r in rows]

    async def request_local_sync(self, project_id: int) -> int:
        """Ask for a sync of a local project (its working tree changed): the new requested generation."""
        gen = await self._fetchval(
            """
            UPDATE projects SET requested_gen = requested_gen + 1, behind_since = COALESCE(behind_since, now()),
                updated_at = now()
            WHERE id = $1 RETURNING requested_gen
            """,
            project_id,
        )
        return int(gen)
