"""Benchmark MCP tool-call latency on at least 100k indexed chunks (the JDK's own sources), no embedding model.

Run from the repository root:

    .venv/bin/python -m bench.mcp_latency                                   # >= 100k chunks, 300 calls
    .venv/bin/python -m bench.mcp_latency --json bench/results/mcp_latency.json
    .venv/bin/python -m bench.mcp_latency --min-chunks 5000 --calls 60      # a quick check

1. Index: whole JDK modules (`java.base`, `java.desktop`, `java.xml`, `jdk.compiler`, ...; every `.java` file in
   scope, one repository `openjdk/jdk17/<module>` each) are indexed with `index_directory`, lexical-only, into an
   embedded Qdrant (local mode) under `--qdrant-path`, until at least `--min-chunks` chunks are stored. A manifest
   records what was indexed; a later run reuses the store when the manifest matches it (re-runs are cheap).
2. Dense copy (unless `--no-dense`): an in-memory embedded Qdrant gets the same points (payload and lexical
   vector) plus a seeded random 384-dimensional dense vector each, recorded as the model of `FixedVectorEmbedder`,
   an in-process stub whose `embed()` returns vectors computed before the clock starts. So the hybrid (dense +
   lexical, RRF) path of `semantic_search` runs for real while the embedding endpoint's own time is excluded.
   Built by copying the lexical store on every run, not by re-indexing (a persistent local store commits to
   SQLite once per point, which would make the copy take minutes).
3. Calls: every tool through `fastmcp.Client(create_server(lambda: deps))` (in-memory transport, the whole MCP
   request/response path but no HTTP), with arguments drawn from the index with a fixed seed: natural-language
   and identifier `semantic_search`, `get_symbol`, `find_by_annotation` (capped by `max_chars`), `get_callers`,
   `get_callees`, `find_endpoint`, `find_injections`, `find_implementations`, `get_file_outline`, `list_repos`.
   `--calls` are shared out over the tools (semantic_search x3) and run interleaved in a seeded order after one
   untimed warm-up call per tool; a tool stops once it has spent `--tool-budget` seconds (its count says so).
   The dense run repeats only `semantic_search`: no other tool touches the embedder or the dense vectors.
4. HTTP constant: `tools/list` and `list_repos` over in-memory and over real HTTP (uvicorn on loopback,
   streamable HTTP, stateless, no auth) in this process; the difference is what the HTTP transport adds per call.
5. Where the time goes: per-call building blocks timed alone (the facet every tool runs to check the repository,
   one scroll page), and a cProfile of the median and the slowest call of every tool whose p99 exceeds
   `--slow-ms`.

Qdrant embedded (local) mode keeps every point in memory, answers by brute force and ignores payload indexes (it
warns above 20,000 points; suppressed here). The numbers are OUR overhead plus local mode's, not a Qdrant
server's. Exit status: 0 when all went through, 1 when a call failed unexpectedly, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import dataclasses
import gc
import hashlib
import json
import os
import platform
import pstats
import random
import socket
import sys
import time
import warnings
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from app.access import LOCAL
from bench.chunk_jdk import DEFAULT_CACHE_DIR, DEFAULT_SRC_ZIP, ensure_extracted
from bench.index_jdk import (
    CATALOG_PAGE,
    LOCAL_MODE_THRESHOLD,
    LOCAL_MODE_WARNING,
    Method,
    cpu_seconds,
    kb_to_mb,
    latency_summary,
    make_queries,
    methods_of,
    percentile,
    status_kb,
    version,
)
from pipeline.model import TYPE_SYMBOLS

DEFAULT_STORE: Final = Path("/tmp/javakb-bench/mcp-latency")
LEXICAL_ALIAS: Final = "javakb_mcp_latency"
DENSE_ALIAS: Final = "javakb_mcp_latency_dense"
DENSE_DIM: Final = 384  # all-MiniLM-L6-v2's size
DENSE_MODEL: Final = "stub-fixed-384"
REPO_GROUP: Final = "openjdk/jdk17/"
SEED: Final = 20240917
MANIFEST: Final = "manifest.json"
MANIFEST_VERSION: Final = 1
COPY_PAGE: Final = 10_000
UPSERT_BATCH: Final = 1_024
PROGRESS_EVERY_S: Final = 15.0
ANNOTATION_BUDGET: Final = 4_000  # max_chars for find_by_annotation: whole results are cut beyond it
COMPONENT_REPEATS: Final = 5
HTTP_REPEATS: Final = 30
HTTP_TOOL_REPEATS: Final = 8
PROFILE_TOP: Final = 14
MASKED_ERROR: Final = "Error calling tool"  # an exception other than ToolError, masked by the server
SLOW_SHOWN_MS: Final = 5_000.0  # slowest calls listed in the text report
PROFILE_MAX_S: Final = 15.0  # a call slower than this is not profiled again (cProfile roughly doubles it)

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
# Share of --calls per tool (semantic_search is the one agents call most).
TOOL_WEIGHTS: Final = {
    "semantic_search": 3,
    "get_symbol": 1,
    "find_by_annotation": 1,
    "get_callers": 1,
    "get_callees": 1,
    "find_endpoint": 1,
    "find_injections": 1,
    "find_implementations": 1,
    "get_file_outline": 1,
    "list_repos": 1,
}
COMMON_ANNOTATIONS: Final = ("Override", "Deprecated", "FunctionalInterface", "SuppressWarnings", "SafeVarargs")
COMMON_SUPERTYPES: Final = (
    "Runnable",
    "Comparable",
    "List",
    "Map",
    "Iterator",
    "Serializable",
    "Cloneable",
    "AutoCloseable",
    "java.util.Collection",
    "java.lang.Thread",
)
COMMON_INJECTED: Final = ("Logger", "ExecutorService", "ClassLoader", "Executor", "DataSource", "EventListener")
# The JDK has (almost) no Spring/JAX-RS routes: these measure the lookup's cost when nothing matches.
ENDPOINT_PATHS: Final = (
    ("/", None),
    ("/api/owners/42", "GET"),
    ("/api/users/7/orders", "POST"),
    ("/health", None),
    ("/index.html", "GET"),
    ("/jmx/beans/java.lang:type=Memory", None),
)
CATALOG_FIELDS: Final = (
    "repo_path",
    "file_path",
    "name",
    "symbol_type",
    "enclosing_type",
    "qualified_name",
    "annotation_names",
    "implements",
    "extends",
    "injects",
    "calls",
    "http_path",
    "http_method",
)


# --------------------------------------------------------------------------------------------------- helpers


def rss_mb() -> float | None:
    return kb_to_mb(status_kb("VmRSS"))


def load_avg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


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

    async def dimension(self) -> int:
        return self.dim


# --------------------------------------------------------------------------------------------------- the stores


def lexical_settings(store_dir: Path) -> Any:
    from app.settings import ChunkingSettings, EmbeddingSettings, QdrantSettings, Settings

    return Settings(
        chunking=ChunkingSettings(include=("**/*.java",), exclude=()),
        embedding=EmbeddingSettings(base_url=None),
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
    from app.errors import StorageError

    try:
        counts: dict[str, int] = await deps.search.repositories(LOCAL)
    except StorageError:
        return {}
    return counts


async def ensure_lexical(
    deps: Any, store_dir: Path, cache_dir: Path, min_chunks: int, jobs: int, first: Sequence[str]
) -> dict[str, Any]:
    """Index modules until >= min_chunks are stored; reuse the modules the manifest and the store agree on."""
    from app.local_index import index_directory

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
    _log(f"indexing {module} ({root}) ...")
    t0, cpu0, load0 = time.perf_counter(), cpu_seconds(), load_avg()
    last = [t0]

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] >= PROGRESS_EVERY_S or done >= total:
            last[0] = now
            _log(f"  [{module}] {done:,}/{total:,} files, {now - t0:7.1f} s")

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
    _log(f"  [{module}] {row['chunks']:,} chunks in {row['seconds']:.1f} s")
    return row


@contextlib.asynccontextmanager
async def dense_store() -> AsyncIterator[Any]:
    """The dense copy's store: embedded Qdrant in memory (a persistent one commits to SQLite once per point)."""
    from app.settings import QdrantSettings
    from app.vectors import VectorStore, open_client

    store = VectorStore(open_client(QdrantSettings(path=":memory:", collection=DENSE_ALIAS)), DENSE_ALIAS)
    try:
        yield store
    finally:
        await store.close()


async def build_dense(lexical: Any, target: Any, seed: int) -> dict[str, Any]:
    """Fill `target` with the lexical store's points plus a seeded random dense vector each."""
    from app.vectors import IndexModel

    expected = await lexical.count()
    _log(f"building the dense copy in memory ({expected:,} points, {DENSE_DIM} dimensions) ...")
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
    _log(f"  dense copy: {record['points']:,} points in {record['seconds']:.1f} s")
    return record


async def _copy_points(lexical: Any, target: Any, seed: int) -> int:
    import numpy as np
    from qdrant_client import models as qm

    from app.vectors import DENSE, LEXICAL

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
                _log(f"  [dense copy] {copied:,} points, {last - t0:7.1f} s")
    if batch:
        await target.upsert(batch)
        copied += len(batch)
    return copied


# --------------------------------------------------------------------------------------------------- the calls


@dataclass(frozen=True, slots=True)
class Call:
    tool: str
    kind: str  # a sub-kind within the tool (natural, identifier, common, ...)
    args: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "kind": self.kind, "args": self.args}


@dataclass(slots=True)
class Catalog:
    """What the arguments are drawn from: a few payload fields of every point."""

    methods: list[Method]
    called_methods: list[Method]  # methods whose body calls something
    types: list[tuple[str, str]]  # (simple, qualified) of every type
    files: list[tuple[str, str]]  # (repo, path)
    annotations: list[str]  # distinct annotation simple names
    supertypes: list[str]  # distinct implements/extends names
    injected: list[str]  # distinct injects names
    routes: list[tuple[str, str | None]]  # (path, method)
    points: int = 0
    seconds: float = 0.0
    annotation_counts: dict[str, int] = field(default_factory=dict)


async def load_catalog(deps: Any) -> Catalog:
    from qdrant_client import models as qm

    t0 = time.perf_counter()
    # One page: local mode sorts every id and filters every point again for each page of a scroll.
    rows = [
        dict(r.payload or {}) async for r in deps.store.scroll(qm.Filter(), list(CATALOG_FIELDS), page=CATALOG_PAGE)
    ]
    seconds = time.perf_counter() - t0
    annotations: Counter[str] = Counter()
    supertypes: set[str] = set()
    injected: set[str] = set()
    routes: set[tuple[str, str | None]] = set()
    types: set[tuple[str, str]] = set()
    files: set[tuple[str, str]] = set()
    called: set[tuple[str, str, str]] = set()
    for row in rows:
        annotations.update(row.get("annotation_names") or [])
        supertypes.update(row.get("implements") or [])
        supertypes.update(row.get("extends") or [])
        injected.update(row.get("injects") or [])
        for path in row.get("http_path") or []:
            routes.add((str(path), (row.get("http_method") or [None])[0]))
        files.add((str(row.get("repo_path")), str(row.get("file_path"))))
        if row.get("symbol_type") in TYPE_SYMBOLS:
            types.add((str(row.get("name")), str(row.get("qualified_name"))))
        enclosing = str(row.get("enclosing_type") or "")
        if row.get("symbol_type") == "method" and row.get("calls") and enclosing:
            called.add((enclosing.rsplit(".", 1)[-1], str(row.get("name")), str(row.get("file_path"))))
    methods = methods_of(rows)
    return Catalog(
        methods=methods,
        called_methods=[m for m in methods if (m.type_name, m.name, m.file_path) in called],
        types=sorted(types),
        files=sorted(files),
        annotations=sorted(annotations),
        supertypes=sorted(supertypes),
        injected=sorted(injected),
        routes=sorted(routes, key=lambda r: (r[0], r[1] or "")),
        points=len(rows),
        seconds=seconds,
        annotation_counts=dict(annotations.most_common(12)),
    )


def call_counts(total: int) -> dict[str, int]:
    weight = sum(TOOL_WEIGHTS.values())
    return {tool: max(1, round(total * w / weight)) for tool, w in TOOL_WEIGHTS.items()}


def _semantic_calls(catalog: Catalog, n: int, seed: int) -> list[Call]:
    calls: list[Call] = []
    for q in make_queries(catalog.methods, n, seed):
        args: dict[str, Any] = {"query": q.text}
        if q.symbol_type:
            args["symbol_type"] = q.symbol_type
        if q.path_prefix:
            args["path_prefix"] = q.path_prefix
        kind = {"question": "natural", "identifier": "identifier"}.get(q.kind, "natural+filter")
        calls.append(Call("semantic_search", kind, args))
    return calls


def _symbol_calls(catalog: Catalog, n: int, rng: random.Random) -> list[Call]:
    calls: list[Call] = []
    for i in range(n):
        if i % 4 in (0, 1):
            calls.append(Call("get_symbol", "Type.method", {"name": rng.choice(catalog.methods).dotted}))
        elif i % 4 == 2:
            calls.append(Call("get_symbol", "qualified type", {"name": rng.choice(catalog.types)[1]}))
        else:
            calls.append(Call("get_symbol", "simple type", {"name": rng.choice(catalog.types)[0]}))
    return calls


def _annotation_calls(catalog: Catalog, n: int, rng: random.Random) -> list[Call]:
    calls: list[Call] = []
    for i in range(n):
        if i % 2 == 0 or not catalog.annotations:
            name, kind = COMMON_ANNOTATIONS[(i // 2) % len(COMMON_ANNOTATIONS)], "common"
        else:
            name, kind = rng.choice(catalog.annotations), "any in index"
        calls.append(Call("find_by_annotation", kind, {"annotation": name, "max_chars": ANNOTATION_BUDGET}))
    return calls


def _caller_calls(catalog: Catalog, n: int, rng: random.Random) -> list[Call]:
    calls: list[Call] = []
    for i in range(n):
        method = rng.choice(catalog.methods)
        if i % 5 == 4:
            calls.append(Call("get_callers", "bare method", {"name": method.name}))
        else:
            calls.append(Call("get_callers", "Type.method", {"name": method.dotted}))
    return calls


def _supertype_calls(tool: str, common: Sequence[str], found: Sequence[str], n: int, rng: random.Random) -> list[Call]:
    calls: list[Call] = []
    for i in range(n):
        if i % 2 == 0 or not found:
            calls.append(Call(tool, "common", {"type": common[(i // 2) % len(common)]}))
        else:
            calls.append(Call(tool, "any in index", {"type": rng.choice(list(found))}))
    return calls


def _endpoint_calls(catalog: Catalog, n: int, rng: random.Random) -> list[Call]:
    calls: list[Call] = []
    for i in range(n):
        if i % 2 == 1 and catalog.routes:
            path, method = rng.choice(catalog.routes)
            kind = "route in index"
        else:
            path, method = ENDPOINT_PATHS[(i // 2) % len(ENDPOINT_PATHS)]
            kind = "no such route"
        args: dict[str, Any] = {"path": path}
        if method:
            args["http_method"] = method
        calls.append(Call("find_endpoint", kind, args))
    return calls


def plan_calls(catalog: Catalog, total: int, seed: int) -> list[Call]:
    """Every tool's calls, with arguments drawn from the index (fixed seed), in a seeded interleaved order."""
    rng = random.Random(seed)
    counts = call_counts(total)
    injected = [t.rsplit(".", 1)[-1] for t in catalog.injected] or [t for t, _ in catalog.types]
    callees = catalog.called_methods or catalog.methods
    calls = [
        *_semantic_calls(catalog, counts["semantic_search"], seed),
        *_symbol_calls(catalog, counts["get_symbol"], rng),
        *_annotation_calls(catalog, counts["find_by_annotation"], rng),
        *_caller_calls(catalog, counts["get_callers"], rng),
        *[
            Call("get_callees", "Type.method", {"name": rng.choice(callees).dotted})
            for _ in range(counts["get_callees"])
        ],
        *_endpoint_calls(catalog, counts["find_endpoint"], rng),
        *_supertype_calls("find_injections", COMMON_INJECTED, injected, counts["find_injections"], rng),
        *_supertype_calls(
            "find_implementations", COMMON_SUPERTYPES, catalog.supertypes, counts["find_implementations"], rng
        ),
        *[
            Call("get_file_outline", "file in index", {"repo": repo, "path": path})
            for repo, path in rng.sample(catalog.files, min(counts["get_file_outline"], len(catalog.files)))
        ],
        *[Call("list_repos", "all", {}) for _ in range(counts["list_repos"])],
    ]
    rng.shuffle(calls)
    return calls


def warmup_calls(calls: Sequence[Call]) -> list[Call]:
    """One call per tool (the first planned one), run untimed before measuring."""
    first: dict[str, Call] = {}
    for call in calls:
        first.setdefault(call.tool, call)
    return list(first.values())


# --------------------------------------------------------------------------------------------------- measuring


STORE_OPS: Final = ("facet", "scroll", "query_points", "count")


class StoreProbe:
    """Counts and times the Qdrant client calls (facet, scroll pages, queries) made during each tool call."""

    def __init__(self) -> None:
        self.ops: dict[str, list[float]] = {}

    def wrap(self, client: Any) -> None:
        for name in STORE_OPS if client is not None else ():  # Qdrant Edge has no client: no breakdown
            setattr(client, name, self._timed(name, getattr(client, name)))

    def _timed(self, name: str, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                row = self.ops.setdefault(name, [0.0, 0.0])
                row[0] += 1
                row[1] += time.perf_counter() - t0

        return wrapper

    def take(self) -> dict[str, list[float]]:
        ops, self.ops = self.ops, {}
        return ops


@dataclass(slots=True)
class Sample:
    call: Call
    seconds: float
    cpu_seconds: float
    is_error: bool
    chars: int
    message: str
    store: dict[str, list[float]]  # op -> [calls, seconds]


@dataclass(slots=True)
class Run:
    """The samples of one run (lexical or dense) and what was skipped for the time budget."""

    samples: list[Sample] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    load: list[float] = field(default_factory=list)
    seconds: float = 0.0


def _text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def timed_call(client: Any, call: Call, probe: StoreProbe) -> Sample:
    probe.take()
    t0, c0 = time.perf_counter(), time.process_time()
    result = await client.call_tool_mcp(call.tool, call.args)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    text = _text_of(result)
    is_error = bool(result.is_error)
    return Sample(call, seconds, cpu, is_error, len(text), text[:200] if is_error else "", probe.take())


async def measure(client: Any, calls: Sequence[Call], budget_s: float, label: str, probe: StoreProbe) -> Run:
    """Warm-up call per tool, then every call in order, skipping a tool once it has spent its budget."""
    for call in warmup_calls(calls):
        await client.call_tool_mcp(call.tool, call.args)
    gc.collect()
    run = Run()
    spent: dict[str, float] = dict.fromkeys(TOOL_WEIGHTS, 0.0)
    t0 = last = time.perf_counter()
    for i, call in enumerate(calls):
        if spent[call.tool] >= budget_s:
            run.skipped[call.tool] += 1
            continue
        sample = await timed_call(client, call, probe)
        spent[call.tool] += sample.seconds
        run.samples.append(sample)
        run.load.append(os.getloadavg()[0])
        now = time.perf_counter()
        if now - last >= PROGRESS_EVERY_S:
            last = now
            _log(f"  [{label}] {i + 1}/{len(calls)} calls, {now - t0:6.1f} s")
    run.seconds = time.perf_counter() - t0
    return run


def summarize(samples: Sequence[Sample]) -> dict[str, Any]:
    row = latency_summary([s.seconds for s in samples])
    wall, cpu = sum(s.seconds for s in samples), sum(s.cpu_seconds for s in samples)
    row["cpu_per_wall"] = cpu / wall if wall > 0 else None
    row["cpu_p50_ms"] = percentile(sorted(s.cpu_seconds * 1000 for s in samples), 50)
    row["errors"] = sum(s.is_error for s in samples)
    row["output_chars_p50"] = percentile(sorted(float(s.chars) for s in samples), 50)
    n = max(1, len(samples))
    store: dict[str, dict[str, float]] = {}
    for op in STORE_OPS:
        calls = sum(s.store.get(op, [0.0, 0.0])[0] for s in samples)
        if calls:
            seconds = sum(s.store.get(op, [0.0, 0.0])[1] for s in samples)
            store[op] = {"per_call": calls / n, "ms_per_call": seconds * 1000 / n}
    row["store"] = store
    row["store_ms_mean"] = sum(v["ms_per_call"] for v in store.values())
    row["rest_ms_mean"] = row["mean_ms"] - row["store_ms_mean"]
    return row


def run_report(run: Run, planned: Counter[str]) -> dict[str, Any]:
    by_tool: dict[str, list[Sample]] = {}
    for sample in run.samples:
        by_tool.setdefault(sample.call.tool, []).append(sample)
    tools: dict[str, Any] = {}
    for tool in TOOL_WEIGHTS:
        samples = by_tool.get(tool, [])
        if not samples:
            continue
        row = summarize(samples)
        row["planned"] = planned[tool]
        row["skipped_for_budget"] = run.skipped[tool]
        kinds: dict[str, list[Sample]] = {}
        for s in samples:
            kinds.setdefault(s.call.kind, []).append(s)
        row["by_kind"] = {k: summarize(v) for k, v in sorted(kinds.items())}
        row["slowest"] = [
            {
                "ms": s.seconds * 1000,
                "args": s.call.args,
                "kind": s.call.kind,
                "chars": s.chars,
                "store": {op: {"calls": int(v[0]), "ms": v[1] * 1000} for op, v in s.store.items()},
            }
            for s in sorted(samples, key=lambda s: -s.seconds)[:3]
        ]
        row["error_messages"] = sorted({s.message.split("\n")[0][:120] for s in samples if s.is_error})[:5]
        row["unexpected_errors"] = sum(s.is_error and s.message.startswith(MASKED_ERROR) for s in samples)
        tools[tool] = row
    return {
        "tools": tools,
        "overall": summarize(run.samples),
        "wall_seconds": run.seconds,
        "load_average_1min_during": {
            "min": min(run.load, default=0.0),
            "max": max(run.load, default=0.0),
            "mean": sum(run.load) / len(run.load) if run.load else 0.0,
        },
    }


async def _repeat(fn: Callable[[], Awaitable[Any]], times: int) -> dict[str, Any]:
    seconds = []
    for _ in range(times):
        t0 = time.perf_counter()
        await fn()
        seconds.append(time.perf_counter() - t0)
    return latency_summary(seconds)


async def components(deps: Any, catalog: Catalog) -> dict[str, Any]:
    """The building blocks of a tool call, timed alone in local mode."""
    from qdrant_client import models as qm

    store, client = deps.store, deps.store.client
    repo, path = catalog.files[len(catalog.files) // 2]
    one_file = qm.Filter(must=[qm.FieldCondition(key="file_path", match=qm.MatchValue(value=path))])

    async def facet() -> Any:
        return await deps.search.repositories(LOCAL)

    async def scroll_filtered() -> Any:
        return await client.scroll(store.alias, scroll_filter=one_file, limit=1024, with_payload=True)

    async def scroll_unfiltered() -> Any:
        return await client.scroll(store.alias, limit=10, with_payload=False)

    async def count_filtered() -> Any:
        return await client.count(store.alias, count_filter=one_file, exact=True)

    async def outline() -> Any:
        return await deps.search.outline(LOCAL, repo, path)

    return {
        "repositories() = facet on repo_path over every point (each tool's repo check)": await _repeat(
            facet, COMPONENT_REPEATS
        ),
        "scroll 1 page, filter file_path = one file": await _repeat(scroll_filtered, COMPONENT_REPEATS),
        "scroll 10 points, no filter, no payload": await _repeat(scroll_unfiltered, COMPONENT_REPEATS),
        "count, filter file_path = one file": await _repeat(count_filtered, COMPONENT_REPEATS),
        "SearchService.outline (one lookup, no MCP)": await _repeat(outline, COMPONENT_REPEATS),
    }


# --------------------------------------------------------------------------------------------------- profiling

_THIN_FRAMES: Final = (
    "async_qdrant",
    "bench/mcp_latency.py",
    "app/vectors.py:199",
    "<listcomp>",
    "<genexpr>",
    "builtins.",
)
_PROFILE_PATHS: Final = ("qdrant_client", "/app/", "/mcp_server/", "/pipeline/")


def _short(func: tuple[str, int, str]) -> str:
    filename, line, name = func
    for marker in ("site-packages/", "/work/main/"):
        if marker in filename:
            filename = filename.split(marker, 1)[1]
    return f"{filename}:{line}:{name}"


def hot_path(stats: pstats.Stats, tool: str, share: float = 0.1, depth: int = 30) -> list[dict[str, Any]]:
    """From the tool's function down, always into the callee with the most cumulative time; other callees
    above `share` of the tool's time are listed beside each step."""
    stats.calc_callees()
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    callees: dict[Any, dict[Any, Any]] = stats.all_callees  # type: ignore[attr-defined]
    roots = [f for f in raw if f[2] == tool and f[0].endswith("mcp_server/server.py")]
    if not roots:
        return []
    func, total = roots[0], raw[roots[0]][3] or 1e-9
    path = [{"function": _short(func), "cum_s": round(raw[func][3], 3), "share": 1.0, "also": []}]
    seen = {func}
    for _ in range(depth):
        ranked = sorted(callees.get(func, {}).items(), key=lambda kv: -kv[1][3])
        if not ranked or ranked[0][1][3] < share * total or ranked[0][0] in seen:
            break  # (a function met again is recursion: check_filter -> check_must -> check_filter)
        func, (_cc, nc, _tt, ct) = ranked[0]
        seen.add(func)
        also = [
            {"function": _short(f), "cum_s": round(v[3], 3), "share": v[3] / total}
            for f, v in ranked[1:]
            if v[3] >= share * total
        ]
        path.append({"function": _short(func), "calls": nc, "cum_s": round(ct, 3), "share": ct / total, "also": also})
    return path


def profile_rows(profile: cProfile.Profile, tool: str) -> dict[str, Any]:
    stats = pstats.Stats(profile)
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    rows = [(func, nc, tt, ct) for func, (_cc, nc, tt, ct, _callers) in raw.items()]
    total = max((ct for _f, _n, _t, ct in rows), default=0.0)
    by_self = sorted(rows, key=lambda r: -r[2])[:PROFILE_TOP]
    ours = [r for r in rows if any(p in r[0][0] for p in _PROFILE_PATHS)]
    by_cum = sorted(ours, key=lambda r: -r[3])[:PROFILE_TOP]

    def fmt(r: tuple[Any, int, float, float]) -> dict[str, Any]:
        return {"function": _short(r[0]), "calls": r[1], "self_s": round(r[2], 3), "cum_s": round(r[3], 3)}

    return {
        "profiled_total_s": total,
        "hot_path": hot_path(stats, tool),
        "by_self_time": [fmt(r) for r in by_self],
        "by_cumulative": [fmt(r) for r in by_cum],
    }


async def profile_call(client: Any, call: Call) -> dict[str, Any]:
    profile = cProfile.Profile()
    t0 = time.perf_counter()
    profile.enable()
    try:
        await client.call_tool_mcp(call.tool, call.args)
    finally:
        profile.disable()
    wall = time.perf_counter() - t0
    return {"call": call.to_json(), "wall_s_under_profile": wall, **profile_rows(profile, call.tool)}


async def profile_slow(
    client: Any, run: Run, report: dict[str, Any], slow_ms: float, *, slowest: bool = True
) -> dict[str, Any]:
    """cProfile the median and the slowest call of every tool whose p99 exceeds slow_ms.

    A call slower than PROFILE_MAX_S is not profiled: its Qdrant calls (per-sample `store` in the report's
    `slowest`) already say where its time went, and cProfile would about double it.
    """
    out: dict[str, Any] = {}
    for tool, row in report["tools"].items():
        if row["p99_ms"] <= slow_ms:
            continue
        samples = sorted((s for s in run.samples if s.call.tool == tool), key=lambda s: s.seconds)
        picks = {"median": samples[len(samples) // 2], **({"slowest": samples[-1]} if slowest else {})}
        profiles: dict[str, Any] = {}
        for label, sample in picks.items():
            if sample.seconds > PROFILE_MAX_S or (label == "slowest" and sample is picks["median"]):
                continue
            _log(f"  profiling {tool} ({label}, {sample.seconds * 1000:.0f} ms unprofiled) ...")
            profiles[label] = {"unprofiled_ms": sample.seconds * 1000, **await profile_call(client, sample.call)}
        out[tool] = profiles
    return out


# --------------------------------------------------------------------------------------------------- HTTP


async def http_constant(deps: Any) -> dict[str, Any]:
    """tools/list and list_repos over in-memory and over streamable HTTP on loopback (same process), alternating.

    tools/list touches no store, so its difference is the transport's cost; list_repos runs a facet over every
    point, whose own variation can be larger than the transport's.

    (`ping` is not used: the HTTP transport, protocol 2026-07-28 and stateless, answers it with "Method not found".)
    """
    import uvicorn
    from fastmcp import Client

    from mcp_server.server import create_server

    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say TCP; with proto 0 (socket.socket()'s
    # default) Nagle holds back each response's second write until the client's delayed ACK (~40 ms per call).
    # `javakb serve` lets uvicorn bind host:port itself, which gets nodelay.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_server(lambda: deps, unauthenticated=LOCAL).http_app(path="/mcp", stateless_http=True)
    config = uvicorn.Config(app, lifespan="on", log_level="warning", ws="none", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        async with (
            Client(f"http://127.0.0.1:{port}/mcp") as http,
            Client(create_server(lambda: deps, unauthenticated=LOCAL)) as memory,
        ):
            clients = {"in_memory": memory, "http": http}
            ops: dict[str, tuple[Callable[[Any], Awaitable[Any]], int]] = {
                "tools/list": (lambda c: c.list_tools(), HTTP_REPEATS),
                "list_repos": (lambda c: c.call_tool_mcp("list_repos", {}), HTTP_TOOL_REPEATS),
            }
            times: dict[str, dict[str, list[float]]] = {name: {op: [] for op in ops} for name in clients}
            for op, (fn, repeats) in ops.items():
                for client in clients.values():
                    await fn(client)  # warm-up
                for _ in range(repeats):  # alternating, so a change in load hits both transports alike
                    for name, client in clients.items():
                        t0 = time.perf_counter()
                        await fn(client)
                        times[name][op].append(time.perf_counter() - t0)
        result: dict[str, Any] = {
            name: {op: latency_summary(values) for op, values in by_op.items()} for name, by_op in times.items()
        }
        result["added_by_http_p50_ms"] = {
            op: result["http"][op]["p50_ms"] - result["in_memory"][op]["p50_ms"] for op in ops
        }
        return result
    finally:
        server.should_exit = True
        await task
        sock.close()


# --------------------------------------------------------------------------------------------------- main flow


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    store_dir: Path
    cache_dir: Path
    min_chunks: int
    calls: int
    budget_s: float
    slow_ms: float
    jobs: int
    modules: tuple[str, ...]
    seed: int
    index_only: bool
    dense: bool
    http: bool
    profile: bool


async def run_all(opts: Options) -> dict[str, Any]:
    from fastmcp import Client

    from app.deps import open_deps
    from mcp_server.server import create_server

    warnings.filterwarnings("ignore", message=LOCAL_MODE_WARNING, category=UserWarning)
    opts.store_dir.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"load_average_start": load_avg()}
    t0 = time.perf_counter()
    async with open_deps(lexical_settings(opts.store_dir)) as deps:
        result["open"] = {"seconds": time.perf_counter() - t0, "rss_mb": rss_mb()}
        _log(f"store opened in {result['open']['seconds']:.1f} s")
        result["index"] = await ensure_lexical(
            deps, opts.store_dir, opts.cache_dir, opts.min_chunks, opts.jobs, opts.modules
        )
        result["index"]["points_in_store"] = await deps.store.count()
        result["load_average_after_index"] = load_avg()
        if opts.index_only:
            return result
        catalog = await load_catalog(deps)
        result["catalog"] = catalog_report(catalog)
        calls = plan_calls(catalog, opts.calls, opts.seed)
        del catalog.methods[:]  # the rest is small
        result["plan"] = plan_report(calls)
        result["components"] = await components(deps, catalog)
        _log(f"measuring {len(calls)} calls (budget {opts.budget_s:.0f} s per tool) ...")
        async with Client(create_server(lambda: deps, unauthenticated=LOCAL)) as client:
            probe = StoreProbe()
            probe.wrap(getattr(deps.store, "client", None))
            run = await measure(client, calls, opts.budget_s, "lexical", probe)
            result["lexical"] = run_report(run, Counter(c.tool for c in calls))
            if opts.profile:
                result["profiles"] = await profile_slow(client, run, result["lexical"], opts.slow_ms)
        result["rss_mb_after_lexical"] = rss_mb()
        if opts.http:
            _log("HTTP constant ...")
            result["http"] = await http_constant(deps)
        if opts.dense:
            result["dense"] = await dense_run(deps, opts, calls)
    result["load_average_end"] = load_avg()
    result["process_cpu_seconds"] = cpu_seconds()
    return result


async def dense_run(deps: Any, opts: Options, calls: Sequence[Call]) -> dict[str, Any]:
    from fastmcp import Client

    from app.indexing import Indexer
    from app.search import SearchService
    from mcp_server.server import create_server

    semantic = [c for c in calls if c.tool == "semantic_search"]
    stub = FixedVectorEmbedder(DENSE_DIM)
    stub.prepare([c.args["query"] for c in semantic])
    async with dense_store() as store:
        record = await build_dense(deps.store, store, opts.seed)
        record["rss_mb_after"] = rss_mb()
        dense = dataclasses.replace(
            deps, store=store, embedder=stub, indexer=Indexer(store, stub), search=SearchService(store, stub)
        )
        _log(f"measuring {len(semantic)} hybrid semantic_search calls (dense + lexical) ...")
        async with Client(create_server(lambda: dense, unauthenticated=LOCAL)) as client:
            probe = StoreProbe()
            probe.wrap(store.client)
            run = await measure(client, semantic, opts.budget_s, "dense", probe)
            report = run_report(run, Counter(c.tool for c in semantic))
            if opts.profile:
                report["profiles"] = await profile_slow(client, run, report, opts.slow_ms, slowest=False)
    return {
        "build": record,
        **report,
        "stub": {"embed_calls": stub.calls, "misses": stub.misses, "seconds_in_embed": stub.seconds},
    }


def catalog_report(catalog: Catalog) -> dict[str, Any]:
    return {
        "points": catalog.points,
        "full_scroll_s": catalog.seconds,
        "methods": len(catalog.methods),
        "methods_with_calls": len(catalog.called_methods),
        "types": len(catalog.types),
        "files": len(catalog.files),
        "distinct_annotations": len(catalog.annotations),
        "top_annotations": catalog.annotation_counts,
        "distinct_supertypes": len(catalog.supertypes),
        "distinct_injected": len(catalog.injected),
        "routes": len(catalog.routes),
    }


def plan_report(calls: Sequence[Call]) -> dict[str, Any]:
    items = [c.to_json() for c in calls]
    by_tool: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_tool.setdefault(item["tool"], []).append(item["args"])
    return {
        "count": len(items),
        "digest": hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest()[:16],
        "sample": {tool: args[:4] for tool, args in by_tool.items()},
    }


# --------------------------------------------------------------------------------------------------- report


def _row(label: str, row: dict[str, Any], extra: str = "") -> str:
    return (
        f"{label:<34}{row['count']:>6}{row['errors']:>5}{row['p50_ms']:>9.1f}{row['p90_ms']:>9.1f}"
        f"{row['p99_ms']:>9.1f}{row['max_ms']:>9.1f}{row['cpu_p50_ms']:>9.1f}{(row['cpu_per_wall'] or 0):>7.2f}"
        f"{row['output_chars_p50']:>8.0f}{extra}"
    )


def print_table(title: str, run: dict[str, Any]) -> None:
    print(f"\n{title}")
    print(
        f"{'tool (latency ms)':<34}{'calls':>6}{'err':>5}{'p50':>9}{'p90':>9}{'p99':>9}{'max':>9}"
        f"{'cpu p50':>9}{'cpu/w':>7}{'chars':>8}"
    )
    for tool, row in run["tools"].items():
        capped = f"  (stopped by budget: {row['skipped_for_budget']} not run)" if row["skipped_for_budget"] else ""
        print(_row(tool, row, capped))
        if len(row["by_kind"]) > 1:
            for kind, sub in row["by_kind"].items():
                print(_row(f"  {kind}", sub))
    print(_row("overall", run["overall"]))
    slowest = [(tool, slow) for tool, row in run["tools"].items() for slow in row["slowest"][:2]]
    if any(slow["ms"] >= SLOW_SHOWN_MS for _, slow in slowest):
        print(f"\n  calls over {SLOW_SHOWN_MS / 1000:.0f} s (Qdrant local-mode calls made: n x, ms)")
    for tool, slow in slowest:
        if slow["ms"] >= SLOW_SHOWN_MS:
            ops = ", ".join(f"{op} {v['calls']}x {v['ms']:.0f}" for op, v in slow["store"].items())
            print(f"  {tool:<20}{slow['ms']:>9.0f} ms  {json.dumps(slow['args'])[:70]:<72}{ops}")
    print(
        f"\n  where it goes (mean per call)    {'mean ms':>9}  {'Qdrant local-mode calls: n x, ms':<58}{'rest ms':>9}"
    )
    for tool, row in run["tools"].items():
        ops = ", ".join(f"{op} {v['per_call']:.1f}x {v['ms_per_call']:.0f}" for op, v in row["store"].items())
        print(f"  {tool:<32}{row['mean_ms']:>9.1f}  {ops:<58}{row['rest_ms_mean']:>9.1f}")
    load = run["load_average_1min_during"]
    print(
        f"  wall {run['wall_seconds']:.0f} s; 1-min load average during: {load['min']:.2f}..{load['max']:.2f} "
        f"(mean {load['mean']:.2f}); cpu p50 = process CPU time per call; cpu/w = CPU / wall (< 1: waiting for a core)"
    )


def print_report(report: dict[str, Any]) -> None:
    r, env = report["result"], report["environment"]
    idx = r["index"]
    print(
        f"\nindex: {idx['points_in_store']:,} points ({idx['chunks']:,} chunks, {idx['files']:,} files) from "
        f"{', '.join(idx['modules'])}; indexing took {idx['index_seconds_total']:.0f} s in total"
        f" ({'reused' if not idx['indexed_now'] else 'indexed now: ' + ', '.join(idx['indexed_now'])})"
    )
    for module, row in idx["per_module"].items():
        print(
            f"  {module:<16}{row['files']:>7,} files{row['chunks']:>9,} chunks{row['seconds']:>8.0f} s"
            f"{row['cpu_seconds']:>8.0f} s CPU   load {row['load_average_start'][0]:.2f}"
            f" -> {row['load_average_end'][0]:.2f}"
        )
    print(
        f"store open {r['open']['seconds']:.1f} s (RSS {r['open']['rss_mb']:.0f} MB); full catalog scroll "
        f"{r['catalog']['full_scroll_s']:.1f} s; python {env['python']}, qdrant-client {env['qdrant_client']}, "
        f"fastmcp {env['fastmcp']}, {env['cpu_count']} cpus; load average {r['load_average_start'][0]:.2f} at start, "
        f"{r['load_average_end'][0]:.2f} at end"
    )
    print(f"note: {report['notes']['qdrant']}")
    print("\nbuilding blocks (ms)                                                   p50      max")
    for name, row in r["components"].items():
        print(f"  {name:<68}{row['p50_ms']:>7.1f}{row['max_ms']:>9.1f}")
    print_table("lexical-only, in-memory MCP transport (no embedder)", r["lexical"])
    if "dense" in r:
        d = r["dense"]
        build = d["build"]
        print_table(
            f"hybrid (dense + lexical): in-process FixedVectorEmbedder, {build['dimension']} dims "
            f"({d['stub']['seconds_in_embed'] * 1000:.1f} ms spent inside embed() in all)",
            d,
        )
        print(f"  dense store: {build['points']:,} points in memory, copied in {build['seconds']:.0f} s")
    if "http" in r:
        h = r["http"]
        print("\nHTTP constant (p50 ms)        in-memory     HTTP    added")
        for op, added in h["added_by_http_p50_ms"].items():
            print(f"  {op:<26}{h['in_memory'][op]['p50_ms']:>10.1f}{h['http'][op]['p50_ms']:>9.1f}{added:>9.1f}")
    print_profiles(r.get("profiles", {}), "")
    if "dense" in r:
        print_profiles(r["dense"].get("profiles", {}), " (hybrid)")


def print_profiles(by_tool: dict[str, Any], suffix: str) -> None:
    for tool, profiles in by_tool.items():
        for label, prof in profiles.items():
            print(
                f"\nprofile {tool}{suffix} ({label}: {prof['unprofiled_ms']:.0f} ms, "
                f"{prof['wall_s_under_profile']:.1f} s under cProfile) {json.dumps(prof['call']['args'])}"
            )
            for step in prof["hot_path"]:
                if any(w in step["function"] for w in _THIN_FRAMES) and not step["also"]:
                    continue  # a thin wrapper, same time as its callee (kept in the JSON)
                calls = f"{step['calls']:>7,}x" if "calls" in step else " " * 8
                also = "; ".join(f"{a['function']} {a['cum_s']:.2f} s" for a in step["also"])
                print(f"  {step['share']:>4.0%} {step['cum_s']:>7.2f} s {calls} {step['function']}")
                if also:
                    print(f"  {'':>22}also: {also}")
            for row in prof["by_self_time"][:6]:
                print(f"  self-time top: {row['self_s']:>6.2f} s {row['calls']:>9,}x  {row['function']}")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.mcp_latency",
        description="MCP tool-call latency (p50/p90/p99 per tool) with >= 100k JDK chunks in embedded Qdrant.",
    )
    parser.add_argument("--min-chunks", type=int, default=100_000, help="index modules until (default: %(default)s)")
    parser.add_argument("--calls", type=int, default=300, help="timed calls in all, shared over tools (%(default)s)")
    parser.add_argument(
        "--tool-budget", type=float, default=45.0, help="seconds of calls per tool and run, then stop (%(default)s)"
    )
    parser.add_argument("--qdrant-path", type=Path, default=DEFAULT_STORE, metavar="DIR", help="stores (%(default)s)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the numbers as JSON")
    parser.add_argument("--src-zip", type=Path, default=DEFAULT_SRC_ZIP, help="JDK src.zip (default: %(default)s)")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR, help="extracted once (%(default)s)")
    parser.add_argument("--jobs", type=int, default=1, help="index_directory parse processes (default: 1)")
    parser.add_argument(
        "--modules",
        default=",".join(PREFERRED_MODULES),
        help="JDK modules to index first, in order, comma-separated (then the others by name; default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=SEED, help="argument sampling seed (default: %(default)s)")
    parser.add_argument("--slow-ms", type=float, default=1000.0, help="profile tools with p99 above (%(default)s)")
    parser.add_argument("--index-only", action="store_true", help="build (or check) the index, measure nothing")
    parser.add_argument("--no-dense", action="store_true", help="skip the hybrid run with the stub embedder")
    parser.add_argument("--no-http", action="store_true", help="skip the HTTP-constant sample")
    parser.add_argument("--no-profile", action="store_true", help="skip profiling the slow tools")
    args = parser.parse_args(argv)
    if args.min_chunks < 1 or args.calls < len(TOOL_WEIGHTS) or args.jobs < 1 or args.tool_budget <= 0:
        parser.error(f"--min-chunks, --jobs and --tool-budget must be > 0 and --calls >= {len(TOOL_WEIGHTS)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    ensure_extracted(args.src_zip, args.cache_dir)
    opts = Options(
        store_dir=args.qdrant_path,
        cache_dir=args.cache_dir,
        min_chunks=args.min_chunks,
        calls=args.calls,
        budget_s=args.tool_budget,
        slow_ms=args.slow_ms,
        jobs=args.jobs,
        modules=tuple(m.strip() for m in args.modules.split(",") if m.strip()),
        seed=args.seed,
        index_only=args.index_only,
        dense=not args.no_dense,
        http=not args.no_http,
        profile=not args.no_profile,
    )
    t0 = time.perf_counter()
    result = asyncio.run(run_all(opts))
    uname = os.uname()
    report: dict[str, Any] = {
        "command": " ".join([".venv/bin/python -m bench.mcp_latency", *(argv if argv is not None else sys.argv[1:])]),
        "options": {k: str(v) if isinstance(v, Path) else v for k, v in dataclasses.asdict(opts).items()},
        "environment": {
            "python": platform.python_version(),
            "qdrant_client": version("qdrant-client"),
            "fastmcp": version("fastmcp"),
            "mcp": version("mcp"),
            "cpu_count": os.cpu_count(),
            "platform": f"{uname.sysname} {uname.release} {uname.machine}",
            "javakb_env": sorted(k for k in os.environ if k.startswith("JAVAKB_")),
            "total_seconds": time.perf_counter() - t0,
            "peak_rss_mb": max(0.0, kb_to_mb(status_kb("VmHWM")) or 0.0),
        },
        "notes": {
            "qdrant": (
                "Qdrant embedded (local) mode: every point in memory, brute-force search, payload indexes ignored; "
                f"qdrant-client warns above {LOCAL_MODE_THRESHOLD:,} points (warning suppressed). Numbers are our "
                "overhead plus local mode's, not a Qdrant server's."
            ),
            "latency": "wall time of fastmcp Client.call_tool_mcp over the in-memory transport; MB = 10^6 bytes",
        },
        "result": result,
    }
    if opts.index_only:
        print(json.dumps(result, indent=2))
        return 0
    print_report(report)
    env = report["environment"]
    print(f"\ntotal {env['total_seconds']:.0f} s, peak RSS {env['peak_rss_mb']:.0f} MB")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    runs = [result["lexical"], *([result["dense"]] if "dense" in result else [])]
    unexpected = sum(row["unexpected_errors"] for run in runs for row in run["tools"].values())
    if unexpected:
        print(f"\n{unexpected} calls failed with a masked internal error (see error_messages)", file=sys.stderr)
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
