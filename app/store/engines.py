"""The store interface both engines implement, and the one place that chooses the engine.

`VectorStore` (qdrant-client: a Qdrant server, or its local mode, the embedded default for now) and
`EdgeStore` (Qdrant Edge, opt-in with `JAVAKB_QDRANT__ENGINE=edge`) answer the same calls with the same
results; the contract suite in `tests/app/test_store_contract.py` runs one set of cases against both
embedded engines.
"""

# ruff: noqa: D102 - the methods are documented where they are implemented (app.store.vectors, app.store.edge)

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from qdrant_client import AsyncQdrantClient
from qdrant_client import models as qm

from app.core.settings import QdrantSettings
from app.store.edge import EdgeStore
from app.store.edge_index import BuildPolicy
from app.store.filters import Filter
from app.store.lexical import SparseVector
from app.store.vectors import IndexModel, StoredState, VectorStore, open_client

Scored = qm.ScoredPoint
"""A search's point: id, score and payload (`Store.query`)."""


class Store(Protocol):
    """The organization's code behind its alias: every vector-store call of the service."""

    alias: str

    async def ensure(self, model: IndexModel, *, rebuild_hint: str = ...) -> None: ...
    async def recorded_model(self, collection: str | None = None) -> IndexModel | None: ...
    async def create_generation(self, model: IndexModel, *, generation: int | None = None) -> str: ...
    async def switch_alias(self, collection: str) -> str | None: ...
    async def drop_collection(self, name: str) -> None: ...
    async def target(self) -> str | None: ...
    async def generations(self) -> list[str]: ...
    async def query(
        self,
        *,
        lexical: SparseVector | None,
        dense: Sequence[float] | None,
        where: Filter | None,
        limit: int,
        dense_weight: float = 1.0,
    ) -> list[qm.ScoredPoint]: ...
    async def stored_hashes(
        self, repo_path: str, file_paths: Sequence[str], *, collection: str | None = None
    ) -> dict[str, tuple[str, str]]: ...
    async def stored_state(
        self, repo_path: str, file_paths: Sequence[str] | None, *, collection: str | None = None
    ) -> StoredState: ...
    def scroll(
        self,
        where: Filter,
        fields: Sequence[str] | bool,
        *,
        collection: str | None = None,
        page: int = 1024,
        with_vectors: bool = False,
    ) -> AsyncIterator[qm.Record]: ...
    async def ordered_ids(self, where: Filter, key: str, limit: int) -> list[str]: ...
    async def optimize(self) -> bool: ...
    async def retrieve(self, ids: Sequence[str], fields: Sequence[str]) -> list[qm.Record]: ...
    async def upsert(self, points: Sequence[qm.PointStruct], *, collection: str | None = None) -> None: ...
    async def set_payloads(self, payloads: Mapping[str, dict[str, Any]], *, collection: str | None = None) -> None: ...
    async def delete_ids(self, ids: Iterable[str], *, collection: str | None = None) -> None: ...
    async def delete_where(self, where: Filter, *, collection: str | None = None) -> None: ...
    async def set_payload_where(
        self, where: Filter, payload: dict[str, Any], *, collection: str | None = None
    ) -> None: ...
    async def counts_by(
        self, key: str, limit: int = 100_000, where: Filter | None = None, *, by_facet: bool = False
    ) -> dict[str, int]: ...
    async def stamp_counts(self, repo_path: str) -> dict[str, int] | None: ...
    async def count(self, where: Filter | None = None) -> int: ...
    async def close(self) -> None: ...


def open_store(settings: QdrantSettings, wrap_client: ClientWrap | None = None, *, serving: bool = False) -> Store:
    """The Qdrant server at `url`; else the embedded engine `engine` at `path` (`edge`, or qdrant-client's `local`).

    `wrap_client` may stand in for the qdrant-client the first two use (a benchmark times its calls). A
    `serving` Edge store builds its dense index in the background (`app.store.edge_index`); a server
    indexes itself.
    """
    if settings.url or settings.engine == "local":
        client = open_client(settings)
        return VectorStore(
            wrap_client(client) if wrap_client else client, settings.collection, server=bool(settings.url)
        )
    threshold = settings.index_build.threshold if serving else 0
    policy = BuildPolicy(threshold=threshold, journal_max=settings.index_build.journal_max)
    return EdgeStore(settings.path, settings.collection, builds=policy, payload_cache=settings.payload_cache)


ClientWrap = Callable[[AsyncQdrantClient], AsyncQdrantClient]
