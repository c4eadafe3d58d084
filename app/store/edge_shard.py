"""What runs on an Edge shard, on the thread of `app.store.edge.EdgeStore`.

A new shard's config and payload indexes, updates applied in order, and reads turned into
qdrant-client's `Record`/`ScoredPoint` with string ids (Edge answers `uuid.UUID`). Callers hold a
`LiveShard`: the generation's shard is looked up when the call runs, so a background index build
(`app.store.edge_index`) may replace it in between.
"""

from __future__ import annotations

import marshal
import uuid
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

import qdrant_edge as qe
from qdrant_client import models as qm

from app.core.errors import StorageError
from app.store.edge_filters import client_vectors
from app.store.fusion import candidates
from app.store.vectors import (
    DENSE,
    INTEGER_INDEXES,
    KEYWORD_INDEXES,
    LEXICAL,
    IndexModel,
)

T = TypeVar("T")


class LiveShard:
    """A generation's shard, looked up when a call runs on the store's thread rather than when it was taken.

    A background index build replaces a generation's shard object (`app.store.edge_index`); a caller that
    took the shard before that and calls after it reaches the new shard, never the closed one.
    """

    __slots__ = ("_shards", "name")

    def __init__(self, shards: Mapping[str, qe.EdgeShard], name: str) -> None:
        self._shards = shards
        self.name = name

    def now(self) -> qe.EdgeShard:
        """The generation's shard at this moment."""
        shard = self._shards.get(self.name)
        if shard is None:
            raise StorageError(f"Collection {self.name!r} is closed")
        return shard

    def query(self, request: qe.QueryRequest) -> list[qe.ScoredPoint]:  # noqa: D102 - Edge's own calls
        return self.now().query(request)

    def scroll(self, request: qe.ScrollRequest) -> tuple[list[qe.Record], Any]:  # noqa: D102
        return self.now().scroll(request)

    def retrieve(self, ids: list[int | uuid.UUID | str], with_payload: Any, with_vector: Any) -> list[qe.Record]:  # noqa: D102
        return self.now().retrieve(ids, with_payload, with_vector)

    def count(self, request: qe.CountRequest) -> int:  # noqa: D102
        return self.now().count(request)

    def facet(self, request: qe.FacetRequest) -> qe.FacetResponse:  # noqa: D102
        return self.now().facet(request)

    def info(self) -> qe.ShardInfo:  # noqa: D102
        return self.now().info()

    def update(self, operation: qe.UpdateOperation) -> None:  # noqa: D102
        self.now().update(operation)

    def optimize(self) -> bool:  # noqa: D102
        return self.now().optimize()


def shard_ids_page(shard: LiveShard, request: qe.ScrollRequest) -> tuple[list[str], Any]:
    """The ids of one scroll page (asked without payloads) and the next page's offset."""
    records, offset = shard.scroll(request)
    return [str(r.id) for r in records], offset


def shard_records(
    shard: LiveShard, ids: list[int | uuid.UUID | str], with_payload: Any, with_vectors: bool
) -> list[qm.Record]:
    """These points as records in the order of `ids` (one deleted since is left out), built on the store's thread.

    Built unvalidated: the engine's own values; building a page's records took the event loop 15-30 ms.
    """
    found = {str(r.id): r for r in shard.retrieve(ids, with_payload, with_vectors)}
    return [
        qm.Record.model_construct(id=key, payload=r.payload, vector=client_vectors(r.vector) if with_vectors else None)
        for key in map(str, ids)
        if (r := found.get(key)) is not None
    ]


def shard_retrieved(shard: LiveShard, ids: list[int | uuid.UUID | str], fields: list[str]) -> list[qm.Record]:
    """The points with these ids as records (engine values), built on the store's thread (as `shard_records`)."""
    return [qm.Record.model_construct(id=str(r.id), payload=r.payload) for r in shard.retrieve(ids, fields, False)]


def shard_query(
    shard: LiveShard, requests: Sequence[qe.QueryRequest], limit: int, dense_weight: float, payloads: PayloadCache
) -> list[qm.ScoredPoint]:
    """A search's reads, in one turn of the store's thread: the `limit` best points of the requests' lists, fused.

    Each list is one Edge call asked for ids and scores only (`app.store.fusion` orders and fuses them); the fused
    best's payloads then come from `payloads` (read from Edge, in batches, only for the points it lacks). One turn,
    not one per call: each hand-over to the thread and back costs the event loop a wake-up (docs/decisions.md).
    """
    best = candidates([found_points(shard.query(request)) for request in requests], limit, dense_weight)
    read = payloads.read(shard, [point.id for point, _ in best])
    return [scored_point(point, score, read[point.id]) for point, score in best if point.id in read]


def cached_records(shard: LiveShard, ids: Sequence[str], payloads: PayloadCache) -> list[qm.Record]:
    """These points with their whole payloads, in the order of `ids` (one deleted since is left out), via `payloads`."""
    read = payloads.read(shard, ids)
    return [qm.Record.model_construct(id=key, payload=read[key], vector=None) for key in ids if key in read]


class PayloadCache:
    """Whole payloads of one generation's points, by id, kept between reads until a write.

    Edge decodes a whole payload at each read (40-75 us a point at 109k chunks, whatever fields are asked:
    docs/performance.md), and a search reads about 60. The payloads of the last `size` points read are kept
    (least recently read out first; 0 keeps none); every write to the generation empties it first (`clear`, on
    the store's thread before the write applies), so a read never answers a payload the shard no longer holds.
    Used only on the store's thread. Kept as `marshal` bytes (about 2.5 KB a payload, 6 us to load): each read
    gets its own objects, and the garbage collector has nothing to walk (kept as dicts, 16,384 payloads more than
    doubled the objects it tracks and its full collections took 150-260 ms: docs/performance.md).
    """

    __slots__ = ("_entries", "read_batch", "size")

    def __init__(self, size: int, read_batch: int) -> None:
        self.size = size
        self.read_batch = read_batch  # points a call: Edge holds the GIL while it converts payloads
        self._entries: OrderedDict[str, bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def read(self, shard: LiveShard, ids: Sequence[str]) -> dict[str, Any]:
        """The whole payloads of these points by id (those that exist): kept ones, then the rest from Edge."""
        found: dict[str, Any] = {}
        missing: list[int | uuid.UUID | str] = []
        entries = self._entries
        for key in ids:
            kept = entries.get(key)
            if kept is None:
                missing.append(key)
            else:
                entries.move_to_end(key)
                found[key] = marshal.loads(kept)
        for batch in batched(missing, self.read_batch):
            for record in shard.retrieve(list(batch), True, False):
                key, payload = str(record.id), record.payload  # Edge builds the dict at each `.payload`: read once
                found[key] = payload
                self._keep(key, payload)
        return found

    def _keep(self, key: str, payload: Any) -> None:
        if self.size <= 0 or payload is None:
            return
        self._entries[key] = marshal.dumps(payload)
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget every payload (before a write to the generation)."""
        self._entries.clear()


def batched(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """`items` in consecutive slices of at most `size`."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


class Found(NamedTuple):
    """A point of one list as a search reads it: its id as text (read once: Edge builds a `uuid.UUID` at each read)."""

    id: str
    score: float
    version: int


def found_points(points: Sequence[qe.ScoredPoint]) -> list[Found]:
    """Edge's answer to a query without payloads, as `Found` points."""
    return [Found(str(point.id), point.score, point.version) for point in points]


def scored_point(point: Found, score: float, payload: Any) -> qm.ScoredPoint:
    """One point as qdrant-client's, with its fused score and payload (built unvalidated: the engine's own values)."""
    return qm.ScoredPoint.model_construct(id=point.id, version=point.version, score=score, payload=payload)


def shard_config(model: IndexModel, indexing_threshold_kb: int | None = None) -> qe.EdgeConfig:
    """A new shard's vectors (dense only when the model has a dimension), lexical sparse vectors and optimizer."""
    dense = {DENSE: qe.EdgeVectorParams(size=model.dimension, distance=qe.Distance.Cosine)} if model.dimension else None
    sparse = {LEXICAL: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}
    optimizers = (
        None if indexing_threshold_kb is None else qe.EdgeOptimizersConfig(indexing_threshold=indexing_threshold_kb)
    )
    return qe.EdgeConfig(vectors=dense, sparse_vectors=sparse, optimizers=optimizers)


def payload_indexes() -> list[tuple[str, qe.PayloadSchemaType]]:
    """Every payload index a shard gets: the keyword fields, then the integer ones."""
    kinds = [(f, qe.PayloadSchemaType.Keyword) for f in KEYWORD_INDEXES]
    return kinds + [(f, qe.PayloadSchemaType.Integer) for f in INTEGER_INDEXES]


def apply_all(shard: LiveShard, ops: Sequence[qe.UpdateOperation]) -> None:
    """Apply these updates to the shard in order."""
    for op in ops:
        shard.update(op)
