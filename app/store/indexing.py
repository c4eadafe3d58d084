"""The write path: put a batch of chunked files into the store, re-embedding only what changed.

`plan_writes` is pure: it compares the chunks of some files with what the store holds for those
files and decides what to embed, what to refresh in place and what to delete. `Indexer` applies a
plan: it embeds, upserts, refreshes payloads, and deletes stale points last, so a search never
sees a file half-missing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from app.store import filters, payloads
from app.store.embeddings import Embedder
from app.store.engines import Store
from app.store.payloads import source_stamp, stored_payload
from app.store.summaries import Summarizer
from app.store.vectors import StoredState, chunk_point, moved_point
from pipeline.model import Chunk, FileResult
from pipeline.render import model_text

logger = logging.getLogger(__name__)

Clock = Callable[[], datetime]
PointBuilder = Callable[[Chunk, Sequence[float] | None, str, str], Any]
"""(chunk, dense vector, indexed_at, source hash) -> point"""


def utc_now() -> datetime:
    """The production clock."""
    return datetime.now(UTC)


MOVE_FIELDS = ("qualified_name", "parameter_types", "part_index", "content_hash")
"""A chunk of a renamed file is the same chunk when these match (its id changes with its path)."""
MoveKey = tuple[object, ...]  # the values of MOVE_FIELDS, from a chunk or from its stored payload


def move_key(chunk: Chunk) -> MoveKey:
    """What identifies a chunk across a rename of its file."""
    return tuple(getattr(chunk, name) for name in MOVE_FIELDS)


@dataclass(frozen=True, slots=True, kw_only=True)
class WritePlan:
    """What to do with the chunks of a batch of files."""

    embed: tuple[Chunk, ...]
    refresh: tuple[Chunk, ...]
    move: tuple[Chunk, ...]  # from a renamed file: new id, vectors copied from the old id
    delete: tuple[str, ...]
    per_file: Mapping[str, tuple[int, int, int]]  # file_path -> (embedded, reused, deleted)


def plan_writes(
    results: Sequence[FileResult],
    stored: Mapping[str, tuple[str, str]],
    movable: Mapping[MoveKey, str] | None = None,
    *,
    force: bool = False,
) -> WritePlan:
    """Decide per chunk: embed (new or changed), refresh (same content hash), move, and which stored ids die.

    Args:
        results: the chunked files; every stored point of these files not among their chunks is stale.
        stored: point id -> (file_path, content_hash) of what the store holds for these files (and for
            the old paths of renamed ones, which all die).
        movable: move key -> old point id of the chunks of renamed files' old paths.
        force: embed every chunk again, unchanged ones too (a forced backfill: a new model endpoint
            behind the same name, a repaired vector); their ids stay, so nothing else moves.
    """
    movable = {} if force else movable or {}
    embed: list[Chunk] = []
    refresh: list[Chunk] = []
    move: list[Chunk] = []
    keep: set[str] = set()
    per_file: dict[str, list[int]] = {r.file_path: [0, 0, 0] for r in results}
    for result in results:
        for chunk in result.chunks:
            keep.add(chunk.id)
            previous = stored.get(chunk.id)
            if previous is not None and previous[1] == chunk.content_hash and not force:
                refresh.append(chunk)
                per_file[result.file_path][1] += 1
            elif move_key(chunk) in movable:
                move.append(chunk)
                per_file[result.file_path][1] += 1
            else:
                embed.append(chunk)
                per_file[result.file_path][0] += 1
    delete = tuple(sorted(point_id for point_id in stored if point_id not in keep))
    for point_id in delete:
        file_path = stored[point_id][0]
        if file_path in per_file:
            per_file[file_path][2] += 1
    return WritePlan(
        embed=tuple(embed),
        refresh=tuple(refresh),
        move=tuple(move),
        delete=delete,
        per_file={path: (c[0], c[1], c[2]) for path, c in per_file.items()},
    )


@dataclass(slots=True)
class RunCounts:
    """Totals of one indexing run."""

    files: int = 0
    embedded: int = 0
    reused: int = 0
    deleted: int = 0
    skipped: int = 0
    skipped_reasons: dict[str, int] = field(default_factory=dict)

    def add_unchanged(self, files: int, points: int) -> None:
        """Count files left as they are stored, unread (their points are reused)."""
        self.files += files
        self.reused += points

    def add(self, plan: WritePlan, results: Sequence[FileResult]) -> None:
        """Count one applied batch."""
        self.files += len(results)
        self.embedded += len(plan.embed)
        self.reused += len(plan.refresh) + len(plan.move)
        self.deleted += len(plan.delete)
        for result in results:
            for skipped in result.skipped:
                self.skipped += 1
                self.skipped_reasons[skipped.reason.value] = self.skipped_reasons.get(skipped.reason.value, 0) + 1


def _differs(payload: Mapping[str, Any], state: StoredState, point_id: str) -> bool:
    """Whether a refreshed chunk's payload differs from the stored one (by its two digests)."""
    new = (payloads.read(payload, "payload_hash"), payloads.read(payload, "source_hash"))
    return new != (state.payloads.get(point_id), state.sources.get(point_id))


class Indexer:
    """Applies write plans to the store."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        clock: Clock = utc_now,
        *,
        point: PointBuilder = chunk_point,
        summarizer: Summarizer | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock
        self.point = point  # how a new chunk becomes a point; a benchmark passes a timed `chunk_point`
        self.summarizer = summarizer  # describes the chunks to embed (app.store.summaries), when configured

    def using(self, embedder: Embedder | None) -> Indexer:
        """This indexer embedding with another model (the new generation of a model rebuild)."""
        return Indexer(self.store, embedder, self.clock, point=self.point, summarizer=self.summarizer)

    async def write(
        self,
        repo_path: str,
        results: Sequence[FileResult],
        *,
        collection: str | None = None,
        moved_from: Mapping[str, str] | None = None,
        known: StoredState | None = None,
        sources: Mapping[str, str] | None = None,
        force: bool = False,
    ) -> WritePlan:
        """Write the chunks of some files of one repository; return the plan that was applied.

        `moved_from` maps new paths of renamed files to their old paths: chunks whose code did not
        change take their vectors from the old points (no re-embedding), and the old points go.
        `known` is the repository's stored state read once before a run that writes each file once
        (a local index): the store is then not asked again for every batch. `sources` maps file paths to
        their source hashes (`app.sync.localfs.source_hash`), stamped on every point of the file. `force`
        embeds unchanged chunks again (`plan_writes`).
        """
        old_paths = sorted(set((moved_from or {}).values()))
        paths = [r.file_path for r in results] + old_paths
        if known is not None:
            state = known.of_files(paths)
        else:
            state = await self.store.stored_state(repo_path, paths, collection=collection)
        old_vectors = await self._old_vectors(repo_path, old_paths, collection)
        movable = {key: point_id for key, (point_id, _) in old_vectors.items()}
        plan = plan_writes(results, state.hashes, movable, force=force)
        indexed_at = self.clock().isoformat()
        embed: Sequence[Chunk] = plan.embed
        if self.summarizer is not None and embed:
            embed = await self.summarizer.described(embed)
        vectors: list[list[float]] | list[None] = [None] * len(embed)
        if self.embedder is not None and embed:
            vectors = await self.embedder.embed([model_text(c.text) for c in embed])
        given = sources or {}
        stamps = {
            r.file_path: source_stamp(given[r.file_path], len(r.chunks), r.file_path)
            for r in results
            if r.file_path in given
        }
        source = stamps.get
        points = [
            self.point(chunk, vector, indexed_at, source(chunk.file_path, ""))
            for chunk, vector in zip(embed, vectors, strict=True)
        ]
        points += [moved_point(c, old_vectors[move_key(c)][1], indexed_at, source(c.file_path, "")) for c in plan.move]
        await self.store.upsert(points, collection=collection)
        # Only chunks whose metadata moved (lines, commit, imports...) or whose file's source hash is new
        # are rewritten: an unchanged re-run writes nothing (local mode spent 600 s rewriting java.base's
        # 52k payloads).
        refreshed = {c.id: stored_payload(c, indexed_at, source(c.file_path, "")) for c in plan.refresh}
        changed = {pid: p for pid, p in refreshed.items() if _differs(p, state, pid)}
        await self.store.set_payloads(changed, collection=collection)
        await self.store.delete_ids(plan.delete, collection=collection)  # last: never a file half-missing
        return plan

    async def _old_vectors(
        self, repo_path: str, old_paths: Sequence[str], collection: str | None
    ) -> dict[MoveKey, tuple[str, Any]]:
        """Move key → (old id, vectors) of the points stored under renamed files' old paths."""
        if not old_paths:
            return {}
        where = filters.all_of(filters.eq("repo_path", repo_path), filters.any_of("file_path", old_paths))
        found: dict[MoveKey, tuple[str, Any]] = {}
        async for record in self.store.scroll(where, MOVE_FIELDS, collection=collection, with_vectors=True):
            key = tuple(payloads.read(record.payload or {}, name) for name in MOVE_FIELDS)
            found[key] = (str(record.id), record.vector)
        return found

    async def delete_files(self, repo_path: str, file_paths: Sequence[str], *, collection: str | None = None) -> int:
        """Remove every point of these files; return how many there were."""
        stored = await self.store.stored_hashes(repo_path, file_paths, collection=collection)
        await self.store.delete_ids(stored, collection=collection)
        return len(stored)

    async def delete_repo(self, repo_path: str) -> None:
        """Remove every point of a repository."""
        await self.store.delete_where(filters.all_of(filters.eq("repo_path", repo_path)))
