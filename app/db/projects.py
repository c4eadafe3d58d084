"""Projects' sync state, access facts and file manifests (`projects`, `file_manifest`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.core.states import ProjectStatus
from app.db.pool import Pool, storable, translated
from app.db.rows import ProjectRow, project_row


class ProjectQueries(Pool):
    """A project's row and manifest."""

    async def project(self, project_id: int) -> ProjectRow | None:
        """One project's state."""
        row = await self._fetchrow("SELECT * FROM projects WHERE id = $1", project_id)
        return project_row(row) if row is not None else None

    async def project_at(self, repo_path: str) -> ProjectRow | None:
        """The project at a repository path (the one updated last, should a stale row keep an old path)."""
        if not storable(repo_path):
            return None
        row = await self._fetchrow(
            "SELECT * FROM projects WHERE repo_path = $1 ORDER BY updated_at DESC LIMIT 1", repo_path
        )
        return project_row(row) if row is not None else None

    async def projects(self) -> list[ProjectRow]:
        """Every project, by repository path."""
        return [project_row(r) for r in await self._fetch("SELECT * FROM projects ORDER BY repo_path")]

    async def projects_page(self, after: int, limit: int) -> list[ProjectRow]:
        """Up to `limit` projects with an id above `after`, by id (the admin API's keyset pages)."""
        rows = await self._fetch("SELECT * FROM projects WHERE id > $1 ORDER BY id LIMIT $2", after, limit)
        return [project_row(r) for r in rows]

    async def set_status(self, project_id: int, status: ProjectStatus, error: str | None = None) -> None:
        """Set a project's status (and its last error, cleared when None)."""
        await self._execute(
            "UPDATE projects SET status = $2, last_error = $3, updated_at = now() WHERE id = $1",
            project_id, status, error,
        )  # fmt: skip

    async def mark_synced(self, project_id: int, sha: str | None, gen: int, default_branch: str | None) -> None:
        """The index now equals `sha`: advance indexed_sha and the covered generation.

        Written through the session holding the project's lock when this process holds it: if that
        session died (a PostgreSQL restart or outage ends it, and the lock with it, while the run goes
        on), another job may be syncing the project now, so this run's result must not be recorded;
        the write fails with `StorageError` and the job retries.
        """
        query = """
            UPDATE projects SET indexed_sha = $2, done_gen = GREATEST(done_gen, $3), status = 'ok',
                last_error = NULL, full_sync = false, force_embed = false, indexed_at = now(), updated_at = now(),
                default_branch = COALESCE($4, default_branch), head_checked_at = now(), head_sha = $2,
                -- caught up with every request: no lag; else a later request is waiting (its count unknown)
                behind_since = CASE WHEN GREATEST(done_gen, $3) >= requested_gen THEN NULL ELSE behind_since END,
                lag_commits = CASE WHEN GREATEST(done_gen, $3) >= requested_gen THEN 0 ELSE NULL END
            WHERE id = $1
        """
        holder = self._held.get(project_id)
        if holder is None:
            await self._execute(query, project_id, sha, gen, default_branch)
            return
        with translated(f"the session holding project {project_id}'s lock is gone"):
            await holder.execute(query, project_id, sha, gen, default_branch)

    async def set_project_access(self, project_id: int, visibility: str, repository_access: str) -> None:
        """Record who may read a project's code, as GitLab reports it (`visibility`, `repository_access_level`)."""
        await self.set_projects_access([(project_id, visibility, repository_access)])

    async def set_projects_access(self, access: Sequence[tuple[int, str, str]]) -> int:
        """`set_project_access` for many known projects (id, visibility, repository access); how many changed."""
        result = await self._execute(
            """
            UPDATE projects SET visibility = a.visibility, repository_access = a.repository_access, updated_at = now()
            FROM unnest($1::bigint[], $2::text[], $3::text[]) AS a(id, visibility, repository_access)
            WHERE projects.id = a.id AND (projects.visibility, projects.repository_access)
                IS DISTINCT FROM (a.visibility, a.repository_access)
            """,
            [a[0] for a in access], [a[1] for a in access], [a[2] for a in access],
        )  # fmt: skip
        return int(result.rsplit(" ", 1)[-1])

    async def open_projects(self) -> dict[int, str]:
        """Projects whose code any signed-in user may read: id → visibility (`internal` or `public`).

        Only projects whose repository is open to everyone (`repository_access = 'enabled'`); external
        users see only the `public` ones.
        """
        rows = await self._fetch(
            """
            SELECT id, visibility FROM projects
            WHERE visibility IN ('internal', 'public') AND repository_access = 'enabled'
            """
        )
        return {int(r["id"]): str(r["visibility"]) for r in rows}

    async def rename_project(self, project_id: int, repo_path: str) -> bool:
        """Record a new path (rename or transfer); False when the project is unknown."""
        result = await self._execute(
            "UPDATE projects SET repo_path = $2, updated_at = now() WHERE id = $1", project_id, repo_path
        )
        return result.endswith(" 1")

    async def delete_project(self, project_id: int) -> None:
        """Forget a project: its state and its manifest (runs and deliveries stay as history)."""
        await self._execute(
            """
            WITH manifest AS (DELETE FROM file_manifest WHERE project_id = $1)
            DELETE FROM projects WHERE id = $1
            """,
            project_id,
        )

    async def mark_out_of_scope(self, project_id: int, reason: str, gen: int) -> None:
        """A project left the indexing scope: forget its manifest and indexed commit, say why, cover `gen`."""
        await self._execute(
            """
            WITH manifest AS (DELETE FROM file_manifest WHERE project_id = $1)
            UPDATE projects SET status = 'out_of_scope', last_error = $2, indexed_sha = NULL, indexed_at = NULL,
                done_gen = GREATEST(done_gen, $3), full_sync = false, force_embed = false, updated_at = now()
            WHERE id = $1
            """,
            project_id, reason, gen,
        )  # fmt: skip

    async def manifest(self, project_id: int) -> dict[str, str]:
        """Indexed file path → blob sha."""
        rows = await self._fetch("SELECT path, blob_sha FROM file_manifest WHERE project_id = $1", project_id)
        return {str(r["path"]): str(r["blob_sha"]) for r in rows}

    async def update_manifest(
        self, project_id: int, upserts: Mapping[str, tuple[str, Sequence[str]]], deletes: Sequence[str]
    ) -> None:
        """Write blob shas and chunk ids of changed files and forget deleted ones, in one transaction."""
        async with self._transaction() as conn:
            if deletes:
                await conn.execute(
                    "DELETE FROM file_manifest WHERE project_id = $1 AND path = ANY($2::text[])",
                    project_id,
                    list(deletes),
                )
            if upserts:
                await conn.executemany(
                    """
                    INSERT INTO file_manifest (project_id, path, blob_sha, chunk_ids) VALUES ($1, $2, $3, $4)
                    ON CONFLICT (project_id, path) DO UPDATE SET blob_sha = EXCLUDED.blob_sha,
                        chunk_ids = EXCLUDED.chunk_ids
                    """,
                    [(project_id, path, blob, list(ids)) for path, (blob, ids) in upserts.items()],
                )
