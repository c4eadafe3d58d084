"""Where `bench.index_jdk`'s index time goes: timed stand-ins injected into the run, never patched in.

The store's calls, the embedder and each `Indexer.write` batch are timed through `open_deps(wrap=...)`
(`ProbeWrap`); the walk, the chunking and the removal of vanished files through `index_directory`'s
`steps` (`timed_steps`); the building of points through `Indexer(point=...)`. A timed call inside
another one counts toward the outer one only.
"""

from __future__ import annotations

import dataclasses
import gc
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from app.store.indexing import Indexer
from app.store.vectors import chunk_point
from app.sync.local_index import LOCAL_STEPS, LocalSteps
from bench.common import cpu_seconds, kb_to_mb, max_rss_mb, rate, reset_peak_rss, status_kb
from testkit.standins import Around, Method, around

_Part = TypeVar("_Part")
# Store calls timed, with the positional argument whose len() counts as items (None: a whole repository).
STORE_CALLS = {
    "ensure": None,
    "stored_state": 1,
    "stored_hashes": 1,
    "upsert": 0,
    "delete_ids": 0,
}


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


def timed(probe: Probe, name: str, sized_arg: int | None = None) -> Around:
    """A wrapper adding an async call's time to `probe`; `sized_arg` is the argument whose len() counts."""

    def wrap(fn: Method) -> Method:
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

    return wrap


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


def timed_steps(probe: Probe) -> LocalSteps:
    """`index_directory`'s steps, each timed."""

    def walk(*args: Any) -> Iterator[Any]:
        return _timed_iter(probe, "walk (iter_sources)", LOCAL_STEPS.walk(*args))

    def chunk(*args: Any) -> Iterator[Any]:
        return _timed_iter(probe, "read+chunk (chunk_local_files)", LOCAL_STEPS.chunk(*args))

    remove = timed(probe, "remove vanished (_remove_vanished)")(LOCAL_STEPS.remove_vanished)
    return LocalSteps(walk=walk, chunk=chunk, remove_vanished=remove)


class ProbeWrap:
    """`open_deps(wrap=...)`: the store, the embedder (or the in-process stub in its place) and the indexer, timed."""

    def __init__(self, probe: Probe, stub: Any = None) -> None:
        self.probe = probe
        self.stub = stub

    def __call__(self, role: str, part: _Part, /) -> _Part:
        if role == "store":
            return around(part, **{n: timed(self.probe, f"qdrant {n}", a) for n, a in STORE_CALLS.items()})
        if role == "embedder":
            embedder = self.stub if self.stub is not None else part
            return cast(_Part, None if embedder is None else around(embedder, embed=self._embed))
        if role == "indexer":
            built = cast(Indexer, part)
            indexer = Indexer(built.store, built.embedder, built.clock, point=self._point)
            return cast(_Part, around(indexer, write=self._write))
        return part

    def _embed(self, embed: Method) -> Method:
        probe = self.probe

        async def timed_embed(texts: Sequence[str]) -> list[list[float]]:
            t0 = time.perf_counter()
            try:
                return list(await embed(texts))
            finally:
                name = "embed chunks" if probe.in_write else "embed other (dimension probe, queries)"
                probe.add(name, time.perf_counter() - t0, len(texts))

        return timed_embed

    def _point(self, *args: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return chunk_point(*args)
        finally:
            self.probe.add("build points (chunk_point)", time.perf_counter() - t0, 1)

    def _write(self, write: Method) -> Method:
        probe = self.probe

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

        return timed_write


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
