"""Qdrant adapter: the one collection, its model record, payload shapes and point writes.

The searched name is an alias (`settings.collection`) that points at a physical collection
`<alias>_<generation>`. A rebuild writes a new generation and swaps the alias in one atomic call,
so searches never see a half-built index. The collection's metadata records the embedding model
and dimension; opening it with other settings is refused (vectors are never mixed).
Every qdrant-client call goes through `VectorStore`, inside `_translated`, the one place where its
exceptions become `StorageError` (as httpx maps httpcore's at its transport boundary); nothing
outside this module touches the client.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from qdrant_client import AsyncQdrantClient
from qdrant_client import models as qm
from qdrant_client.http.exceptions import ApiException, UnexpectedResponse

from app.core.errors import IndexMismatchError, StorageError
from app.core.settings import QdrantSettings
from app.store import filters, payloads
from app.store.filters import Filter
from app.store.fusion import TIE_MARGIN, candidates
from app.store.lexical import SparseVector, document_vector
from app.store.qdrant_thread import threaded_local_client
from pipeline.model import Chunk

logger = logging.getLogger(__name__)

DENSE = "dense"
LEXICAL = "lexical"
SCHEMA_VERSION = 1
KEYWORD_INDEXES = (
    "repo_path",
    "repo_prefixes",
    "file_path",
    "path_prefixes",
    "symbol_type",
    "stereotype",
    "annotation_names",
    "http_method",
    "http_path",
    "http_keys",
    "mapping_keys",
    "outbound_keys",
    "qualified_name",
    "name",
    "calls",
    "calls_fq",
    "injects",
    "injects_fq",
    "injects_if_bean",
    "injects_if_bean_fq",
    "extends",
    "implements",
    "extends_fq",
    "implements_fq",
    "enclosing_type",
    "flags",
    "source_hash",
    "code",  # exact search's substring condition scans this index's dictionary, not every payload (issue 28)
    "config_keys",
)
INTEGER_INDEXES = ("gitlab_project_id", payloads.FILE_ORDER)
STATE_PAGE = 10_000
STAMPS_MAX = 200_000  # distinct stamps (files) of one repository one facet counts (`StateReads.stamp_counts`)
# What qdrant-client raises when the server or the embedded engine fails: its API errors (a refused or
# lost connection comes as `ResponseHandlingException`, an `ApiException`), and the embedded engine's
# ValueError/RuntimeError (a missing collection, a closed client).
_QDRANT_ERRORS = (ApiException, UnexpectedResponse, ValueError, RuntimeError, OSError)


@contextmanager
def _translated(action: str) -> Iterator[None]:
    """Run qdrant-client calls, turning their failures into `StorageError("<action> failed: ...")`."""
    try:
        yield
    except _QDRANT_ERRORS as exc:
        raise StorageError(f"{action} failed: {exc}") from exc


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexModel:
    """What the vectors of a collection were made with; `dimension=None` means lexical-only."""

    embedding_model: str | None
    dimension: int | None

    def metadata(self) -> dict[str, Any]:
        """Collection metadata recording this model."""
        return {"javakb_schema": SCHEMA_VERSION, "embedding_model": self.embedding_model, "dimension": self.dimension}

    def describe(self) -> str:
        """Human-readable form for error messages."""
        return f"{self.embedding_model} ({self.dimension} dimensions)" if self.dimension else "lexical-only"


def open_client(settings: QdrantSettings) -> AsyncQdrantClient:
    """A client for the Qdrant server at `url`, or the embedded local mode at `path` (one process only).

    The embedded mode's calls run on one dedicated thread, never on the event loop.
    """
    if settings.url:
        key = settings.api_key.get_secret_value() if settings.api_key else None
        return AsyncQdrantClient(url=settings.url, api_key=key, timeout=int(settings.timeout_s))
    # The embedded engine computes on the calling thread: run it on its own (app.store.qdrant_thread).
    return threaded_local_client(settings.path)


def refuse_mismatch(alias: str, recorded: IndexModel | None, model: IndexModel, rebuild_hint: str) -> None:
    """Raise `IndexMismatchError` when the collection holds vectors of another model than the settings'."""
    if recorded != model:
        raise IndexMismatchError(
            f"collection {alias!r} holds vectors of {recorded.describe() if recorded else 'an unknown model'}"
            f" but the settings ask for {model.describe()}; vectors are never mixed. Rebuild into a new"
            f" collection with `{rebuild_hint}` (the alias switches when it is done), or restore the settings."
        )


class StateReads:
    """What the store holds for some files, read through the store's own `scroll` (either engine)."""

    def scroll(
        self,
        where: Filter,
        fields: Sequence[str] | bool,
        *,
        collection: str | None = None,
        page: int = 1024,
        with_vectors: bool = False,
    ) -> AsyncIterator[qm.Record]:
        """Iterate over every point matching a filter, with the given payload fields."""
        raise NotImplementedError

    async def counts_by(
        self, key: str, limit: int = 100_000, where: Filter | None = None, *, by_facet: bool = False
    ) -> dict[str, int]:
        """Number of points per value of a keyword field (`by_facet`: always the engine's exact facet)."""
        raise NotImplementedError

    async def count(self, where: Filter | None = None) -> int:
        """Number of points, optionally matching a filter."""
        raise NotImplementedError

    async def stamp_counts(self, repo_path: str) -> dict[str, int] | None:
        """Points per stamp (`payloads.source_stamp`) of a repository, by one facet, no payload read.

        None when the facet did not count every point of the repository (more distinct stamps than
        `STAMPS_MAX`): the caller then reads the whole state.
        """
        where = filters.all_of(filters.eq("repo_path", repo_path))
        counts = await self.counts_by("source_hash", STAMPS_MAX, where, by_facet=True)
        return counts if sum(counts.values()) == await self.count(where) else None

    async def stored_hashes(
        self, repo_path: str, file_paths: Sequence[str], *, collection: str | None = None
    ) -> dict[str, tuple[str, str]]:
        """Point id → (file_path, content_hash) of every point stored for these files."""
        return (await self.stored_state(repo_path, file_paths, collection=collection)).hashes

    async def stored_state(
        self, repo_path: str, file_paths: Sequence[str] | None, *, collection: str | None = None
    ) -> StoredState:
        """What is stored for these files of a repository (None: all of its files), in one scroll."""
        state = StoredState()
        if file_paths is not None and not file_paths:
            return state
        conditions: list[filters.Condition] = [filters.eq("repo_path", repo_path)]
        if file_paths is not None:
            conditions.append(filters.any_of("file_path", file_paths))
        # Large pages of three short fields: local mode scans the whole collection for every page.
        where = filters.all_of(*conditions)
        async for record in self.scroll(where, payloads.STATE_FIELDS, collection=collection, page=STATE_PAGE):
            p = record.payload or {}
            state.add(str(record.id), *(payloads.read(p, name) for name in payloads.STATE_FIELDS))
        return state


class VectorStore(StateReads):
    """The organization's code collection behind its alias: every Qdrant call of the service."""

    def __init__(self, client: AsyncQdrantClient, alias: str, *, server: bool = False) -> None:
        self.client = client
        self.alias = alias
        self.server = server  # payload indexes exist only on a server; local mode warns and ignores them

    async def ensure(self, model: IndexModel, *, rebuild_hint: str = "javakb index PATH --rebuild") -> None:
        """Create the collection on first use; refuse one that holds vectors of another model."""
        current = await self._alias_target()
        if current is None:
            await self.switch_alias(await self._orphan(model) or await self.create_generation(model))
            return
        refuse_mismatch(self.alias, await self.recorded_model(), model, rebuild_hint)
        if self.server:  # a collection written before an index existed gets it once
            with _translated(f"reading collection {current!r}"):
                present = (await self.client.get_collection(current)).payload_schema
            await self._create_indexes(current, skip=set(present))

    async def _orphan(self, model: IndexModel) -> str | None:
        """A generation left without the alias by an interrupted first start, if it holds this model."""
        names = sorted((n for n in await self._collection_names() if _generation(n, self.alias)), key=self._gen)
        for name in reversed(names):
            with _translated(f"reading collection {name!r}"):
                meta = (await self.client.get_collection(name)).config.metadata or {}
            if meta.get("embedding_model") == model.embedding_model and meta.get("dimension") == model.dimension:
                logger.info("adopting collection %s left without its alias", name)
                return name
        return None

    async def recorded_model(self, collection: str | None = None) -> IndexModel | None:
        """The model recorded in a collection's metadata (the alias's by default)."""
        with _translated(f"reading collection {collection or self.alias!r}"):
            info = await self.client.get_collection(collection or self.alias)
        meta = info.config.metadata or {}
        if "javakb_schema" not in meta:
            return None
        return IndexModel(embedding_model=meta.get("embedding_model"), dimension=meta.get("dimension"))

    async def create_generation(self, model: IndexModel, *, generation: int | None = None) -> str:
        """Create a new physical collection for `model` and return its name (the alias is not moved)."""
        if generation is None:
            generation = 1 + max(map(self._gen, await self._collection_names()), default=0)
        name = f"{self.alias}_{generation}"
        vectors = {DENSE: qm.VectorParams(size=model.dimension, distance=qm.Distance.COSINE)} if model.dimension else {}
        with _translated(f"creating collection {name!r}"):
            await self.client.create_collection(
                name,
                vectors_config=vectors,
                sparse_vectors_config={LEXICAL: qm.SparseVectorParams(modifier=qm.Modifier.IDF)},
                metadata=model.metadata(),
            )
        if self.server:
            await self._create_indexes(name)
        logger.info("created collection %s for %s", name, model.describe())
        return name

    async def switch_alias(self, collection: str) -> str | None:
        """Point the alias at `collection` atomically; return the collection it pointed at before."""
        previous = await self._alias_target()
        ops: list[qm.CreateAliasOperation | qm.DeleteAliasOperation] = []
        if previous is not None:
            ops.append(qm.DeleteAliasOperation(delete_alias=qm.DeleteAlias(alias_name=self.alias)))
        ops.append(
            qm.CreateAliasOperation(create_alias=qm.CreateAlias(collection_name=collection, alias_name=self.alias))
        )
        with _translated(f"pointing {self.alias!r} at {collection!r}"):
            await self.client.update_collection_aliases(ops)
        return previous

    async def drop_collection(self, name: str) -> None:
        """Delete a physical collection (an old generation after a rebuild)."""
        with _translated(f"dropping collection {name!r}"):
            await self.client.delete_collection(name)

    async def target(self) -> str | None:
        """The generation the alias points at (None before the first index)."""
        return await self._alias_target()

    async def generations(self) -> list[str]:
        """Every generation of this alias, oldest first."""
        return sorted((n for n in await self._collection_names() if self._gen(n)), key=self._gen)

    async def _collection_names(self) -> list[str]:
        with _translated("listing collections"):
            return [c.name for c in (await self.client.get_collections()).collections]

    def _gen(self, name: str) -> int:
        return _generation(name, self.alias)

    async def _alias_target(self) -> str | None:
        with _translated(f"looking up alias {self.alias!r}"):
            aliases = await self.client.get_aliases()
        return next((a.collection_name for a in aliases.aliases if a.alias_name == self.alias), None)

    async def _create_indexes(self, name: str, *, skip: set[str] | None = None) -> None:
        # On a server, filtered search needs them (and strict mode rejects filters without them).
        kinds = [(f, qm.PayloadSchemaType.KEYWORD) for f in KEYWORD_INDEXES]
        kinds += [(f, qm.PayloadSchemaType.INTEGER) for f in INTEGER_INDEXES]
        for field_name, kind in kinds:
            if skip and field_name in skip:
                continue
            with _translated(f"creating the payload index {field_name!r} of {name!r}"):
                await self.client.create_payload_index(name, field_name, kind)

    async def query(
        self,
        *,
        lexical: SparseVector | None,
        dense: Sequence[float] | None,
        where: Filter | None,
        limit: int,
        dense_weight: float = 1.0,
    ) -> list[qm.ScoredPoint]:
        """The `limit` best points for a lexical and/or a dense query vector, fused with RRF when both are given.

        Each list is asked for a few more than `limit` points, ordered and fused by `app.store.fusion`. Term
        rarity (IDF) is measured over the points `where` selects: a query ranks as if the collection
        held only what it searches (docs/decisions.md, "Term rarity").
        """
        requests: list[qm.QueryRequest] = []
        if lexical is not None:
            sparse = qm.SparseVector(indices=list(lexical.indices), values=list(lexical.values))
            requests.append(_request(sparse, LEXICAL, where, limit + TIE_MARGIN, _idf(where)))
        if dense is not None:
            requests.append(_request(list(dense), DENSE, where, limit + TIE_MARGIN, None))
        if not requests:
            return []
        with _translated("Qdrant query"):
            # One round trip; the lists are fused in our code, as on Edge (app.store.fusion).
            responses = await self.client.query_batch_points(self.alias, requests=requests)
        best = candidates([response.points for response in responses], limit, dense_weight)
        return [point.model_copy(update={"score": score}) for point, score in best]

    async def scroll(
        self,
        where: Filter,
        fields: Sequence[str] | bool,
        *,
        collection: str | None = None,
        page: int = 1024,
        with_vectors: bool = False,
    ) -> AsyncIterator[qm.Record]:
        """Iterate over every point matching a filter, with the given payload fields."""
        offset: Any = None
        target = collection or self.alias
        with_payload: Any = list(fields) if not isinstance(fields, bool) else fields
        while True:
            with _translated("Qdrant scroll"):
                records, offset = await self.client.scroll(
                    target,
                    scroll_filter=where,
                    limit=page,
                    offset=offset,
                    with_payload=with_payload,
                    with_vectors=with_vectors,
                )
            for record in records:
                yield record
            if offset is None:
                return

    async def optimize(self) -> bool:
        """Nothing to build here: a Qdrant server indexes vectors as they arrive, and local mode has no index."""
        return False

    async def ordered_ids(self, where: Filter, key: str, limit: int) -> list[str]:
        """The ids of the first `limit` points matching `where` by the integer `key`, ascending (without it: none).

        On a server the order comes from the key's range index; local mode sorts every point's value.
        """
        with _translated("Qdrant ordered scroll"):
            records, _ = await self.client.scroll(
                self.alias, scroll_filter=where, limit=limit, with_payload=False, order_by=qm.OrderBy(key=key)
            )
        return [str(r.id) for r in records]

    async def retrieve(self, ids: Sequence[str], fields: Sequence[str]) -> list[qm.Record]:
        """The points with these ids (those that exist), with the given payload fields: a lookup, not a scan."""
        with _translated(f"Qdrant retrieve of {len(ids)} points"):
            return await self.client.retrieve(self.alias, ids=list(ids), with_payload=list(fields))

    async def upsert(self, points: Sequence[qm.PointStruct], *, collection: str | None = None) -> None:
        """Write points (vectors and payload), waiting until they are searchable."""
        if not points:
            return
        with _translated(f"Qdrant upsert of {len(points)} points"):
            await self.client.upsert(collection or self.alias, points=list(points), wait=True)

    async def set_payloads(self, payloads: Mapping[str, dict[str, Any]], *, collection: str | None = None) -> None:
        """Replace the whole payload of existing points whose vectors stay as they are.

        Overwritten, not merged: Qdrant's merge (`set_payload`) deletes every key given as null, and a
        stored payload holds nulls (`enclosing_type`, `gitlab_project_id`, ...) that readers require.
        """
        if not payloads:
            return
        ops = [
            qm.OverwritePayloadOperation(overwrite_payload=qm.SetPayload(payload=payload, points=[point_id]))
            for point_id, payload in payloads.items()
        ]
        with _translated(f"Qdrant payload update of {len(ops)} points"):
            await self.client.batch_update_points(collection or self.alias, ops, wait=True)

    async def delete_ids(self, ids: Iterable[str], *, collection: str | None = None) -> None:
        """Delete points by id."""
        id_list: list[Any] = list(ids)
        if not id_list:
            return
        with _translated(f"Qdrant delete of {len(id_list)} points"):
            await self.client.delete(
                collection or self.alias, points_selector=qm.PointIdsList(points=id_list), wait=True
            )

    async def delete_where(self, where: Filter, *, collection: str | None = None) -> None:
        """Delete every point matching a filter."""
        with _translated("Qdrant delete by filter"):
            await self.client.delete(
                collection or self.alias, points_selector=qm.FilterSelector(filter=where), wait=True
            )

    async def set_payload_where(self, where: Filter, payload: dict[str, Any], *, collection: str | None = None) -> None:
        """Set payload keys on every point matching a filter (a project rename rewrites repo_path)."""
        with _translated("Qdrant payload update by filter"):
            await self.client.set_payload(collection or self.alias, payload=payload, points=where, wait=True)

    async def counts_by(
        self, key: str, limit: int = 100_000, where: Filter | None = None, *, by_facet: bool = False
    ) -> dict[str, int]:
        """Number of points per value of a keyword field (exact facet counts), optionally of matching points."""
        with _translated(f"Qdrant facet on {key}"):
            response = await self.client.facet(self.alias, key, facet_filter=where, limit=limit, exact=True)
        return {str(hit.value): hit.count for hit in response.hits}

    async def count(self, where: Filter | None = None) -> int:
        """Number of points, optionally matching a filter."""
        with _translated("Qdrant count"):
            return (await self.client.count(self.alias, count_filter=where, exact=True)).count

    async def close(self) -> None:
        """Close the client (releases the embedded mode's folder lock)."""
        with _translated("closing Qdrant"):
            await self.client.close()


def _generation(name: str, alias: str) -> int:
    suffix = name.removeprefix(f"{alias}_")
    return int(suffix) if suffix != name and suffix.isdigit() else 0


@dataclass(slots=True)
class StoredState:
    """What the store holds for some files: id → (file_path, content_hash), id → payload and source hashes."""

    hashes: dict[str, tuple[str, str]] = field(default_factory=dict)
    payloads: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    by_file: dict[str, list[str]] = field(default_factory=dict)

    def add(self, point_id: str, file_path: str, content_hash: str, payload_hash: str, source_hash: str = "") -> None:
        """Note one stored point."""
        self.hashes[point_id] = (file_path, content_hash)
        self.payloads[point_id] = payload_hash
        self.sources[point_id] = source_hash
        self.by_file.setdefault(file_path, []).append(point_id)

    def of_files(self, file_paths: Iterable[str]) -> StoredState:
        """The part of this state that belongs to these files."""
        part = StoredState()
        for path in dict.fromkeys(file_paths):
            for point_id in self.by_file.get(path, ()):
                part.add(point_id, path, self.hashes[point_id][1], self.payloads[point_id], self.sources[point_id])
        return part

    def source_of(self, file_path: str) -> str | None:
        """The source hash this file's stored points were all written from (`payloads.source_stamp`), if any.

        None when the points carry none, carry different ones, or are fewer or more than were written.
        """
        points = self.by_file.get(file_path, ())
        stamps = {self.sources[point_id] for point_id in points}
        return payloads.stamped_source(stamps.pop(), len(points), file_path) if len(stamps) == 1 else None


def chunk_point(chunk: Chunk, dense: Sequence[float] | None, indexed_at: str, source_hash: str = "") -> qm.PointStruct:
    """A point with the chunk's dense vector (when embeddings are on) and its lexical vector."""
    sparse = document_vector(chunk.text)
    vector: dict[str, Any] = {LEXICAL: qm.SparseVector(indices=list(sparse.indices), values=list(sparse.values))}
    if dense is not None:
        vector[DENSE] = list(dense)
    payload = payloads.stored_payload(chunk, indexed_at, source_hash)
    return qm.PointStruct(id=chunk.id, vector=vector, payload=payload)


def moved_point(chunk: Chunk, vectors: Any, indexed_at: str, source_hash: str = "") -> qm.PointStruct:
    """A chunk of a renamed file under its new id, carrying the vectors stored under its old id."""
    return qm.PointStruct(id=chunk.id, vector=vectors, payload=payloads.stored_payload(chunk, indexed_at, source_hash))


def _request(
    vector: Any, using: str, where: Filter | None, limit: int, params: qm.SearchParams | None
) -> qm.QueryRequest:
    return qm.QueryRequest(query=vector, using=using, filter=where, limit=limit, params=params, with_payload=True)


def _idf(where: Filter | None) -> qm.SearchParams | None:
    """Search parameters that measure term rarity over the points `where` selects (collection-wide without one)."""
    return qm.SearchParams(idf=qm.IdfCorpusParams(corpus=where)) if where is not None else None
