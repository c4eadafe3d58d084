"""PostgreSQL adapter (asyncpg): project sync state, runs, deliveries and the file manifest.

All SQL lives here. Every asyncpg call runs inside `_translated`, the one place where its errors
become `StorageError` (or `UnstorableError` for a value PostgreSQL refuses), as httpx maps
httpcore's exceptions at its transport boundary.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from app.errors import StorageError, UnstorableError
from app.events import SyncRequested
from app.states import BackfillOutcome, BackfillStatus, DeliveryOutcome, ProjectStatus, RunStatus, SyncMode, Trigger

# What a lost or refused connection raises: asyncpg's interface errors (a connection closed under a
# query) and its internal client errors (a pooled connection left mid-protocol by a terminated backend).
_ERRORS = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.exceptions.InternalClientError)
_LOCK_NAMESPACE = b"javakb:project:"  # hashed into every lock key: keeps ours apart from other users' locks


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
        return ProjectStatus.PENDING if self.status == ProjectStatus.OK and self.behind else self.status


@dataclass(frozen=True, slots=True, kw_only=True)
class HeadSeen:
    """A project as the reconcile sweep compares it with GitLab's listing."""

    id: int
    repo_path: str
    default_branch: str | None
    indexed_sha: str | None
    head_checked_at: datetime | None
    behind: bool  # deliveries not synced yet: a sync is due anyway
    out_of_scope: bool  # purged for leaving the indexing scope: nothing to compare until it comes back


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepMarks:
    """PostgreSQL's clock at a sweep's start, and when the sweep last listed some and all projects."""

    now: datetime
    listed_at: datetime | None
    full_at: datetime | None


@dataclass(slots=True, kw_only=True)
class JobCounts:
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


def lock_key(project_id: int) -> int:
    """The advisory lock key of a project: the first 8 bytes of BLAKE2b("javakb:project:<id>"), as a bigint.

    `pg_advisory_lock(int4, int4)` with (namespace, id) broke for ids of 2^31 and up; one bigint key
    cannot hold a namespace and a 64-bit id together, so both are hashed. Every int64 id has a key,
    and a collision (about n^2 / 2^65 for n projects) only makes two projects take turns.
    """
    digest = hashlib.blake2b(_LOCK_NAMESPACE + str(project_id).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


async def _unlock(conn: Any, project_id: int) -> None:
    """Release a project's lock; when the session cannot be reached, end it (the lock ends with it).

    Never raises: during an outage the session is usually gone already, or the pool closed and took
    the connection back (then `terminate` itself raises `InterfaceError`), and either way the lock is
    released. An error here must not hide the job's own error from its retry policy.
    """
    try:
        await conn.execute("SELECT pg_advisory_unlock($1)", lock_key(project_id))
    except _ERRORS:
        with contextlib.suppress(*_ERRORS):
            conn.terminate()


@contextmanager
def _translated(message: str = "PostgreSQL query failed") -> Iterator[None]:
    """Run asyncpg calls, turning a refused value into `UnstorableError` and any other failure into `StorageError`."""
    try:
        yield
    except asyncpg.DataError as exc:
        raise UnstorableError(f"PostgreSQL cannot store a value: {_short(exc)}") from exc
    except _ERRORS as exc:
        raise StorageError(f"{message}: {exc}") from exc


def _short(exc: Exception, limit: int = 200) -> str:
    """An error message cut to `limit` characters: asyncpg's data errors quote the offending input."""
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "..."


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
        with _translated("cannot connect to PostgreSQL"):
            pool = await asyncpg.create_pool(dsn, min_size=min_size, max_size=max_size)
        return cls(pool)

    async def ping(self) -> None:
        """Raise `StorageError` unless PostgreSQL answers."""
        await self._fetchval("SELECT 1")

    async def close(self) -> None:
        """Close the pool."""
        with _translated("closing the PostgreSQL pool failed"):
            await self.pool.close()

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
        The receiver groups concurrent deliveries into one call (`app.group_commit`): this is its
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
                    -- repo_path stays: the sync sees a different path from GitLab and moves first
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
                -- repo_path stays: the sync sees a different path from GitLab and moves first
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
                last_error = NULL, full_sync = false, indexed_at = now(), updated_at = now(),
                default_branch = COALESCE($4, default_branch), head_checked_at = now()
            WHERE id = $1
        """
        holder = self._held.get(project_id)
        if holder is None:
            await self._execute(query, project_id, sha, gen, default_branch)
            return
        with _translated(f"the session holding project {project_id}'s lock is gone"):
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
                done_gen = GREATEST(done_gen, $3), full_sync = false, updated_at = now()
            WHERE id = $1
            """,
            project_id, reason, gen,
        )  # fmt: skip

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

    async def start_run(self, project_id: int, trigger: Trigger, from_sha: str | None) -> int:
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
        self,
        run_id: int,
        *,
        status: RunStatus,
        to_sha: str | None,
        mode: SyncMode | None,
        counts: JobCounts,
        error: str | None,
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

    async def create_backfill(self, project_ids: Sequence[int] | None, full: bool) -> int:
        """Open a backfill (status `queued`); its id."""
        backfill_id = await self._fetchval(
            "INSERT INTO backfills (project_ids, full_sync) VALUES ($1, $2) RETURNING id", project_ids, full
        )
        return int(backfill_id)

    async def set_backfill_status(self, backfill_id: int, status: BackfillStatus, error: str | None = None) -> None:
        """Move a backfill to `running`, `done` or `failed` (the last two close it)."""
        await self._execute(
            """
            UPDATE backfills SET status = $2, error = $3,
                finished_at = CASE WHEN $2 IN ('done', 'failed') THEN now() END
            WHERE id = $1
            """,
            backfill_id, status, error,
        )  # fmt: skip

    async def record_backfill_result(
        self, backfill_id: int, project_id: int, outcome: BackfillOutcome, detail: str
    ) -> None:
        """What the backfill did for one project (a retried backfill overwrites its earlier result)."""
        await self._execute(
            """
            INSERT INTO backfill_projects (backfill_id, project_id, outcome, detail) VALUES ($1, $2, $3, $4)
            ON CONFLICT (backfill_id, project_id) DO UPDATE SET outcome = EXCLUDED.outcome, detail = EXCLUDED.detail
            """,
            backfill_id, project_id, outcome, detail,
        )  # fmt: skip

    async def backfill(self, backfill_id: int) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """A backfill's row and its per-project results (by project id); None when unknown."""
        row = await self._fetchrow("SELECT * FROM backfills WHERE id = $1", backfill_id)
        if row is None:
            return None
        results = await self._fetch(
            "SELECT project_id, outcome, detail FROM backfill_projects WHERE backfill_id = $1 ORDER BY project_id",
            backfill_id,
        )
        return dict(row), [dict(r) for r in results]

    @asynccontextmanager
    async def project_lock(self, project_id: int) -> AsyncIterator[bool]:
        """Hold a session advisory lock for one project while the block runs; yields False when busy.

        The lock lives on one pooled connection, so a killed worker releases it when its
        connection drops: no stale locks, no TTL to tune.
        """
        with _translated("PostgreSQL connection failed"):
            conn = await self.pool.acquire()
        try:
            with _translated():
                got = await conn.fetchval("SELECT pg_try_advisory_lock($1)", lock_key(project_id))
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
        with _translated("PostgreSQL transaction failed"):
            async with self.pool.acquire() as conn, conn.transaction():
                yield conn

    async def _fetchval(self, query: str, *args: Any) -> Any:
        with _translated():
            return await self.pool.fetchval(query, *args)

    async def _fetchrow(self, query: str, *args: Any) -> asyncpg.Record | None:
        with _translated():
            return await self.pool.fetchrow(query, *args)

    async def _fetch(self, query: str, *args: Any) -> list[asyncpg.Record]:
        with _translated():
            return await self.pool.fetch(query, *args)

    async def _execute(self, query: str, *args: Any) -> str:
        with _translated():
            return str(await self.pool.execute(query, *args))
