"""Which of the org's projects use a library, filtered to what the caller may read (issues 16, 24).

*Who uses a library* is a fact about our projects, and so is *that a version is used at all*
(`maven:org.zebrasecret:privonly:9.9` tells a private project's plans): every answer here goes
through the caller's readable set inside the PostgreSQL query (`Access.read_set`). A library
version's code is readable by a caller who may read at least one project that declares it
(`readable_versions`, joined into the Qdrant query by `app.search.scoping.build_filter`); its users
are named only when readable (`usages`, `with_users`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from app.auth.access import Access
from app.db import Database, UsageRow
from app.search.hits import Hit
from pipeline.buildfiles import library_repo_path, parse_library_repo_path

MAX_LIBRARIES_LOOKED_UP = 20  # distinct library versions in one answer whose users are looked up


@dataclass(frozen=True, slots=True, kw_only=True)
class LibraryName:
    """A library as asked for: `group`, `group:artifact` or `group:artifact:version` (or a `maven:` repo path)."""

    group: str
    artifact: str | None = None
    version: str | None = None

    @classmethod
    def parse(cls, text: str) -> LibraryName:
        """Read `org.springframework:spring-web[:6.1.4]` or `maven:...`; raises ValueError when empty."""
        parts = [p.strip() for p in text.strip().removeprefix("maven:").split(":")]
        if not parts or not parts[0] or len(parts) > 3 or any(not p for p in parts):
            raise ValueError("give a library as group, group:artifact or group:artifact:version")
        return cls(
            group=parts[0], artifact=parts[1] if len(parts) > 1 else None, version=parts[2] if len(parts) > 2 else None
        )


async def usages(db: Database, access: Access, library: LibraryName) -> list[UsageRow]:
    """Every declaration of the library by a project the caller may read."""
    readable = access.read_set()
    return await db.usages(
        library.group, library.artifact, library.version,
        everything=readable.everything, ids=readable.ids, paths=readable.paths, prefixes=readable.prefixes,
    )  # fmt: skip


async def readable_versions(db: Database, access: Access) -> frozenset[str]:
    """The `maven:` paths of every library version a project the caller may read declares."""
    readable = access.read_set()
    found = await db.readable_versions(
        everything=readable.everything, ids=readable.ids, paths=readable.paths, prefixes=readable.prefixes
    )
    return frozenset(library_repo_path(*coordinates) for coordinates in found)


async def with_users(db: Database | None, access: Access, hits: Sequence[Hit]) -> list[Hit]:
    """The hits, each on library code carrying the readable projects that use its version (`Hit.used_by`)."""
    versions = {c for h in hits if h.chunk.library and (c := parse_library_repo_path(h.repo_path)) is not None}
    if db is None or not versions:
        return list(hits)
    users: dict[tuple[str, str, str], tuple[str, ...]] = {}
    for group, artifact, version in sorted(versions)[:MAX_LIBRARIES_LOOKED_UP]:
        rows = await usages(db, access, LibraryName(group=group, artifact=artifact, version=version))
        users[(group, artifact, version)] = tuple(sorted({r.repo_path for r in rows}))
    return [
        dataclasses.replace(h, used_by=users.get(parse_library_repo_path(h.repo_path) or ("", "", ""), ()))
        if h.chunk.library
        else h
        for h in hits
    ]
