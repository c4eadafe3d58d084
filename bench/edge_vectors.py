"""Benchmark Qdrant Edge's dense search on a standalone shard: the exact scan, float16 storage, and HNSW.

    .venv/bin/python -m bench.edge_vectors --points 100000
    .venv/bin/python -m bench.edge_vectors --points 20000 --no-hnsw

Random 384-dim vectors (the worst case for an HNSW build; real embeddings cluster), written in batches of
1,000 into a scratch shard per storage type; then the median of 10 queries (60 nearest, no payload) after
two of warm-up, and with `--hnsw` (the default) `optimize()` timed on the float32 shard and the queries
again. What it answers: how much of a hybrid search is the dense exact scan, and what building the
index offline would cost and save (docs/decisions.md, "Set pages by `file_order`...").
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import uuid
from collections.abc import Sequence
from typing import Any

from bench.common import load_avg

DIM = 384


def build(points: int, datatype: Any, seed: int) -> Any:
    import numpy as np
    import qdrant_edge as qe

    vectors = np.random.default_rng(seed).standard_normal((points, DIM)).astype(np.float32)
    params = qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine, datatype=datatype)
    shard = qe.EdgeShard.create(
        tempfile.mkdtemp(prefix="javakb-edge-vectors-"), qe.EdgeConfig(vectors={"dense": params})
    )
    for start in range(0, points, 1000):
        batch = [
            qe.Point(str(uuid.UUID(int=i + 1)), {"dense": vectors[i].tolist()}, {})
            for i in range(start, min(points, start + 1000))
        ]
        shard.update(qe.UpdateOperation.upsert_points(batch))
    return shard


def query_ms(shard: Any, seed: int, runs: int = 12) -> float:
    import numpy as np
    import qdrant_edge as qe

    rng = np.random.default_rng(seed + 1)
    seconds = []
    for _ in range(runs):
        request = qe.QueryRequest(60, query=qe.Query.Nearest(rng.standard_normal(DIM).tolist(), using="dense"))
        started = time.perf_counter()
        shard.query(request)
        seconds.append((time.perf_counter() - started) * 1000)
    return statistics.median(seconds[2:])


def main(argv: Sequence[str] | None = None) -> int:
    import qdrant_edge as qe

    parser = argparse.ArgumentParser(prog="python -m bench.edge_vectors", description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-hnsw", dest="hnsw", action="store_false", help="skip the optimize() step")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"points": args.points, "load_average_start": load_avg()}
    for name, datatype in (("float32", None), ("float16", qe.VectorStorageDatatype.Float16)):
        shard = build(args.points, datatype, args.seed)
        report[f"{name}_exact_query_ms"] = query_ms(shard, args.seed)
        if args.hnsw and name == "float32":
            started, cpu = time.perf_counter(), time.process_time()
            shard.optimize()
            report["optimize_s"] = time.perf_counter() - started
            report["optimize_cpu_s"] = time.process_time() - cpu
            report["indexed_vectors"] = shard.info().indexed_vectors_count
            report["hnsw_query_ms"] = query_ms(shard, args.seed)
        shard.close()
    report["load_average_end"] = load_avg()
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
