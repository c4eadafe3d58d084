"""`python -m app.store.edge_optimize FOLDER`: build an Edge shard's dense index (HNSW) in a process of its own.

The serving process starts it on a copy of a generation (`app.store.edge_index`): Edge's `optimize()` holds
the GIL for the whole build, so it must not run in the process that answers searches. It runs at a lower
priority than the service (`NICENESS`) and prints `built` when it built anything, `nothing` otherwise.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

import qdrant_edge as qe

from app.store.edge_index import BUILT

NICENESS = 10  # the service's searches and writes come first on a shared CPU
NOTHING = "nothing"
PR_SET_PDEATHSIG = 1  # prctl(2)


def main(argv: list[str]) -> int:
    """Open the shard at `argv[0]`, run Edge's optimizers until none plans more, close it."""
    (folder,) = argv
    _die_with_parent()
    os.nice(NICENESS)
    shard = qe.EdgeShard.load(folder)
    try:
        built = shard.optimize()
    finally:
        shard.close()
    print(BUILT if built else NOTHING, flush=True)
    return 0


def _die_with_parent() -> None:
    """Be killed when the serving process ends (Linux): nothing else would stop the build, which holds the GIL."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the build runs to its end
        return


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
