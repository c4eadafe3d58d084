"""Model rebuilds and their per-project progress (`rebuilds`, `rebuild_projects`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.core.errors import ConflictError
from app.core.states import ACTIVE_REBUILD, RebuildProjectStatus, RebuildStatus
from app.db.pool import Pool, translated
from app.db.rows import Opened

_ACTIVE = tuple(sorted(ACTIVE_REBUILD))


@dataclass(frozen=True, slots=True, kw_only=True)
class RebuildRow:
    """One rebuild."""

    id: int
    status: str
    collection: str | None
    previous: str | None
    embedding_model: str | None
    dimension: int | None
    error: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    job_token: str  # carried by its job ids (`app.jobs.queue.rebuild_job_id`)

    @property
    def building(self) -> bool:
        """Whether pushes must be written to the new generation too."""
        return self.collection is not None and self.status in (RebuildStatus.BUILDING, RebuildStatus.SWITCHING)


@dataclass(frozen=True, slots=True, kw_only=True)
class RebuildProgress:
    """A rebuild's projects by status, the files and chunks written so far, and its failed projects."""

    projects: dict[str, int]
    files: int
    chunks: int
    failed: list[tuple[int, str | None]]


class RebuildQueries(Pool):
    """Open, advance and report model rebuilds."""

    async def create_rebuild(self) -> Opened:
        """Open a rebuild (status `queued`): its id and job token.

        Raises:
            ConflictError: another rebuild is not finished.
        """
        busy = await self._fetchval("SELECT id FROM rebuilds WHERE status = ANY($1::text[])", list(_ACTIVE))
        if busy is not None:
            raise ConflictError(f"rebuild {busy} is not finished yet")
        row = await self._fetchrow("INSERT INTO rebuilds DEFAULT VALUES RETURNING id, job_token")
        assert row is not None  # an INSERT … RETURNING answers its row
        return Opened(id=int(row["id"]), job_token=str(row["job_token"]))

    async def rebuild(self, rebuild_id: int, *, conn: Any = None) -> RebuildRow | None:
        """One rebuild, or None (`conn`: the generations lock's connection, inside it)."""
        row = await self._fetchrow("SELECT * FROM rebuilds WHERE id = $1", rebuild_id, conn=conn)
        return RebuildRow(**dict(row)) if row is not None else None

    async def active_rebuild(self) -> RebuildRow | None:
        """The rebuild that is not finished, if any."""
        row = await self._fetchrow("SELECT * FROM rebuilds WHERE status = ANY($1::text[])", list(_ACTIVE))
        return RebuildRow(**dict(row)) if row is not None else None

    async def start_rebuild(
        self, rebuild_id: int, collection: str, model: str | None, dimension: int | None, *, conn: Any
    ) -> int:
        """The new generation exists: record it, list every known project as pending; how many.

        Call it with the generations lock's connection: from then on every sync writes both generations.
        """
        with translated():
            async with conn.transaction():
                await conn.execute(
                    """
                    UPDATE rebuilds SET status = $2, collection = $3, embedding_model = $4, dimension = $5,
                        started_at = now() WHERE id = $1
                    """,
                    rebuild_id, RebuildStatus.BUILDING, collection, model, dimension,
                )  # fmt: skip
                listed = await conn.execute(
                    "INSERT INTO rebuild_projects (rebuild_id, project_id) SELECT $1, id FROM projects"
                    " ON CONFLICT DO NOTHING",
                    rebuild_id,
                )
        return int(str(listed).rsplit(" ", 1)[-1])

    async def pending_rebuild_projects(self, rebuild_id: int) -> list[int]:
        """Projects of a rebuild not rebuilt yet."""
        rows = await self._fetch(
            "SELECT project_id FROM rebuild_projects WHERE rebuild_id = $1 AND status = $2 ORDER BY project_id",
            rebuild_id, RebuildProjectStatus.PENDING,
        )  # fmt: skip
        return [int(r["project_id"]) for r in rows]

    async def rebuild_pending(self, rebuild_id: int, project_id: int | None = None, *, conn: Any = None) -> int:
        """How many projects of a rebuild are pending (of one project: 1 or 0)."""
        count = await self._fetchval(
            """
            SELECT count(*) FROM rebuild_projects
            WHERE rebuild_id = $1 AND status = $2 AND ($3::bigint IS NULL OR project_id = $3)
            """,
            rebuild_id, RebuildProjectStatus.PENDING, project_id, conn=conn,
        )  # fmt: skip
        return int(count)

    async def finish_rebuild_project(
        self, rebuild_id: int, project_id: int, status: RebuildProjectStatus, files: int, chunks: int, detail: str
    ) -> None:
        """Record one project's part of a rebuild."""
        await self._execute(
            """
            UPDATE rebuild_projects SET status = $3, files = $4, chunks = $5, detail = $6, finished_at = now()
            WHERE rebuild_id = $1 AND project_id = $2
            """,
            rebuild_id, project_id, status, files, chunks, detail,
        )  # fmt: skip

    async def set_rebuild_status(
        self,
        rebuild_id: int,
        status: RebuildStatus,
        *,
        previous: str | None = None,
        error: str | None = None,
        conn: Any = None,
    ) -> None:
        """Advance a rebuild (`done` and `failed` close it)."""
        await self._execute(
            """
            UPDATE rebuilds SET status = $2, previous = COALESCE($3, previous), error = $4,
                finished_at = CASE WHEN $2 IN ('done', 'failed') THEN now() END
            WHERE id = $1
            """,
            rebuild_id, status, previous, error, conn=conn,
        )  # fmt: skip

    async def rebuild_progress(self, rebuild_id: int) -> RebuildProgress:
        """Per-status project counts, files and chunks so far, and the failed projects' details."""
        counts = await self._fetch(
            """
            SELECT status, count(*) AS n, sum(files) AS files, sum(chunks) AS chunks
            FROM rebuild_projects WHERE rebuild_id = $1 GROUP BY status
            """,
            rebuild_id,
        )
        failed = await self._fetch(
            "SELECT project_id, detail FROM rebuild_projects WHERE rebuild_id = $1 AND status = $2 ORDER BY project_id",
            rebuild_id, RebuildProjectStatus.FAILED,
        )  # fmt: skip
        return RebuildProgress(
            projects={str(r["status"]): int(r["n"]) for r in counts},
            files=sum(int(r["files"] or 0) for r in counts),
            chunks=sum(int(r["chunks"] or 0) for r in counts),
            failed=[(int(r["project_id"]), r["detail"]) for r in failed],
        )
