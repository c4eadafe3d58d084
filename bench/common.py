"""What every benchmark shares: scratch PostgreSQL and Redis, clocks and memory, percentiles, reports,
the JDK sources, the stub embedding server in its own process, and timed stand-ins for our parts.

Timing goes through injection (`testkit.standins.around`, `entry.deps.open_deps(wrap=...)`), never by
patching attributes of our modules; `tests/test_bench_layout.py` keeps `bench/` free of `tests`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import multiprocessing
import os
import resource
import secrets
import shutil
import socket
import sys
import time
import zipfile
from collections.abc import Awaitable, Callable, Iterator, Sequence
from importlib import metadata
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Final

MB: Final = 1_000_000
PG_SERVER: Final = "postgresql://root@127.0.0.1:5432"
REDIS_SERVER: Final = "redis://127.0.0.1:6379"
HOST: Final = "127.0.0.1"
SEED: Final = 20240917  # every bench's default seed
PROGRESS_EVERY_S: Final = 15.0  # how often a long phase reports on stderr
STUB_DIM: Final = 384  # the stub embedder's vectors: all-MiniLM-L6-v2's size
STUB_MODEL: Final = "stub-minilm-384"
LOCAL_MODE_WARNING: Final = r"Local mode is not recommended"  # embedded Qdrant's warning above 20,000 points

# --------------------------------------------------------------------------------------------------- databases


@contextlib.contextmanager
def bench_database(server: str = PG_SERVER) -> Iterator[str]:
    """A fresh migrated database on `server`, dropped on exit; yields its DSN."""
    import psycopg
    from psycopg import sql

    from app.db.migrate import apply_migrations

    name = f"javakb_bench_{secrets.token_hex(4)}"
    dsn = f"{server}/{name}"
    try:
        apply_migrations(dsn)
        yield dsn
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def redis_url(db: int) -> str:
    """The URL of database `db` of the local Redis (a benchmark flushes only its own)."""
    return f"{REDIS_SERVER}/{db}"


# --------------------------------------------------------------------------------------------------- clocks, memory


def cpu_seconds() -> float:
    """User + system CPU seconds of this process so far."""
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


def max_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    """Peak RSS of this process (or its waited-for children) in MB."""
    return resource.getrusage(who).ru_maxrss * 1024 / MB  # ru_maxrss is in KiB on Linux


def kb_to_mb(kb: int | None) -> float | None:
    return None if kb is None else kb * 1024 / MB


def rss_mb() -> float | None:
    """This process's resident memory now."""
    return kb_to_mb(status_kb("VmRSS"))


def load_avg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def log(message: str) -> None:
    """Progress on stderr (stdout carries the report)."""
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------------- statistics


def nearest_rank(values: Sequence[float], q: float) -> float:
    """The q-th percentile (q in [0, 100]) by the nearest-rank method: always one of the values."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    k = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[k]


def interpolated(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), q in [0, 100]."""
    if not sorted_values:
        return math.nan
    pos = (len(sorted_values) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def latency_summary(seconds: Sequence[float]) -> dict[str, Any]:
    """Count, p50/p90/p99, max and mean in milliseconds (interpolated percentiles)."""
    ms = sorted(s * 1000 for s in seconds)
    return {
        "count": len(ms),
        "p50_ms": interpolated(ms, 50),
        "p90_ms": interpolated(ms, 90),
        "p99_ms": interpolated(ms, 99),
        "max_ms": ms[-1] if ms else math.nan,
        "mean_ms": sum(ms) / len(ms) if ms else math.nan,
    }


def rate(count: float, seconds: float) -> float:
    return count / seconds if seconds > 0 else math.inf


# --------------------------------------------------------------------------------------------------- reports


def version(dist: str) -> str:
    """The installed version of a distribution, or `unknown`."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def write_json(path: Path, report: dict[str, Any]) -> None:
    """The whole report as indented JSON (the folder is created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")


def disk_mb(root: Path) -> float:
    """Bytes of every file under a folder, in MB (10^6 bytes), as `du --apparent-size` counts."""
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / MB


def fmt(value: Any, spec: str) -> str:
    """`value` formatted with `spec`, or `n/a` when missing."""
    return "n/a" if value is None else format(value, spec)


# --------------------------------------------------------------------------------------------------- timing


def timed_async(
    record: Callable[[float, tuple[Any, ...]], None],
) -> Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Any]]]:
    """A wrapper (for `testkit.standins.around`) telling `record(seconds, args)` how long each call took."""

    def wrap(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                record(time.perf_counter() - t0, args)

        return timed

    return wrap


# --------------------------------------------------------------------------------------------------- JDK sources

DEFAULT_SRC_ZIP: Final = Path("/usr/lib/jvm/java-17-openjdk-amd64/lib/src.zip")
DEFAULT_CACHE_DIR: Final = Path("/tmp/javakb-bench/jdk17")
DEFAULT_MODULE: Final = "java.base"
EXTRACTED_MARKER: Final = ".javakb-bench-extracted"

SourceFile = tuple[str, bytes]


def add_jdk_arguments(parser: argparse.ArgumentParser) -> None:
    """`--src-zip` and `--cache-dir`, the JDK sources every JDK bench reads."""
    parser.add_argument("--src-zip", type=Path, default=DEFAULT_SRC_ZIP, help="JDK src.zip (default: %(default)s)")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR, help="extracted once (%(default)s)")


def ensure_extracted(src_zip: Path, cache_dir: Path) -> None:
    """Unzip src.zip into cache_dir unless an earlier run already did (marker file present)."""
    if (cache_dir / EXTRACTED_MARKER).is_file():
        return
    if cache_dir.exists() and any(cache_dir.iterdir()):
        raise SystemExit(
            f"error: {cache_dir} exists but was not extracted by this script (no {EXTRACTED_MARKER}); "
            "remove it or pass another --cache-dir"
        )
    if not src_zip.is_file():
        raise SystemExit(f"error: {src_zip} not found (apt-get install openjdk-17-source, or pass --src-zip)")
    cache_dir.parent.mkdir(parents=True, exist_ok=True)
    partial = cache_dir.with_name(f"{cache_dir.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    print(f"extracting {src_zip} -> {cache_dir} (once) ...", file=sys.stderr, flush=True)
    with zipfile.ZipFile(src_zip) as archive:
        archive.extractall(partial)
    (partial / EXTRACTED_MARKER).write_text(f"{src_zip.resolve()}\n", encoding="utf-8")
    if cache_dir.exists():
        cache_dir.rmdir()  # empty, checked above
    partial.rename(cache_dir)


def count_input(root: Path) -> tuple[int, int]:
    files = [p for p in root.rglob("*.java") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def linked_tree(cache_dir: Path, modules: Sequence[str], limit: int | None, into: Path) -> Path:
    """A tree of symlinks to the .java files of `modules` under `module/`, the first `limit` (sorted by path) if given.

    One module without a limit is indexed in place (its own root, as before).
    """
    if len(modules) == 1 and limit is None:
        return cache_dir / modules[0]
    source = cache_dir if len(modules) > 1 else cache_dir / modules[0]
    found = (p for m in modules for p in (cache_dir / m).rglob("*.java") if p.is_file())
    paths = sorted(found, key=lambda p: p.as_posix())[:limit]
    for path in paths:
        link = into / path.relative_to(source)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(path)
    return into


def load_files(cache_dir: Path, module: str | None) -> list[SourceFile]:
    """Read every .java file of one module (or of all when module is None) into memory, sorted by path."""
    modules = sorted(p for p in cache_dir.iterdir() if p.is_dir())
    if module is not None:
        if not (cache_dir / module).is_dir():
            names = ", ".join(p.name for p in modules)
            raise SystemExit(f"error: no module {module!r} in {cache_dir}; available: {names}")
        modules = [cache_dir / module]
    paths = sorted((p for root in modules for p in root.rglob("*.java") if p.is_file()), key=lambda p: p.as_posix())
    return [(p.relative_to(cache_dir).as_posix(), p.read_bytes()) for p in paths]


# --------------------------------------------------------------------------------------------------- servers


def free_port() -> int:
    """A TCP port free on the loopback interface now."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def _serve_stub(conn: Connection, dim: int, nodelay: bool) -> None:
    """Child process: run FakeEmbeddingServer until told to stop; answer 'stats' with counts since the last."""
    from testkit.fake_embedder import FakeEmbeddingServer

    with FakeEmbeddingServer(dim=dim, nodelay=nodelay) as server:
        conn.send(server.base_url)
        cpu0 = cpu_seconds()
        while conn.recv() == "stats":
            requests = list(server.requests)
            server.requests.clear()  # between phases nothing is in flight; keeps the stub's memory flat
            cpu = cpu_seconds()
            conn.send(
                {
                    "requests": len(requests),
                    "inputs": sum(len(r.inputs) for r in requests),
                    "cpu_seconds": cpu - cpu0,
                    "peak_rss_mb": max_rss_mb(),
                }
            )
            cpu0 = cpu


class StubServer:
    """The fake embedding server in a spawned process: its hashing and JSON run on another core rather
    than sharing the benchmark's GIL, and `stats()` reports what it served since the last call.
    """

    def __init__(self, dim: int, *, nodelay: bool = True) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._process = ctx.Process(target=_serve_stub, args=(child, dim, nodelay), name="stub-embedder", daemon=True)
        self._process.start()
        child.close()
        if not self._conn.poll(60):
            self._process.kill()
            raise RuntimeError("the stub embedding server did not start within 60 s")
        self.base_url: str = self._conn.recv()

    def stats(self) -> dict[str, Any]:
        """Requests, inputs, CPU seconds and peak RSS of the server since the last call."""
        self._conn.send("stats")
        result: dict[str, Any] = self._conn.recv()
        return result

    def close(self) -> None:
        """Stop the server process."""
        with contextlib.suppress(OSError):
            self._conn.send("stop")
        self._process.join(10)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._conn.close()
