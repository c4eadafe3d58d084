"""Benchmark indexing and search end to end on the JDK's own sources, with no real embedding model.

Run from the repository root:

    .venv/bin/python -m bench.index_jdk                          # java.base, lexical-only and HTTP stub
    .venv/bin/python -m bench.index_jdk --mode stub --stub both   # HTTP stub and in-process stub
    .venv/bin/python -m bench.index_jdk --limit 300 --queries 40  # a quick check

Each mode runs in its own spawned process (so peak RSS is that mode's own) against a fresh embedded Qdrant
folder (local mode), with every `.java` file of the module in scope:

1. cold index: `index_directory` into an empty collection (chunks, embeds, upserts);
2. search latency: `--queries` hybrid searches generated deterministically from the index, plus exact
   `symbol` and `callers` lookups for `--lookups` names;
3. re-run: the same tree indexed again by a freshly opened store (as a second `javakb index` would be):
   it must embed nothing; a non-zero count is reported as a bug (exit status 1);
4. search latency again, same queries.

Modes: `lexical` has no embedder (BM25 over the sparse vectors only). `stub-http` points
`EmbeddingSettings.base_url` at `tests.support.fake_embedder.FakeEmbeddingServer` (384 dimensions, like
MiniLM) running in a separate process with TCP_NODELAY (as real servers do; with Nagle each request waits
~40 ms for a delayed ACK), so our client's batching, JSON and loopback HTTP are measured but the stub's own
hashing is not on our CPU. `stub-inproc` (`--stub inproc|both`) hands the indexer an in-process `Embedder`
computing the same `fake_vector`s; the time spent inside it is reported so it can be subtracted.

Where the index time goes is measured by wrapping, in the mode's process only, the store's calls, the
embedder, `Indexer.write` (per batch) and the module globals `iter_sources`, `chunk_local_files`,
`chunk_point` and `_remove_vanished`; a timed call inside another one counts toward the outer one. The JSON
records a digest of app/ and pipeline/ at the start and the end, since the numbers belong to one code version.

Qdrant embedded (local) mode keeps every point in memory and answers by brute force (no HNSW, payload
indexes ignored); it warns above 20,000 points (suppressed here, mentioned once in the output). The numbers
are therefore OUR overhead plus local mode's, not a Qdrant server's. Exit status: 0 when all is well, 1 when
a re-run embedded or deleted anything or a mode failed, 2 on bad arguments or a missing source zip.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import gc
import hashlib
import json
import math
import multiprocessing
import os
import platform
import random
import re
import resource
import shutil
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Final

from bench.chunk_jdk import DEFAULT_CACHE_DIR, DEFAULT_MODULE, DEFAULT_SRC_ZIP, ensure_extracted
from bench.stub_embedder import StubServer

MB: Final = 1_000_000
STUB_DIM: Final = 384  # all-MiniLM-L6-v2's size
STUB_MODEL: Final = "stub-minilm-384"
SEED: Final = 20240917
WARMUP_QUERIES: Final = 5
LOCAL_MODE_WARNING: Final = r"Local mode is not recommended"
LOCAL_MODE_THRESHOLD: Final = 20_000
PROGRESS_EVERY_S: Final = 15.0
MODES: Final = ("lexical", "stub-http", "stub-inproc")
CATALOG_PAGE: Final = 1_000_000

# Method names too generic to make a question about.
_DULL_NAMES: Final = frozenset(
    {"toString", "equals", "hashCode", "get", "set", "run", "apply", "accept", "test", "call", "close", "clone"}
)
_CAMEL: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


# --------------------------------------------------------------------------------------------------- measuring


@dataclass(slots=True)
class Stat:
    calls: int = 0
    seconds: float = 0.0
    items: int = 0


@dataclass(slots=True)
class Probe:
    """Time spent in the instrumented steps of one phase, and the indexer's batches."""

    stats: dict[str, Stat] = field(default_factory=dict)
    batches: list[dict[str, float]] = field(default_factory=list)
    in_write: bool = False
    depth: int = 0  # timed calls under way: a call inside another timed one counts toward the outer one only

    def add(self, name: str, seconds: float, items: int = 0) -> None:
        stat = self.stats.setdefault(name, Stat())
        stat.calls += 1
        stat.seconds += seconds
        stat.items += items

    def reset(self) -> None:
        self.stats = {}
        self.batches = []

    def seconds(self, name: str) -> float:
        stat = self.stats.get(name)
        return stat.seconds if stat is not None else 0.0

    def items(self, name: str) -> int:
        stat = self.stats.get(name)
        return stat.items if stat is not None else 0

    def to_json(self) -> dict[str, Any]:
        return {name: dataclasses.asdict(stat) for name, stat in sorted(self.stats.items())}


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def status_kb(key: str) -> int | None:
    """A field of /proc/self/status in KiB (VmRSS, VmHWM), or None off Linux."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0), so the next peak is the next phase's own."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
    except OSError:
        return False
    return True


def max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / MB  # KiB on Linux


def kb_to_mb(kb: int | None) -> float | None:
    return None if kb is None else kb * 1024 / MB


@dataclass(slots=True)
class Meter:
    """Wall, CPU and peak RSS of one phase."""

    peak_resettable: bool
    wall0: float = 0.0
    cpu0: float = 0.0

    def start(self) -> None:
        gc.collect()
        self.peak_resettable = reset_peak_rss()
        self.wall0 = time.perf_counter()
        self.cpu0 = cpu_seconds()

    def stop(self) -> dict[str, Any]:
        wall = time.perf_counter() - self.wall0
        cpu = cpu_seconds() - self.cpu0
        return {
            "seconds": wall,
            "cpu_seconds": cpu,
            "peak_rss_mb": kb_to_mb(status_kb("VmHWM")) if self.peak_resettable else None,
            "rss_mb_at_end": kb_to_mb(status_kb("VmRSS")),
            "process_peak_rss_mb": max_rss_mb(),
        }


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), q in [0, 100]."""
    if not sorted_values:
        return math.nan
    pos = (len(sorted_values) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def latency_summary(seconds: Sequence[float]) -> dict[str, Any]:
    ms = sorted(s * 1000 for s in seconds)
    return {
        "count": len(ms),
        "p50_ms": percentile(ms, 50),
        "p90_ms": percentile(ms, 90),
        "p99_ms": percentile(ms, 99),
        "max_ms": ms[-1] if ms else math.nan,
        "mean_ms": sum(ms) / len(ms) if ms else math.nan,
    }


def rate(count: float, seconds: float) -> float:
    return count / seconds if seconds > 0 else math.inf


# --------------------------------------------------------------------------------------------------- stubs


class InProcessStub:
    """An `Embedder` computing `fake_vector` in this process; records the time spent in it."""

    def __init__(self, dim: int) -> None:
        self.model = STUB_MODEL
        self.dim = dim
        self.seconds = 0.0
        self.inputs = 0

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        from tests.support.fake_embedder import fake_vector

        t0 = time.perf_counter()
        vectors = [fake_vector(t, self.dim) for t in texts]
        self.seconds += time.perf_counter() - t0
        self.inputs += len(texts)
        return vectors

    async def dimension(self) -> int:
        return self.dim


# --------------------------------------------------------------------------------------------------- queries


@dataclass(frozen=True, slots=True)
class Query:
    kind: str  # question | identifier | filtered
    text: str
    symbol_type: str | None = None
    path_prefix: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass(frozen=True, slots=True, order=True)
class Method:
    type_name: str  # the enclosing type's simple name: HashMap, Node
    name: str
    file_path: str

    @property
    def dotted(self) -> str:
        return f"{self.type_name}.{self.name}"

    @property
    def words(self) -> str:
        return " ".join(part.lower() for part in _CAMEL.findall(self.name))


_QUESTIONS: Final = (
    "how does {type} {words}",
    "where does {type} {words}",
    "what does {dotted} do",
    "how is {words} done in {type}",
    "{words} in {type}",
    "who calls {dotted}",
)


def methods_of(catalog: Sequence[dict[str, Any]]) -> list[Method]:
    """Distinct (type, method) pairs of the index with a name worth asking about, sorted."""
    found: set[Method] = set()
    for payload in catalog:
        name, enclosing = str(payload.get("name") or ""), str(payload.get("enclosing_type") or "")
        if payload.get("symbol_type") != "method" or not enclosing or len(name) < 4 or name in _DULL_NAMES:
            continue
        if name.startswith("lambda$") or not name[:1].isalpha():
            continue
        found.add(Method(enclosing.rsplit(".", 1)[-1], name, str(payload.get("file_path") or "")))
    return sorted(found)


def make_queries(methods: Sequence[Method], total: int, seed: int) -> list[Query]:
    """Half natural questions, a quarter `Type.method` identifiers, a quarter questions with a filter."""
    rng = random.Random(seed)
    n_questions, n_identifiers = total // 2, total // 4
    n_filtered = total - n_questions - n_identifiers
    picked = rng.sample(list(methods), min(total, len(methods)))
    while len(picked) < total:  # a tiny index: reuse
        picked.append(rng.choice(list(methods)))
    queries: list[Query] = []
    for i, m in enumerate(picked):
        template = _QUESTIONS[rng.randrange(len(_QUESTIONS))]
        question = template.format(type=m.type_name, words=m.words, dotted=m.dotted)
        if i < n_questions:
            queries.append(Query("question", question))
        elif i < n_questions + n_identifiers:
            queries.append(Query("identifier", m.dotted))
        elif (i - n_questions - n_identifiers) % 2 == 0:
            queries.append(Query("filtered", question.replace("who calls", "what does"), symbol_type="method"))
        else:
            folder = m.file_path.rsplit("/", 1)[0] + "/" if "/" in m.file_path else m.file_path
            queries.append(Query("filtered", f"{m.words} {m.type_name}", path_prefix=folder))
    assert len(queries) == n_questions + n_identifiers + n_filtered
    return queries


def make_lookup_names(methods: Sequence[Method], count: int, seed: int) -> list[str]:
    rng = random.Random(seed + 1)
    return [m.dotted for m in rng.sample(list(methods), min(count, len(methods)))]


def code_digest() -> str:
    """A short sha256 over the sources of app/ and pipeline/, to tie the numbers to a code version."""
    top = Path(__file__).resolve().parents[1]
    sha = hashlib.sha256()
    for path in sorted([*top.glob("app/*.py"), *top.glob("pipeline/*.py")]):
        sha.update(path.relative_to(top).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return sha.hexdigest()[:16]


def digest(items: Sequence[Any]) -> str:
    return hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------------------------------- one mode


@dataclass(frozen=True, slots=True, kw_only=True)
class ModeOptions:
    mode: str
    root: str
    repo_path: str
    qdrant_path: str
    engine: str
    queries: int
    lookups: int
    jobs: int
    dim: int
    seed: int


def _timed_async(
    probe: Probe, name: str, fn: Callable[..., Awaitable[Any]], sized_arg: int | None = None
) -> Callable[..., Awaitable[Any]]:
    """`fn`, adding its time to `probe`; `sized_arg` is the positional argument whose len() counts as items."""

    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        outer = probe.depth == 0
        probe.depth += 1
        t0 = time.perf_counter()
        try:
            return await fn(*args, **kwargs)
        finally:
            probe.depth -= 1
            if outer:
                sized = args[sized_arg] if sized_arg is not None and len(args) > sized_arg else None
                items = len(sized) if sized is not None else 0  # None: a whole repository
                probe.add(name, time.perf_counter() - t0, items)

    return wrapper


def _timed_iter(probe: Probe, name: str, items: Iterator[Any]) -> Iterator[Any]:
    while True:
        t0 = time.perf_counter()
        try:
            item = next(items)
        except StopIteration:
            probe.add(name, time.perf_counter() - t0)
            return
        probe.add(name, time.perf_counter() - t0, 1)
        yield item


def instrument_modules(probe: Probe) -> None:
    """Time the walk, the chunking and the building of points (module globals, patched in this process only)."""
    import app.indexing
    import app.local_index
    from app.localfs import chunk_local_files as chunk_files
    from app.localfs import iter_sources as walk
    from app.vectors import chunk_point

    remove_vanished = _timed_async(probe, "remove vanished (_remove_vanished)", app.local_index._remove_vanished)

    def timed_walk(*args: Any, **kwargs: Any) -> Iterator[Any]:
        return _timed_iter(probe, "walk (iter_sources)", walk(*args, **kwargs))

    def timed_chunking(*args: Any, **kwargs: Any) -> Iterator[Any]:
        return _timed_iter(probe, "read+chunk (chunk_local_files)", chunk_files(*args, **kwargs))

    def timed_point(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return chunk_point(*args, **kwargs)
        finally:
            probe.add("build points (chunk_point)", time.perf_counter() - t0, 1)

    setattr(app.local_index, "iter_sources", timed_walk)  # noqa: B010
    setattr(app.local_index, "chunk_local_files", timed_chunking)  # noqa: B010
    setattr(app.indexing, "chunk_point", timed_point)  # noqa: B010
    setattr(app.local_index, "_remove_vanished", remove_vanished)  # noqa: B010


def instrument_deps(deps: Any, probe: Probe) -> None:
    """Time the store calls, the embedder and each indexer batch (instance attributes of this Deps only)."""
    store = deps.store
    # Whichever of these the store has (stored_state replaced stored_hashes in the write path).
    sized = {"ensure": None, "stored_state": 1, "stored_hashes": 1, "upsert": 0, "set_payloads": 0, "delete_ids": 0}
    for name, sized_arg in sized.items():
        if hasattr(store, name):
            setattr(store, name, _timed_async(probe, f"qdrant {name}", getattr(store, name), sized_arg))
    if deps.embedder is not None:
        embed = deps.embedder.embed

        async def timed_embed(texts: Sequence[str]) -> list[list[float]]:
            t0 = time.perf_counter()
            try:
                return list(await embed(texts))
            finally:
                name = "embed chunks" if probe.in_write else "embed other (dimension probe, queries)"
                probe.add(name, time.perf_counter() - t0, len(texts))

        setattr(deps.embedder, "embed", timed_embed)  # noqa: B010
    write = deps.indexer.write

    async def timed_write(repo_path: str, results: Sequence[Any], **kwargs: Any) -> Any:
        probe.in_write = True
        t0 = time.perf_counter()
        try:
            plan = await write(repo_path, results, **kwargs)
        finally:
            probe.in_write = False
        probe.batches.append(
            {
                "files": len(results),
                "chunks": sum(len(r.chunks) for r in results),
                "embedded": len(plan.embed),
                "seconds": time.perf_counter() - t0,
            }
        )
        return plan

    setattr(deps.indexer, "write", timed_write)  # noqa: B010


def batch_growth(batches: Sequence[dict[str, float]]) -> dict[str, Any] | None:
    """Milliseconds per chunk of the first and the last quarter of the batches (a growing ratio = O(N) per batch)."""
    if len(batches) < 8:
        return None
    quarter = len(batches) // 4

    def per_chunk(rows: Sequence[dict[str, float]]) -> float:
        return 1000 * sum(r["seconds"] for r in rows) / max(1, sum(r["chunks"] for r in rows))

    first, last = per_chunk(batches[:quarter]), per_chunk(batches[-quarter:])
    return {
        "batches": len(batches),
        "first_quarter_ms_per_chunk": first,
        "last_quarter_ms_per_chunk": last,
        "growth": rate(last, first),
        "slowest_batch_s": max(r["seconds"] for r in batches),
    }


@contextlib.asynccontextmanager
async def opened(
    settings: Any, stub: InProcessStub | None, probe: Probe, timings: dict[str, float]
) -> AsyncIterator[Any]:
    """open_deps, with the in-process stub swapped in when given; times the open and the close."""
    from app.deps import open_deps
    from app.indexing import Indexer
    from app.search import SearchService

    t0 = time.perf_counter()
    async with open_deps(settings) as deps:
        if stub is not None:
            deps = dataclasses.replace(
                deps, embedder=stub, indexer=Indexer(deps.store, stub), search=SearchService(deps.store, stub)
            )
        instrument_deps(deps, probe)
        timings["open_s"] = time.perf_counter() - t0
        timings["rss_mb_after_open"] = kb_to_mb(status_kb("VmRSS")) or max_rss_mb()
        yield deps
        t1 = time.perf_counter()  # only on a normal exit
    timings["close_s"] = time.perf_counter() - t1


def _progress(label: str, t0: float) -> Callable[[int, int], None]:
    last = [t0]

    def report(done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] >= PROGRESS_EVERY_S or done >= total:
            last[0] = now
            print(f"  [{label}] {done:,}/{total:,} files, {now - t0:7.1f} s", file=sys.stderr, flush=True)

    return report


async def index_phase(
    deps: Any, opts: ModeOptions, probe: Probe, label: str, stub: InProcessStub | None
) -> dict[str, Any]:
    from app.local_index import index_directory

    probe.reset()
    stub_s0 = stub.seconds if stub is not None else 0.0
    meter = Meter(peak_resettable=False)
    meter.start()
    run = await index_directory(
        deps, Path(opts.root), opts.repo_path, jobs=opts.jobs, progress=_progress(label, meter.wall0)
    )
    row = meter.stop()
    c = run.counts
    chunks = c.embedded + c.reused
    seconds = row["seconds"]
    accounted = sum(stat.seconds for stat in probe.stats.values())  # the timed steps never nest
    row.update(
        files=c.files,
        chunks=chunks,
        embedded=c.embedded,
        reused=c.reused,
        deleted=c.deleted,
        skipped=c.skipped,
        skipped_reasons=c.skipped_reasons,
        removed_files=run.removed_files,
        chunks_per_s=rate(chunks, seconds),
        files_per_s=rate(c.files, seconds),
        embedding_inputs_chunks=probe.items("embed chunks"),
        embedding_inputs_other=probe.items("embed other (dimension probe, queries)"),
        steps=probe.to_json(),
        other_seconds=max(0.0, seconds - accounted),
        batch_growth=batch_growth(probe.batches),
    )
    if stub is not None:
        row["stub_seconds"] = stub.seconds - stub_s0
        row["seconds_without_stub"] = seconds - row["stub_seconds"]
        row["chunks_per_s_without_stub"] = rate(chunks, row["seconds_without_stub"])
    return row


async def load_catalog(deps: Any) -> list[dict[str, Any]]:
    from qdrant_client import models as qm

    fields = ["name", "symbol_type", "enclosing_type", "file_path"]
    # One page: local mode sorts every id and filters every point again for each page of a scroll.
    return [dict(r.payload or {}) async for r in deps.store.scroll(qm.Filter(), fields, page=CATALOG_PAGE)]


async def search_phase(deps: Any, queries: Sequence[Query], names: Sequence[str], probe: Probe) -> dict[str, Any]:
    from app.access import LOCAL
    from app.search import Filters

    probe.reset()
    meter = Meter(peak_resettable=False)
    meter.start()
    for query in queries[:WARMUP_QUERIES]:  # first-call costs (imports, numpy, connection) stay out
        await deps.search.search(LOCAL, query.text)
    by_kind: dict[str, list[float]] = {}
    every: list[float] = []
    hits = 0
    for query in queries:
        filters = Filters(symbol_type=query.symbol_type, path_prefix=query.path_prefix)
        t0 = time.perf_counter()
        found = await deps.search.search(LOCAL, query.text, filters, 10)
        elapsed = time.perf_counter() - t0
        every.append(elapsed)
        by_kind.setdefault(query.kind, []).append(elapsed)
        hits += bool(found)
    lookups: dict[str, list[float]] = {"symbol": [], "callers": []}
    lookup_hits = {"symbol": 0, "callers": 0}
    for name in names:
        for kind, call in (("symbol", deps.search.symbol), ("callers", deps.search.callers)):
            t0 = time.perf_counter()
            found = await call(LOCAL, name)
            lookups[kind].append(time.perf_counter() - t0)
            lookup_hits[kind] += len(found)
    row = meter.stop()
    row.update(
        search=latency_summary(every),
        search_by_kind={kind: latency_summary(values) for kind, values in sorted(by_kind.items())},
        queries_with_hits=hits,
        lookups={kind: latency_summary(values) for kind, values in lookups.items()},
        lookup_hits=lookup_hits,
        query_embedding=probe.to_json(),
    )
    return row


def mode_settings(opts: ModeOptions, base_url: str | None) -> Any:
    from app.settings import ChunkingSettings, EmbeddingSettings, QdrantSettings, Settings

    collection = "javakb_bench_" + opts.mode.replace("-", "_")
    return Settings(
        chunking=ChunkingSettings(include=("**/*.java",), exclude=()),
        embedding=EmbeddingSettings(base_url=base_url, model=STUB_MODEL),
        qdrant=QdrantSettings(path=opts.qdrant_path, collection=collection, engine=opts.engine),  # type: ignore[arg-type]
    )


async def run_mode(opts: ModeOptions) -> dict[str, Any]:
    """Cold index, searches, re-run with a fresh store, searches again."""
    warnings.filterwarnings("ignore", message=LOCAL_MODE_WARNING, category=UserWarning)
    probe = Probe()
    instrument_modules(probe)
    result: dict[str, Any] = {
        "mode": opts.mode,
        "engine": opts.engine,
        "qdrant_path": opts.qdrant_path,
        "load_average_start": os.getloadavg(),
    }
    with contextlib.ExitStack() as stack:
        server = None
        if opts.mode == "stub-http":
            server = StubServer(opts.dim)
            stack.callback(server.close)
        stub = InProcessStub(opts.dim) if opts.mode == "stub-inproc" else None
        settings = mode_settings(opts, server.base_url if server is not None else None)
        result["settings"] = json.loads(settings.model_dump_json(exclude={"embedding": {"api_key"}}))

        cold_timings: dict[str, float] = {}
        async with opened(settings, stub, probe, cold_timings) as deps:
            cold = await index_phase(deps, opts, probe, f"{opts.mode} cold", stub)
            if server is not None:
                cold["stub_server"] = server.stats()
            t0 = time.perf_counter()
            catalog = await load_catalog(deps)
            result["catalog"] = {"points": len(catalog), "full_scroll_s": time.perf_counter() - t0}
            methods = methods_of(catalog)
            del catalog
            queries = make_queries(methods, opts.queries, opts.seed)
            names = make_lookup_names(methods, opts.lookups, opts.seed)
            result["queries"] = {
                "count": len(queries),
                "digest": digest([q.to_json() for q in queries]),
                "sample": [q.to_json() for q in queries[:: max(1, len(queries) // 12)]],
                "lookup_names": len(names),
                "lookup_digest": digest(names),
                "lookup_sample": names[:8],
            }
            print(f"  [{opts.mode}] searching ({len(queries)} queries, {len(names)} lookups)", file=sys.stderr)
            search_cold = await search_phase(deps, queries, names, probe)
            if server is not None:
                search_cold["stub_server"] = server.stats()
        cold.update(cold_timings)

        rerun_timings: dict[str, float] = {}
        async with opened(settings, stub, probe, rerun_timings) as deps:
            rerun = await index_phase(deps, opts, probe, f"{opts.mode} re-run", stub)
            if server is not None:
                rerun["stub_server"] = server.stats()
            print(f"  [{opts.mode}] searching again", file=sys.stderr)
            search_rerun = await search_phase(deps, queries, names, probe)
            if server is not None:
                search_rerun["stub_server"] = server.stats()
        rerun.update(rerun_timings)
    result.update(cold=cold, search_after_cold=search_cold, rerun=rerun, search_after_rerun=search_rerun)
    result["process_peak_rss_mb"] = max_rss_mb()
    result["load_average_end"] = os.getloadavg()
    result["problems"] = rerun_problems(rerun, server_used=opts.mode == "stub-http")
    return result


def rerun_problems(rerun: dict[str, Any], *, server_used: bool) -> list[str]:
    """What the idle re-run did that it must not: embed, delete or remove anything."""
    problems: list[str] = []
    if rerun["embedded"]:
        problems.append(f"re-run embedded {rerun['embedded']} chunks (must be 0)")
    if rerun["embedding_inputs_chunks"]:
        problems.append(f"re-run sent {rerun['embedding_inputs_chunks']} chunk texts to the embedder (must be 0)")
    if server_used:
        extra = rerun["stub_server"]["inputs"] - rerun["embedding_inputs_other"]
        if extra:
            problems.append(f"the stub server received {extra} unexpected inputs during the re-run")
    if rerun["deleted"] or rerun["removed_files"]:
        problems.append(f"re-run deleted {rerun['deleted']} points and removed {rerun['removed_files']} files")
    return problems


def _mode_child(conn: Connection, opts: ModeOptions) -> None:
    try:
        result = asyncio.run(run_mode(opts))
    except BaseException:
        conn.send({"mode": opts.mode, "error": traceback.format_exc()})
    else:
        conn.send(result)
    finally:
        conn.close()


def run_mode_in_child(opts: ModeOptions) -> dict[str, Any]:
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_mode_child, args=(child, opts), name=f"bench-{opts.mode}")
    process.start()
    child.close()
    try:
        result: dict[str, Any] = parent.recv()
    except EOFError:
        result = {"mode": opts.mode, "error": "the mode's process died without an answer"}
    process.join()
    if process.exitcode and "error" not in result:
        result["error"] = f"the mode's process exited with status {process.exitcode}"
    return result


# --------------------------------------------------------------------------------------------------- report


def version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def _fmt(value: Any, spec: str) -> str:
    if value is None:
        return "n/a"
    return format(value, spec)


def print_report(report: dict[str, Any]) -> None:
    inp, env = report["input"], report["environment"]
    print()
    print(f"JDK sources: {inp['module']}  {inp['files']:,} .java files  {inp['mb']:.1f} MB  ({inp['root']})")
    print(
        f"python {env['python']}, qdrant-client {env['qdrant_client']}, httpx {env['httpx']}, "
        f"{env['cpu_count']} cpus, load avg {env['load_average_start'][0]:.2f} at start, "
        f"{env['load_average_end'][0]:.2f} at end (1-min); app+pipeline digest {env['code_digest_start']}"
    )
    if env["code_digest_end"] != env["code_digest_start"]:
        print(f"WARNING: app/ or pipeline/ changed during the run (digest now {env['code_digest_end']})")
    print(f"note: {report['notes']['qdrant']}")
    modes = [m for m in report["modes"] if "error" not in m]
    if modes:
        print()
        header = (
            f"{'mode':<12}{'run':<8}{'time s':>9}{'cpu s':>8}{'open s':>8}{'chunks/s':>10}{'files/s':>9}"
            f"{'embedded':>10}{'reused':>8}{'inputs':>8}{'RSS open':>10}{'peak RSS':>10}"
        )
        print(header)
        for m in modes:
            for run in ("cold", "rerun"):
                row = m[run]
                inputs = row["embedding_inputs_chunks"] + row["embedding_inputs_other"]
                print(
                    f"{m['mode']:<12}{run:<8}{row['seconds']:>9.1f}{row['cpu_seconds']:>8.1f}{row['open_s']:>8.1f}"
                    f"{row['chunks_per_s']:>10,.0f}{row['files_per_s']:>9,.1f}{row['embedded']:>10,}"
                    f"{row['reused']:>8,}{inputs:>8,}{row['rss_mb_after_open']:>7,.0f} MB"
                    f"{_fmt(row['peak_rss_mb'], '>7,.0f')} MB"
                )
        print(
            "  (inputs = texts sent to the embedder, the dimension probe included; RSS open = after opening the"
            " store, peak RSS = of the indexing phase; MB = 10^6 bytes)"
        )
        for m in modes:
            start, end = m["load_average_start"], m["load_average_end"]
            print(f"  {m['mode']}: load average {start[0]:.2f} at start, {end[0]:.2f} at end (1-min)")
        print()
        print(
            f"{'search latency ms':<26}{'p50':>8}{'p90':>8}{'p99':>8}{'max':>8}   "
            f"{'symbol p50/p99':>16}{'callers p50/p99':>17}"
        )
        for m in modes:
            for phase, label in (("search_after_cold", "after cold"), ("search_after_rerun", "after re-run")):
                s = m[phase]
                lat, sym, cal = s["search"], s["lookups"]["symbol"], s["lookups"]["callers"]
                print(
                    f"{m['mode'] + ' ' + label:<26}{lat['p50_ms']:>8.1f}{lat['p90_ms']:>8.1f}{lat['p99_ms']:>8.1f}"
                    f"{lat['max_ms']:>8.1f}   {sym['p50_ms']:>7.1f}/{sym['p99_ms']:<8.1f}"
                    f"{cal['p50_ms']:>8.1f}/{cal['p99_ms']:<8.1f}"
                )
        for m in modes:
            print_breakdown(m)
    for m in report["modes"]:
        if "error" in m:
            print(f"\nMODE {m['mode']} FAILED:\n{m['error']}", file=sys.stderr)
        for problem in m.get("problems", []):
            print(f"\nBUG ({m['mode']}): {problem}", file=sys.stderr)


def print_breakdown(m: dict[str, Any]) -> None:
    print(f"\n{m['mode']}: where the index time went (s)")
    for run in ("cold", "rerun"):
        row = m[run]
        steps = ", ".join(f"{name} {stat['seconds']:.1f}" for name, stat in sorted(row["steps"].items()))
        line = f"  {run:<6} total {row['seconds']:.1f}: {steps}, rest {row['other_seconds']:.1f}"
        if "stub_seconds" in row:
            line += f"; in-process stub {row['stub_seconds']:.1f}"
        if "stub_server" in row:
            srv = row["stub_server"]
            line += f"; stub server {srv['requests']:,} requests, {srv['cpu_seconds']:.1f} s CPU in its own process"
        print(line)
        growth = row["batch_growth"]
        if growth is not None:
            print(
                f"         batches: {growth['batches']}, ms/chunk first quarter "
                f"{growth['first_quarter_ms_per_chunk']:.2f} -> last quarter "
                f"{growth['last_quarter_ms_per_chunk']:.2f} ({growth['growth']:.1f}x)"
            )
    cat = m["catalog"]
    print(f"  full scroll of {cat['points']:,} points (to generate queries): {cat['full_scroll_s']:.1f} s")


def count_input(root: Path) -> tuple[int, int]:
    files = [p for p in root.rglob("*.java") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def limited_tree(source: Path, limit: int, into: Path) -> Path:
    """A tree of symlinks to the first `limit` .java files of `source` (sorted by path)."""
    paths = sorted((p for p in source.rglob("*.java") if p.is_file()), key=lambda p: p.as_posix())[:limit]
    for path in paths:
        link = into / path.relative_to(source)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(path)
    return into


# --------------------------------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.index_jdk",
        description="Index a JDK module end to end (lexical-only and with a stub embedder), then time searches.",
    )
    parser.add_argument("--src-zip", type=Path, default=DEFAULT_SRC_ZIP, help="JDK src.zip (default: %(default)s)")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR, help="extracted once (%(default)s)")
    parser.add_argument("--module", default=DEFAULT_MODULE, help="one JDK module (default: %(default)s)")
    parser.add_argument("--mode", choices=("lexical", "stub", "both"), default="both", help="default: both")
    parser.add_argument(
        "--stub", choices=("http", "inproc", "both"), default="http", help="which stub embedder (default: http)"
    )
    parser.add_argument("--queries", type=int, default=200, help="searches per measurement (default: 200)")
    parser.add_argument("--lookups", type=int, default=50, help="names for symbol/callers lookups (default: 50)")
    parser.add_argument("--jobs", type=int, default=1, help="index_directory parse processes (default: 1)")
    parser.add_argument("--dim", type=int, default=STUB_DIM, help="stub vector size (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=SEED, help="query sampling seed (default: %(default)s)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N files (for quick checks)")
    parser.add_argument("--qdrant-path", type=Path, default=None, metavar="DIR", help="parent of the fresh stores")
    parser.add_argument("--engine", choices=("edge", "local"), default="edge", help="embedded engine (default: edge)")
    parser.add_argument("--keep", action="store_true", help="keep the Qdrant folders afterwards")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the numbers as JSON")
    args = parser.parse_args(argv)
    if args.queries < 1 or args.lookups < 0 or args.jobs < 1 or args.dim < 1:
        parser.error("--queries, --jobs and --dim must be >= 1, --lookups >= 0")
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be >= 1")
    return args


def selected_modes(args: argparse.Namespace) -> list[str]:
    modes = ["lexical"] if args.mode in ("lexical", "both") else []
    if args.mode in ("stub", "both"):
        modes += {"http": ["stub-http"], "inproc": ["stub-inproc"], "both": ["stub-http", "stub-inproc"]}[args.stub]
    return modes


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    load_start = os.getloadavg()
    code_at_start = code_digest()
    ensure_extracted(args.src_zip, args.cache_dir)
    module_root = args.cache_dir / args.module
    if not module_root.is_dir():
        raise SystemExit(f"error: no module {args.module!r} in {args.cache_dir}")
    with contextlib.ExitStack() as stack:
        if args.qdrant_path is not None:
            args.qdrant_path.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="javakb-bench-index-", dir=args.qdrant_path))
        if not args.keep:
            stack.callback(shutil.rmtree, work, True)
        root = module_root if args.limit is None else limited_tree(module_root, args.limit, work / "tree")
        files, size = count_input(root)
        print(f"{files:,} .java files, {size / MB:.1f} MB under {root}; stores under {work}", file=sys.stderr)
        results: list[dict[str, Any]] = []
        for mode in selected_modes(args):
            print(f"mode {mode} ...", file=sys.stderr, flush=True)
            opts = ModeOptions(
                mode=mode,
                root=str(root),
                repo_path=f"openjdk/jdk17/{args.module}",
                qdrant_path=str(work / mode),
                engine=args.engine,
                queries=args.queries,
                lookups=args.lookups,
                jobs=args.jobs,
                dim=args.dim,
                seed=args.seed,
            )
            results.append(run_mode_in_child(opts))
    uname = os.uname()
    report: dict[str, Any] = {
        "input": {"module": args.module, "root": str(root), "files": files, "bytes": size, "mb": size / MB},
        "options": {
            "modes": selected_modes(args),
            "queries": args.queries,
            "lookups": args.lookups,
            "jobs": args.jobs,
            "stub_dim": args.dim,
            "seed": args.seed,
            "limit": args.limit,
            "warmup_queries": WARMUP_QUERIES,
        },
        "environment": {
            "python": platform.python_version(),
            "qdrant_client": version("qdrant-client"),
            "httpx": version("httpx"),
            "cpu_count": os.cpu_count(),
            "load_average_start": load_start,
            "load_average_end": os.getloadavg(),
            "platform": f"{uname.sysname} {uname.release} {uname.machine}",
            "javakb_env": sorted(k for k in os.environ if k.startswith("JAVAKB_")),
            "code_digest_start": code_at_start,
            "code_digest_end": code_digest(),
        },
        "notes": {
            "qdrant": (
                "Qdrant embedded (local) mode: every point in memory, brute-force search, payload indexes ignored; "
                f"qdrant-client warns above {LOCAL_MODE_THRESHOLD:,} points (warning suppressed). Numbers are our "
                "overhead plus local mode's, not a Qdrant server's."
            ),
        },
        "modes": results,
    }
    print_report(report)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")
    failed = any("error" in m or m.get("problems") for m in results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
