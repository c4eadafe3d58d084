"""The fixture project indexed into embedded in-memory Qdrant, in one of the two search modes.

lexical: no embedding endpoint, so search is BM25 over the sparse vectors plus the name/route rerank.
hybrid: dense vectors from `FakeEmbeddingServer` over real loopback HTTP, fused with the lexical ones.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Final, Literal

from app.core.settings import EmbeddingSettings, QdrantSettings, Settings
from app.search.service import SearchService
from app.sync.local_index import index_directory
from entry.deps import open_deps
from testkit.fake_embedder import FakeEmbeddingServer

Mode = Literal["lexical", "hybrid"]
MODES: Final[tuple[Mode, ...]] = ("lexical", "hybrid")

FIXTURE_ROOT: Final = Path(__file__).resolve().parents[1] / "fixtures" / "java" / "shop"
REPO_PATH: Final = "shop"


def quality_settings(embedding_url: str | None, model: str | None = None) -> Settings:
    """In-memory Qdrant; dense vectors only when an embedding endpoint is given (else lexical-only, explicitly)."""
    embedding = EmbeddingSettings(base_url=embedding_url, provider=None if embedding_url else "none")
    if model:
        embedding = embedding.model_copy(update={"model": model})
    return Settings(qdrant=QdrantSettings(path=":memory:"), embedding=embedding)


EmbeddingMode = Literal["lexical", "embedded", "endpoint"]
EMBEDDING_MODES: Final[tuple[EmbeddingMode, ...]] = ("lexical", "embedded", "endpoint")


def mode_settings(mode: EmbeddingMode, embedding_url: str | None = None, model: str | None = None) -> Settings:
    """The settings a quality run indexes and searches with; only the embedding configuration differs.

    lexical: no dense vectors. embedded: the project's default embedding configuration, whatever
    `Settings()` holds (the in-process model). endpoint: an OpenAI-compatible endpoint and model.
    """
    match mode:
        case "lexical":
            return quality_settings(None)
        case "embedded":
            return Settings(qdrant=QdrantSettings(path=":memory:"))
        case "endpoint":
            if not embedding_url:
                raise ValueError("the endpoint mode needs an embedding URL")
            return quality_settings(embedding_url, model)


@asynccontextmanager
async def indexed_search(
    mode: Mode, *, embedding_url: str | None = None, model: str | None = None
) -> AsyncIterator[SearchService]:
    """Index the `shop` fixture once and yield the search service over it (a real endpoint if given)."""
    with ExitStack() as stack:
        url = embedding_url
        if url is None and mode == "hybrid":
            url = stack.enter_context(FakeEmbeddingServer()).base_url
        async with open_deps(quality_settings(url, model)) as deps:
            await index_directory(deps, FIXTURE_ROOT, REPO_PATH)
            yield deps.search
