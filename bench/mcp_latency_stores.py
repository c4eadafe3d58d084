"""The stores of `bench.mcp_latency`: the lexical JDK index (reused across runs by its manifest), its
in-memory dense copy, and the in-process embedder answering from vectors prepared before the clock starts.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, Final

from app.auth.access import LOCAL
from bench.common import PROGRESS_EVERY_S, cpu_seconds, load_avg, log

LEXICAL_ALIAS: Final = "javakb_mcp_latency"


DENSE_ALIAS: Final = "javakb_mcp_latency_dense"


DENSE_DIM: Final = 384  # all-MiniLM-L6-v2's size


DENSE_MODEL: Final = "stub-fixed-384"


REPO_GROUP: Final = "openjdk/jdk17/"


MANIFEST: Final = "manifest.json"


MANIFEST_VERSION: Final = 1


COPY_PAGE: Final = 10_000


UPSERT_BATCH: Final = 1_024


# The order modules are added in until --min-chunks is reached; then any other module, by name.
PREFERRED_MODULES: Final = (
    "java.base",
    "java.desktop",
    "java.xml",
    "jdk.compiler",
    "jdk.hotspot.agent",
    "java.management",
    "jdk.jfr",
    "jdk.internal.le",
    "jdk.jshell",
    "jdk.javadoc",
)


class FixedVectorEmbedder:
    """An in-process `Embedder` answering from vectors computed before the clock starts (no endpoint, no model).

    `prepare()` computes a deterministic unit vector per text (seeded by its SHA-256); `embed()` only looks them
    up, so the time spent in it (recorded) is a dict lookup. An unprepared text gets the fallback vector.
    """

    def __init__(self, dim: int) -> None:
        self.model = DENSE_MODEL
        self.dim = dim
        self.vectors: dict[str, list[float]] = {}
        self.fallback = self._vector("")
        self.calls = 0
        self.misses = 0
        self.seconds = 0.0

    def _vector(self, text: str) -> list[float]:
        import numpy as np

        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
        vector = np.random.default_rng(seed).standard_normal(self.dim)
        unit: list[float] = (vector / np.linalg.norm(vector)).tolist()
        return unit

    def prepare(self, texts: Sequence[str]) -> None:
        for text in texts:
            if text not in self.vectors:
                self.vectors[text] = self._vector(text)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        t0 = time.perf_counter()
        out = []
        for text in texts:
            vector = self.vectors.get(text)
            if vector is None:
                self.misses += 1
                vector = self.fallback
            out.append(vector)
        self.calls += 1
        self.seconds += time.perf_counter() - t0
        return out

    async def embed_query(self, text: str) -> list[float]:
        return (await self.embed([text]))[0]

    async def dimension(self) -> int:
        return self.dim


def lexical_settings(store_dir: Path) -> Any:
    from app.core.settings import ChunkingSettings, EmbeddingSettings, QdrantSettings, Settings

    return Settings(
        chunking=ChunkingSettings(include=("**/*.java",), exclude=()),
        embedding=EmbeddingSettings(provider="none"),
        qdrant=QdrantSettings(path=str(store_dir / "lexical"), collection=LEXICAL_ALIAS),
    )


def module_order(cache_dir: Path, first: Sequence[str] = PREFERRED_MODULES) -> list[str]:
    present = sorted(p.name for p in cache_dir.iterdir() if p.is_dir() and any(p.rglob("*.java")))
    return [m for m in first if m in present] + [m for m in present if m not in first]


def read_manifest(store_dir: Path) -> dict[str, Any]:
    try:
        manifest: dict[str, Any] = json.loads((store_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"version": MANIFEST_VERSION, "modules": {}}
    if manifest.get("version") != MANIFEST_VERSION:
        return {"version": MANIFEST_VERSION, "modules": {}}
    return manifest


def write_manifest(store_dir: Path, manifest: dict[str, Any]) -> None:
    path = store_dir / MANIFEST
    path.with_suffix(".tmp").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    path.with_suffix(".tmp").replace(path)


async def stored_counts(deps: Any) -> dict[str, int]:
    from app.core.errors import StorageError

    try:
        counts: dict[str, int] = await deps.search.repositories(LOCAL)
    except StorageError:
        return {}
    return counts


async def ensure_lexical(
    deps: Any, store_dir: Path, cache_dir: Path, min_chunks: int, jobs: int, first: Sequence[str]
) -> dict[str, Any]:
    """Index modules until >= min_chunks are stored; reuse the modules the manifest and the store agree on."""
    from app.sync.local_index import index_directory

    manifest = read_manifest(store_dir)
    counts = await stored_counts(deps)
    done: dict[str, Any] = manifest["modules"]
    reused = [m for m, row in done.items() if counts.get(REPO_GROUP + m) == row["chunks"]]
    total = sum(done[m]["chunks"] for m in reused)
    indexed_now: list[str] = []
    await deps.store.ensure(await deps.index_model())
    order = module_order(cache_dir, first)
    for module in order:
        if total >= min_chunks:
            break
        if module in reused:
            continue
        row = await _index_module(deps, index_directory, cache_dir / module, module, jobs)
        done[module] = row
        total = sum(done[m]["chunks"] for m in [*reused, *indexed_now, module])
        indexed_now.append(module)
        write_manifest(store_dir, manifest)
    modules = [m for m in order if m in reused or m in indexed_now]
    return {
        "modules": modules,
        "reused_modules": [m for m in modules if m in reused],
        "indexed_now": indexed_now,
        "chunks": sum(done[m]["chunks"] for m in modules),
        "files": sum(done[m]["files"] for m in modules),
        "index_seconds_total": sum(done[m]["seconds"] for m in modules),
        "per_module": {m: done[m] for m in modules},
    }


async def _index_module(deps: Any, index_directory: Any, root: Path, module: str, jobs: int) -> dict[str, Any]:
    log(f"indexing {module} ({root}) ...")
    t0, cpu0, load0 = time.perf_counter(), cpu_seconds(), load_avg()
    last = [t0]

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] >= PROGRESS_EVERY_S or done >= total:
            last[0] = now
            log(f"  [{module}] {done:,}/{total:,} files, {now - t0:7.1f} s")

    run = await index_directory(deps, root, REPO_GROUP + module, jobs=jobs, progress=progress)
    counts = run.counts
    row = {
        "files": counts.files,
        "chunks": counts.embedded + counts.reused,
        "skipped": counts.skipped,
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": cpu_seconds() - cpu0,
        "load_average_start": load0,
        "load_average_end": load_avg(),
        "jobs": jobs,
    }
    log(f"  [{module}] {row['chunks']:,} chunks in {row['seconds']:.1f} s")
    return row


@contextlib.asynccontextmanager
async def dense_store(timed: Callable[[Any], Any]) -> AsyncIterator[Any]:
    """The dense copy's store: the embedded engine (`JAVAKB_QDRANT__ENGINE`) in memory (a persistent local mode
    commits to SQLite once per point); on local mode its qdrant-client is seen through `timed`."""
    from app.core.settings import QdrantSettings
    from app.store.engines import open_store

    store = open_store(QdrantSettings(path=":memory:", collection=DENSE_ALIAS), timed)
    try:
        yield store
    finally:
        await store.close()


async def build_dense(lexical: Any, target: Any, seed: int) -> dict[str, Any]:
    """Fill `target` with the lexical store's points plus a seeded random dense vector each."""
    from app.store.vectors import IndexModel

    expected = await lexical.count()
    log(f"building the dense copy in memory ({expected:,} points, {DENSE_DIM} dimensions) ...")
    t0, cpu0 = time.perf_counter(), cpu_seconds()
    await target.ensure(IndexModel(embedding_model=DENSE_MODEL, dimension=DENSE_DIM))
    copied = await _copy_points(lexical, target, seed)
    record = {
        "points": await target.count(),
        "copied": copied,
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": cpu_seconds() - cpu0,
        "dimension": DENSE_DIM,
        "model": DENSE_MODEL,
        "seed": seed,
    }
    log(f"  dense copy: {record['points']:,} points in {record['seconds']:.1f} s")
    return record


async def _copy_points(lexical: Any, target: Any, seed: int) -> int:
    import numpy as np
    from qdrant_client import models as qm

    from app.store.vectors import DENSE, LEXICAL

    rng = np.random.default_rng(seed)
    batch: list[qm.PointStruct] = []
    copied = 0
    t0 = last = time.perf_counter()
    async for record in lexical.scroll(qm.Filter(), True, page=COPY_PAGE, with_vectors=True):
        vectors = record.vector if isinstance(record.vector, dict) else {}
        dense = rng.standard_normal(DENSE_DIM, dtype=np.float32).tolist()
        batch.append(
            qm.PointStruct(id=record.id, payload=record.payload, vector={LEXICAL: vectors[LEXICAL], DENSE: dense})
        )
        if len(batch) >= UPSERT_BATCH:
            await target.upsert(batch)
            copied += len(batch)
            batch = []
            if time.perf_counter() - last >= PROGRESS_EVERY_S:
                last = time.perf_counter()
                log(f"  [dense copy] {copied:,} points, {last - t0:7.1f} s")
    if batch:
        await target.upsert(batch)
        copied += len(batch)
    return copied
