"""Every pinned repository indexed into ONE embedded collection, through the production code path.

The same path as `tests/quality/corpus.py` (and `javakb index`): `open_deps` over in-memory Qdrant,
then `index_directory` once per checkout, each under its `owner/name`. Lexical-only without an
embedding endpoint; hybrid (dense + lexical) with one.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from app.core.settings import Settings
from app.runtime import Deps
from app.search.service import SearchService
from app.sync.local_index import index_directory
from entry.deps import open_deps
from tests.quality.corpus import quality_settings
from tests.quality.real.repos import Pin


@dataclass(slots=True)
class Indexed:
    """The service dependencies over the collection, and how long indexing took per repository."""

    deps: Deps
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def search(self) -> SearchService:
        return self.deps.search


@asynccontextmanager
async def indexed_repos(
    checkouts: Sequence[tuple[Pin, Path]],
    *,
    embedding_url: str | None = None,
    model: str | None = None,
    settings: Settings | None = None,
) -> AsyncIterator[Indexed]:
    """Index every checkout into one in-memory collection and yield the search service over it.

    `settings` replaces the in-memory settings made from `embedding_url` and `model` (a caller choosing
    its own embedding configuration, e.g. the semble benchmark's modes).
    """
    async with open_deps(settings or quality_settings(embedding_url, model)) as deps:
        indexed = Indexed(deps)
        for pin, root in checkouts:
            started = time.perf_counter()
            await index_directory(deps, root, pin.repo_path)
            indexed.seconds[pin.repo_path] = time.perf_counter() - started
        yield indexed
