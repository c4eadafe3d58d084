"""PostgreSQL adapter (asyncpg): project sync state, runs, deliveries and the file manifest.

All SQL lives here. asyncpg errors are translated to `StorageError` at this boundary.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from app.errors import StorageError
from hooks.events import SyncRequested

# What a lost or refused connection raises: asyncpg's interface errors (a connection closed under a
# query) and its internal client errors (a pooled connection left mid-protocol by a terminated backend).
_ERRORS = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.exceptions.InternalClientError)
_LOCK_NAMESPACE = 0x6A6B  # "jk": keeps our advisory lock keys apart from other users of the database


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectRow:
    """One project's sync state."""

    id: int
    repo_path: str
    default_branch: str | None
    indexed_sha: str | None
    target_sha: str | None
    requested_gen: int
    done_gen: int
    full_sync: bool
    status: str
    last_error: str | None
    indexed_at: datetime | None
    visibility: str | None
    repository_access: str | None

    @property
    def behind(self) -> bool:
        """Whether a requested sync is not indexed yet (a delivery, a full reindex)."""
        return self.requested_gen > self.done_gen or self.full_sync

    @property
    def state(self) -> str:
        """The status to show: `ok` only when nothing requested is waiting, else `pending`.

        The stored status is what the last run ended with; a delivery that arrived since (or whose
        job Redis lost) leaves it `ok` while the index is behind, which is not the truth.
        """
        return "pending" if self.status == "ok" and self.behind else self.status


@dataclass(slots=True, kw_only=True)
class RunCounts:
    """What one sync run did, as stored in `index_jobs` (accumulated batch by batch while it runs)."""

    files_changed: int = 0
    files_parsed: int = 0
    files_skipped: int = 0
    files_deleted: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_deleted: int = 0


KeyedPush = tuple[str, SyncRequested]
"""A push delivery as the receiver records it: (idempotency key, the push)."""


async def _unlock(conn: Any, project_id: int) -> None:
    """Release a project's lock; when the session cannot be reached, end it (the lock ends with it).

    Never raises: during an outage the session is usually gone already, or the pool closed and took
    the connection back (then `terminate` itself raises `InterfaceError`), and either way the lock is
    released. An error here must not hide the job's own error from its retry policy.
    """
    try:
        await conn.execute("SELECT pg_advisory_unlock($1, $2)", _LOCK_NAMESPACE, project_id)
    except _ERRORS:
        with contextlib.suppress(*_ERRORS):
            conn.terminate()


def _project(row: asyncpg.Record) -> ProjectRow:
    return ProjectRow(**{name: row[name] for name in ProjectRow.__dataclass_fields__})


class Database:
    """Queries over one asyncpg pool."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self._held: dict[int, Any] = {}  # project id → the connection whose session holds its lock

    @classmethod
    async def connect(cls, dsn: str, *, min_size: int = 1, max_size: int = 10) -> Database:
        """Open a pool."""
        try:
            pool = await asyncpg.create_pool(dsn, min_size=min_size, max_size=max_size)
        except _ERRORS as exc:
            raise StorageError(f"cannot connect to PostgreSQL: {exc}") from exc
        return cls(pool)

    async def ping(self) -> None:
        """Raise `StorageError` unless PostgreSQL answers."""
        await self._fetchval("SELECT 1")

    async def close(self) -> None:
        """Close the pool."""
        await self.pool.close()

    async def record_delivery(
        self,
        key: str,
        event: str,
        project_id: int | None,
        ref: str | None,
        after: str | None,
        outcome: str,
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
        The receiver groups concurrent deliveries into one call (`hooks.group_commit`): this is its
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
                INSERT INTO projects (id, repo_path, default_branch, target_sha, requested_gen)
                SELECT project_id, repo_path, known_branch, after_sha, n FROM latest
                ON CONFLICT (id) DO UPDATE SET
                    repo_path = EXCLUDED.repo_path,
                    default_branch = COALESCE(EXCLUDED.default_branch, projects.default_branch),
                    target_sha = EXCLUDED.target_sha,
                    requested_gen = projects.requested_gen + EXCLUDED.requested_gen,
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
        self, project_id: int, repo_path: str, default_branch: str | None, target_sha: str | None, *, full: bool = False
    ) -> int:
        """Note that a project wants a sync (creating its row on first sight); return the new generation."""
        gen = await self._fetchval(
            """
            INSERT INTO projects (id, repo_path, default_branch, target_sha, requested_gen, full_sync)
            VALUES ($1, $2, $3, $4, 1, $5)
            ON CONFLICT (id) DO UPDATE SET
                repo_path = EXCLUDED.repo_path,
                default_branch = COALESCE(EXCLUDED.default_branch, projects.default_branch),
                target_sha = COALESCE(EXCLUDED.target_sha, projects.target_sha),
                requested_gen = projects.requested_gen + 1,
                full_sync = projects.full_sync OR EXCLUDED.full_sync,
                updated_at = now()
            RETURNING requested_gen
            """,
            project_id, repo_path, default_branch, target_sha, full,
        )  # fmt: skip
        return int(gen)

    async def project(self, project_id: int) -> ProjectRow | None:
        """One project's state."""
        row = await self._fetchrow("SELECT * FROM projects WHERE id = $1", project_id)
        return _project(row) if row is not None else None

    async def projects(self) -> list[ProjectRow]:
        """Every project, by repository path."""
        return [_project(r) for r in await self._fetch("SELECT * FROM projects ORDER BY repo_path")]

    async def behind(self) -> list[int]:
        """Projects whose requested generation was not synced yet (for the reconcile sweep)."""
        rows = await self._fetch("SELECT id FROM projects WHERE requested_gen > done_gen ORDER BY id")
        return [int(r["id"]) for r in rows]

    async def set_status(self, project_id: int, status: str, error: str | None = None) -> None:
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
                last_error = NULL, full_sync = false, indexed_at = now(), updated_at = now(),
                default_branch = COALESCE($4, default_branch)
            WHERE id = $1
        """
        holder = self._held.get(project_id)
        if holder is None:
            await self._execute(query, project_id, sha, gen, default_branch)
            return
        try:
            await holder.execute(query, project_id, sha, gen, default_branch)
        except _ERRORS as exc:
            raise StorageError(f"the session holding project {project_id}'s lock is gone: {exc}") from exc

    async def set_project_access(self, project_id: int, visibility: str, repository_access: str) -> None:
        """Record who may read a project's code, as GitLab reports it (`visibility`, `repository_access_level`)."""
        await self._execute(
            "UPDATE projects SET visibility = $2, repository_access = $3, updated_at = now() WHERE id = $1",
            project_id, visibility, repository_access,
        )  # fmt: skip

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
        async with self._transaction() as conn:
            await conn.execute("DELETE FROM file_manifest WHERE project_id = $1", project_id)
            await conn.execute("DELETE FROM projects WHERE id = $1", project_id)

    async def close_abandoned_runs(self, project_id: int) -> int:
        """Close runs left RUNNING by a process that died (SIGKILL, OOM); call it holding the project's lock.

        Holding the lock proves no other process is executing a run of this project.
        """
        result = await self._execute(
            """
            UPDATE index_jobs SET status = 'FAILED', finished_at = now(),
                error = 'abandoned: the worker running it stopped'
            WHERE project_id = $1 AND status = 'RUNNING'
            """,
            project_id,
        )
        return int(result.rsplit(" ", 1)[-1])

    async def start_run(self, project_id: int, trigger: str, from_sha: str | None) -> int:
        """Open an `index_jobs` row for a sync run."""
        run_id = await self._fetchval(
            """
            INSERT INTO index_jobs (project_id, trigger, from_sha, status, started_at)
            VALUES ($1, $2, $3, 'RUNNING', now()) RETURNING id
            """,
            project_id, trigger, from_sha,
        )  # fmt: skip
        return int(run_id)

    async def finish_run(
        self, run_id: int, *, status: str, to_sha: str | None, mode: str | None, counts: RunCounts, error: str | None
    ) -> None:
        """Close a sync run with its outcome and counts."""
        await self._execute(
            """
            UPDATE index_jobs SET status = $2, to_sha = $3, mode = $4, files_changed = $5, files_parsed = $6,
                files_skipped = $7, files_deleted = $8, chunks_embedded = $9, chunks_reused = $10,
                chunks_deleted = $11, error = $12, finished_at = now()
            WHERE id = $1
            """,
            run_id, status, to_sha, mode, counts.files_changed, counts.files_parsed, counts.files_skipped,
            counts.files_deleted, counts.chunks_embedded, counts.chunks_reused, counts.chunks_deleted, error,
        )  # fmt: skip

    async def runs(self, project_id: int) -> list[dict[str, Any]]:
        """Sync runs of a project, newest first."""
        rows = await self._fetch("SELECT * FROM index_jobs WHERE project_id = $1 ORDER BY id DESC", project_id)
        return [dict(r) for r in rows]

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

    @asynccontextmanager
    async def project_lock(self, project_id: int) -> AsyncIterator[bool]:
        """Hold a session advisory lock for one project while the block runs; yields False when busy.

        The lock lives on one pooled connection, so a killed worker releases it when its
        connection drops: no stale locks, no TTL to tune.
        """
        try:
            conn = await self.pool.acquire()
        except _ERRORS as exc:
            raise StorageError(f"PostgreSQL connection failed: {exc}") from exc
        try:
            try:
                got = await conn.fetchval("SELECT pg_try_advisory_lock($1, $2)", _LOCK_NAMESPACE, project_id)
            except _ERRORS as exc:
                raise StorageError(f"PostgreSQL query failed: {exc}") from exc
            if got:
                self._held[project_id] = conn
            try:
                yield bool(got)
            finally:
                if got:
                    self._held.pop(project_id, None)
                    await _unlock(conn, project_id)
        finally:
            with contextlib.suppress(*_ERRORS):  # a connection the pool took back or that died: nothing to free
                await self.pool.release(conn)

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[Any]:
        """A pooled connection inside a transaction; asyncpg's errors come out as `StorageError`."""
        try:
            async with self.pool.acquire() as conn, conn.transaction():
                yield conn
        except _ERRORS as exc:
            raise StorageError(f"PostgreSQL transaction failed: {exc}") from exc

    async def _fetchval(self, query: str, *args: Any) -> Any:
        try:
            return await self.pool.fetchval(query, *args)
        except _ERRORS as exc:
            raise StorageError(f"PostgreSQL query failed: {exc}") from exc

    async def _fetchrow(self, query: str, *args: Any) -> asyncpg.Record | None:
        try:
            return await self.pool.fetchrow(query, *args)
        except _ERRORS as exc:
            raise StorageError(f"PostgreSQL query failed: {exc}") from exc

    async def _fetch(self, query: str, *args: Any) -> list[asyncpg.Record]:
        try:
            return await self.pool.fetch(query, *args)
        except _ERRORS as exc:
            raise StorageError(f"PostgreSQL query failed: {exc}") from exc

    async def _execute(self, query: str, *args: Any) -> str:
        try:
            return str(await self.pool.execute(query, *args))
        except _ERRORS as exc:
            raise StorageError(f"PostgreSQL query failed: {exc}") from exc
