"""The embedded engines the contract cases run against: Qdrant Edge (the default) and qdrant-client's
local mode (the stand-in for a Qdrant server's API, which is not available here)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from app.core.settings import QdrantSettings
from app.store.embeddings import Embedder
from app.store.engines import Store, open_store
from app.store.indexing import Indexer
from pipeline.chunking import chunk_source
from pipeline.model import ChunkerConfig, SourceContext

EMBEDDED_ENGINES = ("edge", "local")


def memory_store(engine: str, alias: str = "java_code") -> Store:
    """A store of `engine` that keeps nothing once closed."""
    return open_store(QdrantSettings(path=":memory:", engine=engine, collection=alias))  # type: ignore[arg-type]


async def write_sources(
    store: Store, repo: str, sources: Iterable[tuple[str, str]], embedder: Embedder | None = None
) -> None:
    """Chunk these `(path, Java source)` files as `repo`'s and write them to `store`, indexed at a fixed time."""
    config = ChunkerConfig()
    results = [chunk_source(text.encode(), path, SourceContext(repo_path=repo), config) for path, text in sources]
    await Indexer(store, embedder, lambda: datetime(2025, 1, 1, tzinfo=UTC)).write(repo, results)
