"""Qdrant Edge adapter: the embedded store, with the public methods of `app.store.vectors.VectorStore`.

Edge (`qdrant-edge-py`) is the Qdrant engine in-process: one shard per folder, with no collections,
aliases or collection metadata. So the folder at `settings.qdrant.path` holds one shard per
generation (`<alias>_<n>/`), the model each was built with (`<alias>_<n>.model.json`), and the
alias (`aliases.json`, replaced atomically): a rebuild writes a new generation and moves the alias
in one rename, as the server path does with its alias call.

Edge calls run on one thread owned by the store (Edge's shard is not shared across threads here; 0.9.0
releases the GIL while a query, scroll or upsert computes, so the event loop runs meanwhile: docs/decisions.md)
and each is kept short: writes go in batches of `WRITE_BATCH` points, scrolls in pages of ids whose payloads
are read `READ_BATCH` points a call (Edge holds the GIL while it builds payloads as Python objects), and records
are built on that thread, not on the event loop. The HNSW index of the dense vectors is built by `optimize()` in
the commands that own the store, and in `serve` in another process on a copy (`app.store.edge_index`, after
writes leave enough vectors without it); until then dense search is an exact scan. Edge raises bare
`Exception`s; `_translated` makes them `StorageError`s. Results come back as qdrant-client's
`ScoredPoint`/`Record` with string ids (Edge answers `uuid.UUID`), so callers see one shape.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import re
import shutil
import tempfile
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import qdrant_edge as qe
from qdrant_client import models as qm

from app.core.errors import StorageError
from app.core.store_settings import QdrantSettings
from app.store.edge_filters import edge_filter, edge_point
from app.store.edge_index import BuildPolicy, IndexBuilds, recover
from app.store.edge_shard import (
    LiveShard,
    PayloadCache,
    batched,
    cached_records,
    payload_indexes,
    shard_config,
    shard_ids_page,
    shard_query,
    shard_records,
    shard_retrieved,
)
from app.store.filters import Filter
from app.store.fusion import TIE_MARGIN
from app.store.json_files import StampedJson, read_json, write_json
from app.store.vectors import (
    DENSE,
    LEXICAL,
    STATE_PAGE,
    IndexModel,
    StateReads,
    refuse_mismatch,
)

logger = logging.getLogger(__name__)

ALIASES = "aliases.json"
SHM = "/dev/shm"  # RAM-backed on Linux: where a `:memory:` store's files go (`_memory_dir`)
LOCAL_MODE_MARKER = "meta.json"  # qdrant-client's local mode keeps its collections list here
FACET_MAX_VALUES = 1_000  # distinct values up to which a filtered count is Edge's facet (`counts_by`)
WRITE_BATCH = 64  # points per Edge update call: each call holds the store's thread for its whole length
READ_BATCH = 64  # points whose payloads one Edge call reads (`query`, `scroll`): Edge holds the GIL to convert them
PAYLOAD_CACHE: int = QdrantSettings.model_fields["payload_cache"].default  # payloads kept per generation
T = TypeVar("T")


@contextmanager
def _translated(action: str) -> Iterator[None]:
    """Run Edge calls, turning their failures (bare `Exception`s) into `StorageError("<action> failed: ...")`."""
    try:
        yield
    except StorageError:
        raise
    except Exception as exc:  # Edge raises nothing more specific
        message = str(exc)
        if "WouldBlock" in message:
            message = "the store is open in another process (a running `javakb serve`?)"
        raise StorageError(f"{action} failed: {message}") from exc


class EdgeStore(StateReads):
    """The organization's code behind its alias, in Qdrant Edge shards under one folder."""

    server = False

    def __init__(
        self,
        path: str,
        alias: str,
        *,
        facet_max_values: int = FACET_MAX_VALUES,
        indexing_threshold_kb: int | None = None,
        builds: BuildPolicy | None = None,
        payload_cache: int = PAYLOAD_CACHE,
    ) -> None:
        self.alias = alias
        self.facet_max_values = facet_max_values
        self.indexing_threshold_kb = indexing_threshold_kb  # None: Edge's (a test indexes a few points)
        self._temporary = path == ":memory:"
        self.root = Path(tempfile.mkdtemp(prefix="javakb-edge-", dir=_memory_dir()) if self._temporary else path)
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qdrant-edge")
        self._shards: dict[str, qe.EdgeShard] = {}
        self._dense: dict[str, bool] = {}  # generation -> whether it has dense vectors (its model has a dimension)
        self.payload_cache = payload_cache  # points per generation whose decoded payloads are kept (0: none)
        self._payloads: dict[str, PayloadCache] = {}  # generation -> its payloads read, emptied by each write
        self._aliases = StampedJson(self.root / ALIASES)  # read by every search: parsed again only when it changed
        self.builds = IndexBuilds(self.root, self._shards, self._run, builds or BuildPolicy(threshold=0, journal_max=0))

    async def _run(self, action: str, call: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        with _translated(action):
            return await loop.run_in_executor(self._thread, functools.partial(call, *args))

    # --- generations and the alias -------------------------------------------------------------

    async def ensure(self, model: IndexModel, *, rebuild_hint: str = "javakb index PATH --rebuild") -> None:
        """Create the first generation on first use; refuse one that holds vectors of another model.

        The generation's shard is opened here, not by the first search: opening reads its segments
        (seconds at 100k points), which belongs to the start, not to someone's first question.
        """
        if await self._alias_target() is None:
            self._refuse_local_mode(rebuild_hint)
            await self.switch_alias(self._orphan(model) or await self.create_generation(model))
            return
        refuse_mismatch(self.alias, await self.recorded_model(), model, rebuild_hint)
        await self._shard()

    def _refuse_local_mode(self, rebuild_hint: str) -> None:
        if (self.root / LOCAL_MODE_MARKER).is_file():
            raise StorageError(
                f"{self.root} holds a store of the former embedded engine (qdrant-client's local mode); "
                f"rebuild it for Qdrant Edge with `{rebuild_hint}` (it writes beside the old files, which "
                "you may then delete), or keep the old engine with JAVAKB_QDRANT__ENGINE=local"
            )

    def _orphan(self, model: IndexModel) -> str | None:
        for name in reversed(self._generations()):
            if _read_model(self._model_file(name)) == model:
                logger.info("adopting collection %s left without its alias", name)
                return name
        return None

    async def recorded_model(self, collection: str | None = None) -> IndexModel | None:
        """The model recorded beside a generation (the one the alias points at by default)."""
        return _read_model(self._model_file(await self._target(collection)))

    async def create_generation(self, model: IndexModel, *, generation: int | None = None) -> str:
        """Create a new shard for `model` and return its name (the alias is not moved)."""
        if generation is None:
            generation = 1 + max(map(self._gen, self._generations()), default=0)
        name = f"{self.alias}_{generation}"
        config = shard_config(model, self.indexing_threshold_kb)
        shard = await self._run(f"creating collection {name!r}", qe.EdgeShard.create, str(self.root / name), config)
        await self._index_missing(name, shard)
        self._shards[name] = shard
        self._payloads[name] = self._new_payloads()
        self._dense[name] = bool(model.dimension)
        write_json(self._model_file(name), model.metadata())
        logger.info("created collection %s for %s", name, model.describe())
        return name

    async def switch_alias(self, collection: str) -> str | None:
        """Point the alias at `collection` (one atomic file replace); return what it pointed at before."""
        aliases = read_json(self.root / ALIASES) or {}
        previous = aliases.get(self.alias)
        aliases[self.alias] = collection
        with _translated(f"pointing {self.alias!r} at {collection!r}"):
            write_json(self.root / ALIASES, aliases)
        self._aliases.forget()
        return previous if isinstance(previous, str) else None

    async def drop_collection(self, name: str) -> None:
        """Delete a generation's shard and its model record."""
        shard = self._shards.pop(name, None)
        self._dense.pop(name, None)
        self._payloads.pop(name, None)
        if shard is not None:
            await self._run(f"closing collection {name!r}", shard.close)
        with _translated(f"dropping collection {name!r}"):
            shutil.rmtree(self.root / name, ignore_errors=True)
            self._model_file(name).unlink(missing_ok=True)

    async def target(self) -> str | None:
        """The generation the alias points at (None before the first index)."""
        return await self._alias_target()

    async def generations(self) -> list[str]:
        """Every generation of this alias, oldest first."""
        return self._generations()

    def _generations(self) -> list[str]:
        found = [p.name for p in self.root.glob(f"{self.alias}_*") if p.is_dir() and self._gen(p.name)]
        return sorted(found, key=self._gen)

    def _gen(self, name: str) -> int:
        match = re.fullmatch(re.escape(self.alias) + r"_(\d+)", name)
        return int(match.group(1)) if match else 0

    def _model_file(self, name: str) -> Path:
        return self.root / f"{name}.model.json"

    async def _alias_target(self) -> str | None:
        target = (self._aliases.read() or {}).get(self.alias)
        return target if isinstance(target, str) else None

    async def _target(self, collection: str | None = None) -> str:
        name = collection or await self._alias_target()
        if name is None:
            raise StorageError(f"Collection {self.alias!r} not found: nothing indexed yet")
        return name

    async def _shard(self, collection: str | None = None) -> LiveShard:
        name = await self._target(collection)
        if name not in self._shards:
            with _translated(f"opening collection {name!r}"):
                recover(self.root, name)
            if not (self.root / name).is_dir():
                raise StorageError(f"Collection {name!r} not found")
            shard = await self._run(f"opening collection {name!r}", qe.EdgeShard.load, str(self.root / name))
            await self._index_missing(name, shard)  # a shard written before an index existed gets it once
            self._shards[name] = shard
            self._payloads[name] = self._new_payloads()
            model = _read_model(self._model_file(name))
            self._dense[name] = bool(model and model.dimension)
            self.builds.consider(name, self._dense[name])  # a store written without the index gets it now
        return LiveShard(self._shards, name)

    async def _index_missing(self, name: str, shard: qe.EdgeShard) -> None:
        """Create the payload indexes this shard lacks (all of them on a new one)."""
        present = (await self._run(f"reading collection {name!r}", shard.info)).payload_schema
        for field_name, kind in payload_indexes():
            if field_name not in present:
                op = qe.UpdateOperation.create_field_index(field_name, kind)
                await self._run(f"creating the payload index {field_name!r} of {name!r}", shard.update, op)

    # --- reads ---------------------------------------------------------------------------------

    async def query(
        self,
        *,
        lexical: Any,
        dense: Sequence[float] | None,
        where: Filter | None,
        limit: int,
        dense_weight: float = 1.0,
    ) -> list[qm.ScoredPoint]:
        """The `limit` best points for a lexical and/or a dense query vector, fused with RRF when both are given."""
        edge_where = edge_filter(where)
        requests: list[qe.QueryRequest] = []
        asked = limit + TIE_MARGIN  # app.store.fusion: the same points tied at the cut on every engine
        if lexical is not None:
            # Term rarity is measured over the points `where` selects, as in `VectorStore.query`.
            idf = qe.SearchParams(idf=qe.IdfParams(corpus=edge_where)) if edge_where is not None else None
            sparse = qe.Query.Nearest(qe.SparseVector(list(lexical.indices), list(lexical.values)), using=LEXICAL)
            requests.append(qe.QueryRequest(asked, query=sparse, filter=edge_where, with_payload=False, params=idf))
        if dense is not None:
            nearest = qe.Query.Nearest(list(dense), using=DENSE)
            requests.append(qe.QueryRequest(asked, query=nearest, filter=edge_where, with_payload=False))
        if not requests:
            return []
        shard = await self._shard()
        # One turn of the store's thread: the lists (ids and scores), their fusion, the best's payloads (`shard_query`).
        payloads = self._payloads_of(shard.name)
        return await self._run("Qdrant query", shard_query, shard, requests, limit, dense_weight, payloads)

    async def scroll(
        self,
        where: Filter,
        fields: Sequence[str] | bool,
        *,
        collection: str | None = None,
        page: int = 1024,
        with_vectors: bool = False,
    ) -> AsyncIterator[qm.Record]:
        """Iterate over every point matching a filter, with the given payload fields.

        A page's ids come first (Edge filters without the GIL), then their payloads and vectors `READ_BATCH` points
        a call: Edge holds the GIL while it turns payloads into Python objects, and a page of 1,024 whole payloads
        held it, and so the event loop, for up to 100-180 ms (docs/performance.md, "`/healthz` under worst-case
        searches"). The points come in the scroll's order, as one call with payloads gives them.
        """
        shard = await self._shard(collection)
        with_payload: Any = list(fields) if not isinstance(fields, bool) else fields
        offset: Any = None
        edge_where = edge_filter(where)
        while True:
            request = qe.ScrollRequest(
                offset=offset, limit=page, filter=edge_where, with_payload=False, with_vector=False
            )
            ids, offset = await self._run("Qdrant scroll", shard_ids_page, shard, request)
            for start in range(0, len(ids), READ_BATCH):
                for record in await self._read(shard, ids[start : start + READ_BATCH], with_payload, with_vectors):
                    yield record
            if offset is None:
                return

    async def _read(self, shard: LiveShard, ids: list[str], with_payload: Any, with_vectors: bool) -> list[qm.Record]:
        """These points as records, in this order (a point deleted since is left out): a call when more than ids."""
        if with_payload is False and not with_vectors:
            return [qm.Record.model_construct(id=i, payload=None, vector=None) for i in ids]
        read = f"Qdrant retrieve of {len(ids)} points"
        if with_payload is True and not with_vectors:  # whole payloads: kept between reads (`PayloadCache`)
            return await self._run(read, cached_records, shard, ids, self._payloads_of(shard.name))
        return await self._run(read, shard_records, shard, list[int | uuid.UUID | str](ids), with_payload, with_vectors)

    async def optimize(self) -> bool:
        """Build the index of the dense vectors (HNSW) where Edge's optimizer plans one; True if it built any.

        Minutes at 100k 384-dim points (133 s on two cores, docs/performance.md), holding the process: only a
        command that owns the store calls it (`javakb index`, `javakb optimize`); `serve` builds in another process
        (`self.builds`, `app.store.edge_index`). A store without dense vectors is left alone: its searches are sparse.
        """
        model = await self.recorded_model()
        if model is None or not model.dimension:
            return False
        shard = await self._shard()
        return await self._run("building the vector index", shard.optimize)

    async def ordered_ids(self, where: Filter, key: str, limit: int) -> list[str]:
        """The ids of the first `limit` points matching `where` by the integer `key`, ascending (without it: none).

        The order comes from the key's range index: no payload is read (0.2 ms for 40 of 10,957 points, 1.4 ms
        for 540, at 109k points; docs/performance.md).
        """
        shard = await self._shard()
        request = qe.ScrollRequest(
            limit=limit, filter=edge_filter(where), with_payload=False, with_vector=False, order_by=qe.OrderBy(key)
        )
        records, _ = await self._run("Qdrant ordered scroll", shard.scroll, request)
        return [str(r.id) for r in records]

    async def retrieve(self, ids: Sequence[str], fields: Sequence[str]) -> list[qm.Record]:
        """The points with these ids (those that exist), with the given payload fields: a lookup, not a scan."""
        shard = await self._shard()
        return await self._run(f"Qdrant retrieve of {len(ids)} points", shard_retrieved, shard, list(ids), list(fields))

    async def counts_by(
        self, key: str, limit: int = 100_000, where: Filter | None = None, *, by_facet: bool = False
    ) -> dict[str, int]:
        """Number of points per value of a keyword field (exact facet counts), optionally of matching points.

        Under a filter, Edge's exact facet grows with the number of distinct values (seconds at 20,000
        repositories), and a scroll with the number of matching points (reading their payloads: 0.1-0.5 s
        for 7,000 points, against 3-6 ms for the facet over 2 values; docs/performance.md). So the field's
        distinct values are counted first (an approximate facet: under a millisecond) and a filtered count
        is a facet up to `FACET_MAX_VALUES` of them, a scroll beyond; `by_facet` is the facet whatever their
        number (a repository's file stamps: 0.4 s for 3,045 files of 109k points, against 15 s for the
        scroll at load 5; docs/performance.md).
        """
        shard = await self._shard()
        if (
            where is not None
            and not by_facet
            and len(await self._facet(shard, key, limit, None, exact=False)) > self.facet_max_values
        ):
            return await self._counted(key, limit, where)
        return await self._facet(shard, key, limit, where, exact=True)

    async def _facet(
        self, shard: LiveShard, key: str, limit: int, where: Filter | None, *, exact: bool
    ) -> dict[str, int]:
        request = qe.FacetRequest(key, limit=limit, exact=exact, filter=edge_filter(where))
        response = await self._run(f"Qdrant facet on {key}", shard.facet, request)
        return {str(hit.value): hit.count for hit in response.hits}

    async def _counted(self, key: str, limit: int, where: Filter) -> dict[str, int]:
        counts: Counter[str] = Counter()
        async for record in self.scroll(where, [key], page=STATE_PAGE):
            value = (record.payload or {}).get(key)
            counts.update(str(v) for v in (value if isinstance(value, list) else [value] if value is not None else []))
        return dict(counts.most_common(limit))

    async def count(self, where: Filter | None = None) -> int:
        """Number of points, optionally matching a filter."""
        shard = await self._shard()
        return await self._run("Qdrant count", shard.count, qe.CountRequest(exact=True, filter=edge_filter(where)))

    # --- writes --------------------------------------------------------------------------------

    async def upsert(self, points: Sequence[qm.PointStruct], *, collection: str | None = None) -> None:
        """Write points (vectors and payload), searchable when this returns; in bounded calls."""
        if not points:
            return
        shard = await self._shard(collection)
        for batch in batched(points, WRITE_BATCH):
            with _translated(f"Qdrant upsert of {len(points)} points"):
                op = qe.UpdateOperation.upsert_points([edge_point(p) for p in batch])
            await self._update(f"Qdrant upsert of {len(points)} points", shard, [op], len(batch))

    async def set_payloads(self, payloads: Mapping[str, dict[str, Any]], *, collection: str | None = None) -> None:
        """Replace the whole payload of existing points whose vectors stay (overwritten: see `VectorStore`)."""
        if not payloads:
            return
        shard = await self._shard(collection)
        ops = [qe.UpdateOperation.overwrite_payload([point_id], payload) for point_id, payload in payloads.items()]
        for batch in batched(ops, WRITE_BATCH):
            await self._update(f"Qdrant payload update of {len(ops)} points", shard, batch, 0)

    async def delete_ids(self, ids: Iterable[str], *, collection: str | None = None) -> None:
        """Delete points by id."""
        id_list: list[Any] = list(ids)
        if not id_list:
            return
        shard = await self._shard(collection)
        for batch in batched(id_list, WRITE_BATCH * 16):
            op = qe.UpdateOperation.delete_points(list(batch))
            await self._update(f"Qdrant delete of {len(id_list)} points", shard, [op], 0)

    async def delete_where(self, where: Filter, *, collection: str | None = None) -> None:
        """Delete every point matching a filter."""
        shard = await self._shard(collection)
        op = qe.UpdateOperation.delete_points_by_filter(_required(edge_filter(where)))
        await self._update("Qdrant delete by filter", shard, [op], 0)

    async def set_payload_where(self, where: Filter, payload: dict[str, Any], *, collection: str | None = None) -> None:
        """Set payload keys on every point matching a filter (a project rename rewrites repo_path)."""
        shard = await self._shard(collection)
        op = qe.UpdateOperation.set_payload_by_filter(_required(edge_filter(where)), payload)
        await self._update("Qdrant payload update by filter", shard, [op], 0)

    async def _update(self, action: str, shard: LiveShard, ops: Sequence[qe.UpdateOperation], points: int) -> None:
        """Apply updates on the store's thread (journaled while a build copies the generation); count new points."""
        await self._run(action, self._write, shard.name, ops, points)
        self.builds.wrote(shard.name, points, self._dense.get(shard.name, False))

    def _write(self, name: str, ops: Sequence[qe.UpdateOperation], points: int) -> None:
        """On the store's thread: forget the generation's kept payloads, then apply the updates."""
        self._payloads_of(name).clear()
        self.builds.apply(name, ops, points)

    def _payloads_of(self, name: str) -> PayloadCache:
        """The generation's kept payloads (`PayloadCache`)."""
        cache = self._payloads.get(name)
        if cache is None:
            cache = self._payloads[name] = self._new_payloads()
        return cache

    def _new_payloads(self) -> PayloadCache:
        """An empty `PayloadCache` for a generation opened or created (a new shard keeps nothing of an old one)."""
        return PayloadCache(self.payload_cache, READ_BATCH)

    async def close(self) -> None:
        """Close every open shard (releases their WAL locks), then the thread; a `:memory:` folder is removed."""
        try:
            await self.builds.close()
            for name, shard in list(self._shards.items()):
                await self._run(f"closing collection {name!r}", shard.close)
        finally:
            self._shards.clear()
            self._payloads.clear()
            self._thread.shutdown(wait=True)
            if self._temporary:
                shutil.rmtree(self.root, ignore_errors=True)


def _memory_dir() -> str | None:
    """Where a `:memory:` store's shard goes: RAM (`/dev/shm`) where the system has it, else the temporary folder.

    Edge writes every payload-index creation to its files; on a disk the 22 of a new shard took about 1 s
    (a test opens hundreds of stores), in RAM about 0.15 s.
    """
    return SHM if os.path.isdir(SHM) and os.access(SHM, os.W_OK) else None


def _required(where: qe.Filter | None) -> qe.Filter:
    return where if where is not None else qe.Filter()


def _read_model(path: Path) -> IndexModel | None:
    meta = read_json(path)
    if meta is None or "javakb_schema" not in meta:
        return None
    return IndexModel(embedding_model=meta.get("embedding_model"), dimension=meta.get("dimension"))
