"""Declared dependencies (`project_dependencies`, `dependency_files`) and org-wide libraries (`libraries`).

Issue 16, part 1 (docs/dependencies.md). The readers' queries take the caller's readable set as a
condition of the query itself, the rule of `app.auth.access.Access.may_read` (as `app.db.status`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from app.core.states import LibraryStatus, ProjectStatus
from app.db.pool import Pool, storable
from app.db.rows import dataclass_row
from pipeline.buildfiles import Dependency

Coordinates = tuple[str, str, str]
"""(group, artifact, version) of one library version."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LibraryRow:
    """One library version's row."""

    group_id: str
    artifact_id: str
    version: str
    status: LibraryStatus
    detail: str | None
    source_url: str | None
    jar_bytes: int | None
    chunks: int | None
    updated_at: datetime

    @property
    def coordinates(self) -> Coordinates:
        """(group, artifact, version)."""
        return self.group_id, self.artifact_id, self.version


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageRow:
    """One declaration of a library by a project the caller may read."""

    project_id: int
    repo_path: str
    group_id: str
    artifact_id: str
    version: str
    kind: str
    scope: str
    source_path: str
    unresolved: str | None


_READABLE = """($1::bool OR p.id = ANY($2::bigint[]) OR p.repo_path = ANY($3::text[])
           OR EXISTS (SELECT 1 FROM unnest($4::text[]) AS x(prefix) WHERE starts_with(p.repo_path, x.prefix)))"""
_IN_SCOPE = f"p.status <> '{ProjectStatus.OUT_OF_SCOPE}'"
_USAGES = f"""
    SELECT d.project_id, p.repo_path, d.group_id, d.artifact_id, d.version, d.kind, d.scope, d.source_path,
           d.unresolved
    FROM project_dependencies d JOIN projects p ON p.id = d.project_id
    WHERE {_READABLE} AND {_IN_SCOPE}
      AND d.group_id = $5 AND ($6::text IS NULL OR d.artifact_id = $6) AND ($7::text IS NULL OR d.version = $7)
    ORDER BY d.group_id, d.artifact_id, d.version, p.repo_path, d.source_path
"""

_READABLE_VERSIONS = f"""
    SELECT DISTINCT d.group_id, d.artifact_id, d.version
    FROM project_dependencies d JOIN projects p ON p.id = d.project_id
    WHERE {_READABLE} AND {_IN_SCOPE} AND d.version <> ''
"""


class DependencyQueries(Pool):
    """Record what projects declare; keep the org's library versions and their status."""

    async def dependency_files(self, project_id: int) -> dict[str, str]:
        """The build files last read for a project: path → blob id."""
        rows = await self._fetch("SELECT path, blob_id FROM dependency_files WHERE project_id = $1", project_id)
        return {r["path"]: r["blob_id"] for r in rows}

    async def build_problems(self, project_id: int) -> dict[str, str]:
        """The build files last read for a project that could not be read whole: path → why."""
        rows = await self._fetch(
            "SELECT path, problem FROM dependency_files WHERE project_id = $1 AND problem IS NOT NULL", project_id
        )
        return {r["path"]: r["problem"] for r in rows}

    async def replace_dependencies(
        self,
        project_id: int,
        files: Mapping[str, tuple[str, str | None]],
        declared: Sequence[Dependency],
        groups: Sequence[str] = (),
    ) -> bool:
        """Record a project's build files (path → blob, problem) and what they declare; True when the set changed.

        "Changed" compares the (group, artifact, version, kind) set before and after: what decides
        which library versions the organization uses.
        """
        rows = [
            (project_id, d.source, d.group, d.artifact, d.version, d.kind.value, d.scope, d.unresolved)
            for d in declared
        ]
        async with self._transaction() as conn:
            before = await conn.fetch(_COORDINATES, project_id)
            await conn.execute("DELETE FROM project_dependencies WHERE project_id = $1", project_id)
            await conn.execute("DELETE FROM dependency_files WHERE project_id = $1", project_id)
            await conn.executemany(
                "INSERT INTO project_dependencies (project_id, source_path, group_id, artifact_id, version, kind,"
                " scope, unresolved) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                rows,
            )
            await conn.executemany(
                "INSERT INTO dependency_files (project_id, path, blob_id, problem) VALUES ($1, $2, $3, $4)",
                [(project_id, path, blob, problem) for path, (blob, problem) in files.items()],
            )
            await conn.execute("DELETE FROM project_groups WHERE project_id = $1", project_id)
            await conn.executemany(
                "INSERT INTO project_groups (project_id, group_id) VALUES ($1, $2)", [(project_id, g) for g in groups]
            )
            after = await conn.fetch(_COORDINATES, project_id)
        return {tuple(r) for r in before} != {tuple(r) for r in after}

    async def dependencies_sha(self, project_id: int) -> str | None:
        """The head at which the project's build files were last read (None: never, or that reading failed)."""
        return await self._fetchval("SELECT dependencies_sha FROM projects WHERE id = $1", project_id)  # type: ignore[no-any-return]

    async def set_dependencies_sha(self, project_id: int, sha: str | None) -> None:
        """Record the head whose build files were read (None: read them again at the next sync)."""
        await self._execute("UPDATE projects SET dependencies_sha = $2 WHERE id = $1", project_id, sha)

    async def forget_dependencies(self, project_id: int) -> bool:
        """Drop what a project declares (it left the scope or is gone); True when it declared anything."""
        async with self._transaction() as conn:
            deleted = await conn.execute("DELETE FROM project_dependencies WHERE project_id = $1", project_id)
            await conn.execute("DELETE FROM dependency_files WHERE project_id = $1", project_id)
            await conn.execute("DELETE FROM project_groups WHERE project_id = $1", project_id)
            await conn.execute("UPDATE projects SET dependencies_sha = NULL WHERE id = $1", project_id)
        return str(deleted) != "DELETE 0"

    async def library_usage(self) -> dict[Coordinates, int]:
        """Every resolved library version declared by a project in scope, and how many projects declare it."""
        rows = await self._fetch(
            f"""
            SELECT d.group_id, d.artifact_id, d.version, count(DISTINCT d.project_id) AS projects
            FROM project_dependencies d JOIN projects p ON p.id = d.project_id
            WHERE d.kind = 'library' AND d.unresolved IS NULL AND d.version <> '' AND {_IN_SCOPE}
            GROUP BY 1, 2, 3
            """
        )
        return {(r["group_id"], r["artifact_id"], r["version"]): r["projects"] for r in rows}

    async def own_groups(self) -> frozenset[str]:
        """The groups any known project publishes its own artifacts under (in scope or not)."""
        return frozenset(r["group_id"] for r in await self._fetch("SELECT DISTINCT group_id FROM project_groups"))

    async def libraries_behind(self) -> bool:
        """Whether a resolved version in use has no row, or a row's version is used no more: the job has work."""
        return bool(
            await self._fetchval(
                f"""
                WITH used AS (
                    SELECT DISTINCT d.group_id, d.artifact_id, d.version
                    FROM project_dependencies d JOIN projects p ON p.id = d.project_id
                    WHERE d.kind = 'library' AND d.unresolved IS NULL AND d.version <> '' AND {_IN_SCOPE}
                )
                SELECT EXISTS (SELECT 1 FROM used u LEFT JOIN libraries l USING (group_id, artifact_id, version)
                               WHERE l.group_id IS NULL)
                    OR EXISTS (SELECT 1 FROM libraries l LEFT JOIN used u USING (group_id, artifact_id, version)
                               WHERE u.group_id IS NULL)
                """
            )
        )

    async def libraries(self) -> dict[Coordinates, LibraryRow]:
        """Every library version with a row."""
        rows = await self._fetch("SELECT * FROM libraries")
        return {
            (r["group_id"], r["artifact_id"], r["version"]): dataclasses.replace(
                dataclass_row(LibraryRow, r), status=LibraryStatus(r["status"])
            )
            for r in rows
        }

    async def set_library(
        self,
        coordinates: Coordinates,
        status: LibraryStatus,
        detail: str | None = None,
        *,
        source_url: str | None = None,
        jar_bytes: int | None = None,
        chunks: int | None = None,
    ) -> None:
        """Record what became of one library version."""
        await self._execute(
            """
            INSERT INTO libraries (group_id, artifact_id, version, status, detail, source_url, jar_bytes, chunks)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            ON CONFLICT (group_id, artifact_id, version) DO UPDATE SET status = $4, detail = $5, source_url = $6,
                jar_bytes = $7, chunks = $8, updated_at = now()
            """,
            *coordinates, status.value, detail, source_url, jar_bytes, chunks,
        )  # fmt: skip

    async def delete_library(self, coordinates: Coordinates) -> None:
        """Forget a library version nobody uses any more."""
        await self._execute(
            "DELETE FROM libraries WHERE group_id = $1 AND artifact_id = $2 AND version = $3", *coordinates
        )

    async def usages(
        self,
        group: str,
        artifact: str | None,
        version: str | None,
        *,
        everything: bool,
        ids: Sequence[int] = (),
        paths: Sequence[str] = (),
        prefixes: Sequence[str] = (),
    ) -> list[UsageRow]:
        """Declarations of a library (a group, or one artifact, or one version) by projects the caller may read."""
        if not all(storable(t) for t in (group, artifact or "", version or "")):
            return []
        rows = await self._fetch(_USAGES, everything, list(ids), list(paths), list(prefixes), group, artifact, version)
        return [dataclass_row(UsageRow, r) for r in rows]

    async def readable_versions(
        self, *, everything: bool, ids: Sequence[int] = (), paths: Sequence[str] = (), prefixes: Sequence[str] = ()
    ) -> list[Coordinates]:
        """Every library version some project the caller may read declares (who may read a library's code)."""
        rows = await self._fetch(_READABLE_VERSIONS, everything, list(ids), list(paths), list(prefixes))
        return [(r["group_id"], r["artifact_id"], r["version"]) for r in rows]


_COORDINATES = "SELECT DISTINCT group_id, artifact_id, version, kind FROM project_dependencies WHERE project_id = $1"
