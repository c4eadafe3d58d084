"""Index one benchmark repository with our pipeline (or the reference BM25) and ask all its queries.

Our search is the production path of `tests/quality/real`: `open_deps` over in-memory Qdrant and
`index_directory` of the benchmark root, one collection per repository (as semble indexes each root
alone), then `SearchService.search`, the call behind the MCP `semantic_search` and REST search. The
mode only chooses the `Settings`' embedding configuration (`settings_for`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from app.auth.access import LOCAL
from app.core.settings import Settings
from app.search.hits import Hit
from tests.quality.corpus import EMBEDDING_MODES, EmbeddingMode, mode_settings
from tests.quality.real.corpus import indexed_repos
from tests.quality.semble import bm25
from tests.quality.semble.annotated import Query
from tests.quality.semble.metrics import K, Located, chunk_ndcg, distinct_files, file_ndcg
from tests.quality.semble.spec import SUFFIXES, Language, RepoSpec

Mode = EmbeddingMode
MODES: Final = EMBEDDING_MODES
FILE_DEPTH: Final = 50
"""Results asked for the file protocol, enough for `K` distinct files in practice."""


def include(language: Language) -> tuple[str, ...]:
    """Every file of the repository's language under the benchmark root: our default scope
    (`**/src/main/java/**/*.java`, `**/src/main/kotlin/**/*.kt`) cannot match below a root that is itself inside
    `src/main/java`, nor a Kotlin multiplatform root such as `common/src`; the default excludes (tests,
    generated, build output) still apply."""
    return (f"**/*{SUFFIXES[language]}",)


def settings_for(
    mode: Mode, embedding_url: str | None = None, model: str | None = None, language: Language = "java"
) -> Settings:
    """The settings a mode indexes and searches with (`mode_settings`), over every file of `language`."""
    return scoped(mode_settings(mode, embedding_url, model), language)


def scoped(settings: Settings, language: Language) -> Settings:
    """`settings` indexing every file of `language` under the root (`include`), nothing else changed."""
    chunking = settings.chunking.model_copy(update={"include": include(language)})
    return settings.model_copy(update={"chunking": chunking})


@dataclass(frozen=True, slots=True)
class Outcome:
    """One query's scores by both protocols, and the first files it returned."""

    query: Query
    chunk: float
    file: float
    top_files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RepoRun:
    """One system's run over one repository."""

    system: str
    repo: str
    commit: str
    outcomes: tuple[Outcome, ...]
    units: int
    index_s: float
    latencies_ms: tuple[float, ...]

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.latencies_ms) if self.latencies_ms else 0.0


def score(query: Query, chunk_list: Sequence[Located], file_list: Sequence[Located]) -> Outcome:
    return Outcome(
        query=query,
        chunk=chunk_ndcg(chunk_list, query.targets),
        file=file_ndcg(file_list, query.targets),
        top_files=tuple(distinct_files(file_list)[:3]),
    )


def located(hit: Hit, prefix: str) -> Located:
    """A hit's place relative to the checkout root (our paths are relative to the indexed folder)."""
    chunk = hit.chunk
    path = f"{prefix}/{chunk.file_path}" if prefix else chunk.file_path
    return Located(path, chunk.line_start, chunk.line_end)


async def run_ours(
    spec: RepoSpec, checkout: Path, queries: Sequence[Query], settings: Settings, system: str
) -> RepoRun:
    root = checkout / spec.benchmark_root
    async with indexed_repos([(spec.pin, root)], settings=scoped(settings, spec.language)) as indexed:
        search = indexed.search
        units = (await search.repositories(LOCAL)).get(spec.pin.repo_path, 0)
        outcomes, latencies = [], []
        for query in queries:
            started = time.perf_counter()
            top = await search.search(LOCAL, query.text, limit=K)
            latencies.append((time.perf_counter() - started) * 1000)
            deep = await search.search(LOCAL, query.text, limit=FILE_DEPTH)
            prefix = spec.benchmark_root
            outcomes.append(score(query, [located(h, prefix) for h in top], [located(h, prefix) for h in deep]))
    seconds = indexed.seconds[spec.pin.repo_path]
    return RepoRun(system, spec.name, spec.pin.commit, tuple(outcomes), units, seconds, tuple(latencies))


def run_bm25(spec: RepoSpec, checkout: Path, queries: Sequence[Query]) -> RepoRun:
    started = time.perf_counter()
    index = bm25.index_root(checkout / spec.benchmark_root, spec.benchmark_root)
    seconds = time.perf_counter() - started
    outcomes, latencies = [], []
    for query in queries:
        started = time.perf_counter()
        results = index.search(query.text, FILE_DEPTH)
        latencies.append((time.perf_counter() - started) * 1000)
        outcomes.append(score(query, results[:K], results))
    return RepoRun(
        "BM25 plain windows", spec.name, spec.pin.commit, tuple(outcomes), len(index.located), seconds,
        tuple(latencies),
    )  # fmt: skip
