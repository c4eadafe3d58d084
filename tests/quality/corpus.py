"""The fixture project indexed into embedded in-memory Qdrant, in one of the two search modes.

lexical: no embedding endpoint, so search is BM25 over the sparse vectors plus the name/route rerank.
hybrid: dense vectors from `FakeEmbeddingServer` over real loopback HTTP, fused with the lexical ones.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Final, Literal

from app.deps import open_deps
from app.local_index import index_directory
from app.search import SearchService
from app.settings import EmbeddingSettings, QdrantSettings, Settings
from tests.support.fake_embedder import FakeEmbeddingServer

Mode = Literal["lexical", "hybrid"]
MODES: Final[tuple[Mode, ...]] = ("lexical", "hybrid")

FIXTURE_ROOT: Final = Path(__file__).resolve().parents[1] / "fixtures" / "java" / "shop"
REPO_PATH: Final = "shop"


def quality_settings(embedding_url: str | None) -> Settings:
    """In-memory Qdrant; dense vectors only when an embedding endpoint is given."""
    return Settings(qdrant=QdrantSettings(path=":memory:"), embedding=EmbeddingSettings(base_url=embedding_url))


@asynccontextmanager
async def indexed_search(mode: Mode) -> AsyncIterator[SearchService]:
    """Index the `shop` fixture once and yield the search service over it."""
    with ExitStack() as stack:
        url = stack.enter_context(FakeEmbeddingServer()).base_url if mode == "hybrid" else None
        async with open_deps(quality_settings(url)) as deps:
            await index_directory(deps, FIXTURE_ROOT, REPO_PATH)
            yield deps.search
