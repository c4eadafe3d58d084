"""The fake embedding server in a spawned process, shared by the benchmarks.

Its hashing and JSON run on another core rather than sharing the benchmark's GIL, and `stats()`
reports what it served since the last call.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import resource
from multiprocessing.connection import Connection
from typing import Any

_MB = 1_000_000


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _serve(conn: Connection, dim: int, nodelay: bool) -> None:
    """Child process: run FakeEmbeddingServer until told to stop; answer 'stats' with counts since the last."""
    from tests.support import fake_embedder

    # The stub's handler writes the headers and the body in two send() calls: with Nagle on, the body
    # waits for the client's delayed ACK, about 40 ms per request on loopback. Real servers set TCP_NODELAY.
    fake_embedder._Handler.disable_nagle_algorithm = nodelay
    with fake_embedder.FakeEmbeddingServer(dim=dim) as server:
        conn.send(server.base_url)
        cpu0 = _cpu_seconds()
        while conn.recv() == "stats":
            requests = list(server.requests)
            server.requests.clear()  # between phases nothing is in flight; keeps the stub's memory flat
            cpu = _cpu_seconds()
            conn.send(
                {
                    "requests": len(requests),
                    "inputs": sum(len(r.inputs) for r in requests),
                    "cpu_seconds": cpu - cpu0,
                    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / _MB,
                }
            )
            cpu0 = cpu


class StubServer:
    """FakeEmbeddingServer in a spawned process."""

    def __init__(self, dim: int, *, nodelay: bool = True) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._process = ctx.Process(target=_serve, args=(child, dim, nodelay), name="stub-embedder", daemon=True)
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
