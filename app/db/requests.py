"""On-demand sync requests (`index_requests`) and the generation each was given (`projects.requested_gen`)."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.states import RequestSource
from app.db.deliveries import REQUEST_SYNC
from app.db.pool import Pool
from app.db.rows import IndexRequestRow, dataclass_row


@dataclass(frozen=True, slots=True, kw_only=True)
class NewRequest:
    """An on-demand sync request to record: for which project and commit, from whom."""

    project_id: int
    repo_path: str
    default_branch: str | None
    commit_sha: str | None  # None: a refresh (whatever the head is)
    source: RequestSource
    requested_by: str
    ignored: str | None = None  # why no sync is requested (out of the indexing scope), or None


class RequestQueries(Pool):
    """Record on-demand sync requests and read them back."""

    async def create_request(self, new: NewRequest) -> tuple[IndexRequestRow, bool]:
        """Record a request and, unless it is ignored, bump its project's generation: (row, fresh).

        A request for a (project, commit) asked before is not recorded again: the first one's row comes
        back with `fresh` False (a retried CI job gets the same id, and nothing is bumped twice).
        """
        async with self._transaction() as conn:
            request_id = await conn.fetchval(
                """
                INSERT INTO index_requests (project_id, commit_sha, source, requested_by, detail)
                VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (project_id, commit_sha) WHERE commit_sha IS NOT NULL DO NOTHING
                RETURNING id
                """,
                new.project_id, new.commit_sha, new.source, new.requested_by, new.ignored,
            )  # fmt: skip
            if request_id is None:
                row = await conn.fetchrow(
                    "SELECT * FROM index_requests WHERE project_id = $1 AND commit_sha = $2",
                    new.project_id, new.commit_sha,
                )  # fmt: skip
                return dataclass_row(IndexRequestRow, row), False
            if new.ignored is None:
                gen = await conn.fetchval(
                    REQUEST_SYNC, new.project_id, new.repo_path, new.default_branch, new.commit_sha, False, False
                )
                await conn.execute("UPDATE index_requests SET generation = $2 WHERE id = $1", request_id, gen)
            row = await conn.fetchrow("SELECT * FROM index_requests WHERE id = $1", request_id)
            return dataclass_row(IndexRequestRow, row), True

    async def index_request(self, request_id: int) -> IndexRequestRow | None:
        """One request by id."""
        row = await self._fetchrow("SELECT * FROM index_requests WHERE id = $1", request_id)
        return dataclass_row(IndexRequestRow, row) if row is not None else None

    async def latest_request(self, project_id: int, source: RequestSource) -> IndexRequestRow | None:
        """A project's newest request from `source`."""
        row = await self._fetchrow(
            "SELECT * FROM index_requests WHERE project_id = $1 AND source = $2 ORDER BY id DESC LIMIT 1",
            project_id, source,
        )  # fmt: skip
        return dataclass_row(IndexRequestRow, row) if row is not None else None
