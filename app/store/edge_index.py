"""The embedded store's dense-vector index (HNSW), kept built while `serve` writes: in another process.

Edge 0.9.0's `optimize()` holds the GIL for the whole build (29.7 s for 10,000 768-dim points: not one
tick of another Python thread meanwhile; docs/decisions.md), so it cannot run on a thread of the serving
process, and a second process cannot open a shard the first holds. So a build works on a copy:

1. on the store's thread (so between two Edge calls): flush the generation's shard, copy its folder to
   `<name>.hnsw-build`, and start journaling every update applied to the generation from then on;
2. `python -m app.store.edge_optimize <copy>` builds the index there, at a lower priority, while the
   store keeps answering from the live shard (dense search an exact scan) and keeps writing to it;
3. open the built copy and apply the journal to it, in order, `CATCH_UP_OPS` updates per turn of the store's
   thread (searches and writes go on between turns, and writes keep adding to the journal);
4. in one turn: apply the journal's last updates, close both shards, put the copy in the live folder's place
   (the old folder kept as `<name>.hnsw-old` until the end) and open it there.

A build starts after writes to a generation (or when `serve` opens it) once Edge's counts say at least
`threshold` dense vectors lack the index; one at a time. A journal past `journal_max` points gives the
build up (the copy is deleted, the next writes try again): its updates are kept in memory. A process that
stops inside step 4 leaves `<name>.hnsw-old`, the shard as of the swap; the next open puts it back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from app.core.errors import StorageError

logger = logging.getLogger(__name__)

BUILDING = ".hnsw-build"  # the copy being indexed
OLD = ".hnsw-old"  # the shard as of a swap, until its journal is applied to the copy
DEAD = ".hnsw-dead"  # the old folder once the swap is done, being deleted
CHECK_EVERY = 4  # a write count of threshold / CHECK_EVERY points since the last look asks Edge's counts again
POLL_S = 0.5  # how often a running build looks at its journal's size
CATCH_UP_OPS = 16  # journaled updates (of up to 64 points) applied to the built copy per turn of the store's thread
BUILT = "built"  # the last line `app.store.edge_optimize` prints when it built an index
Runner = Callable[..., Awaitable[Any]]  # EdgeStore._run: (action, call, *args) on the store's thread


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildPolicy:
    """When the serving process builds a generation's dense index (`QdrantSettings.index_build`)."""

    threshold: int  # dense vectors without the index that start a build; 0: never
    journal_max: int  # points written during a build past which it is given up


@dataclass(slots=True)
class BuildState:
    """What the builds did so far (tests and the bench read it)."""

    running: str | None = None  # the generation being built
    completed: int = 0
    abandoned: int = 0
    failed: int = 0
    history: list[dict[str, float]] = field(default_factory=list)  # per completed build: counts and seconds


def unindexed(info: qe.ShardInfo) -> int:
    """Dense vectors without the index, from Edge's counts: each point's lexical vector counts as indexed.

    An estimate (a point without a lexical vector counts as one more); a build that finds nothing to
    do records what was left (`IndexBuilds._floor`), so it is not tried again for the same points.
    """
    return max(0, 2 * info.points_count - info.indexed_vectors_count)


def recover(root: Path, name: str) -> None:
    """Undo a swap a stopped process left half done: its old folder is the shard as of the swap."""
    old, live = root / (name + OLD), root / name
    if old.is_dir():
        logger.warning("restoring %s from %s: the process stopped while swapping in its vector index", name, old)
        shutil.rmtree(live, ignore_errors=True)
        os.rename(old, live)
    for leftover in (BUILDING, DEAD):
        shutil.rmtree(root / (name + leftover), ignore_errors=True)


class IndexBuilds:
    """Background index builds of one store's generations (see the module docstring)."""

    def __init__(self, root: Path, shards: MutableMapping[str, qe.EdgeShard], run: Runner, policy: BuildPolicy) -> None:
        self.root = root
        self.policy = policy
        self.state = BuildState()
        self._shards = shards
        self._run = run
        self._journal: list[qe.UpdateOperation] | None = None
        self._journaled = 0
        self._written = 0
        self._floor = 0  # unindexed() a build left as it was: what it counts that Edge does not build
        self._task: asyncio.Task[None] | None = None
        self._built: qe.EdgeShard | None = None  # the built copy, open in this process while it catches up
        self.optimizer = [sys.executable, "-m", "app.store.edge_optimize"]  # the command, given the copy's folder

    # --- on the store's thread -----------------------------------------------------------------

    def apply(self, name: str, ops: Sequence[qe.UpdateOperation], points: int) -> None:
        """Apply updates to a generation's current shard and journal them while it is being built."""
        shard = self._shards.get(name)
        if shard is None:
            raise StorageError(f"Collection {name!r} is closed")
        for op in ops:
            shard.update(op)
        if self._journal is not None and name == self.state.running:
            self._journal.extend(ops)
            self._journaled += points
            if self._journaled > self.policy.journal_max:
                self._journal = None  # the build is given up (`_wait`)

    def _copy(self, name: str) -> Path:
        self._shards[name].flush()
        copy = self.root / (name + BUILDING)
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(self.root / name, copy)
        self._journal, self._journaled = [], 0
        return copy

    def _catch_up(self, built: qe.EdgeShard) -> int | None:
        """Apply the journal's oldest `CATCH_UP_OPS` updates to the built copy; the number left (None: given up)."""
        if self._journal is None:
            return None
        batch = self._journal[:CATCH_UP_OPS]
        del self._journal[:CATCH_UP_OPS]
        for op in batch:
            built.update(op)
        return len(self._journal)

    def _swap(self, name: str, copy: Path, built: qe.EdgeShard) -> int:
        """Put the caught-up copy in the live one's place; `name` stays in `_shards` throughout (the loop reads it)."""
        journal, self._journal = self._journal or [], None
        for op in journal:
            built.update(op)
        built.close()  # reopened from the live folder's path below: Edge keeps the path it was opened at
        live, old = self.root / name, self.root / (name + OLD)
        self._shards[name].close()
        os.rename(live, old)
        os.rename(copy, live)
        try:
            shard = qe.EdgeShard.load(str(live))
        except Exception:  # Edge raises bare exceptions: the old shard goes back
            recover(self.root, name)
            self._shards[name] = qe.EdgeShard.load(str(live))
            raise
        self._shards[name] = shard
        os.rename(old, self.root / (name + DEAD))
        shutil.rmtree(self.root / (name + DEAD), ignore_errors=True)
        return len(journal)

    # --- on the event loop ---------------------------------------------------------------------

    def wrote(self, name: str, points: int, dense: bool) -> None:
        """After a write: look at Edge's counts again once enough points were written since the last look."""
        if not self.policy.threshold or not dense:
            return
        self._written += points
        if self._written * CHECK_EVERY >= self.policy.threshold:
            self.consider(name, dense)

    def consider(self, name: str, dense: bool) -> None:
        """Start a build of `name` in the background if none runs and enough of its vectors lack the index."""
        if not self.policy.threshold or not dense or (self._task is not None and not self._task.done()):
            return
        self._written = 0
        self._task = asyncio.get_running_loop().create_task(self._build(name), name=f"vector index of {name}")

    async def _build(self, name: str) -> None:
        try:
            await self._build_once(name)
        except asyncio.CancelledError:
            raise
        except Exception:  # the outer edge of a background task: logged once, the store keeps serving
            self.state.failed += 1
            logger.exception("building the vector index of %s failed; searches stay exact", name)
        finally:
            self.state.running = None
            self._journal = None
            built, self._built = self._built, None
            if built is not None:  # given up or stopped while catching up: the copy's shard is still open
                await self._run(f"closing the built copy of {name!r}", built.close)
            shutil.rmtree(self.root / (name + BUILDING), ignore_errors=True)  # a failed build's copy

    async def _build_once(self, name: str) -> None:
        info = await self._run(f"reading collection {name!r}", self._shards[name].info)
        missing = unindexed(info)
        if missing - self._floor < self.policy.threshold:
            return
        started = time.perf_counter()
        self.state.running = name
        logger.info("building the vector index of %s in the background (%d vectors without it)", name, missing)
        copy = await self._run(f"copying collection {name!r}", self._copy, name)
        copied = time.perf_counter()
        built = await self._optimized(copy)
        if built is not True:
            shutil.rmtree(copy, ignore_errors=True)
            self.state.abandoned += built is None
            self._floor = missing if built is False else self._floor
            return
        optimized = time.perf_counter()
        built_shard, replayed = await self._caught_up(name, copy)
        if built_shard is None:  # `_build` closes it and deletes the copy
            self.state.abandoned += 1
            return
        caught_up = time.perf_counter()
        self._built = None  # the swap closes it
        replayed += await self._run(f"swapping in the vector index of {name!r}", self._swap, name, copy, built_shard)
        done = time.perf_counter()
        self.state.completed += 1
        self.state.history.append(
            {
                "unindexed": missing,
                "copy_s": copied - started,
                "optimize_s": optimized - copied,
                "catch_up_s": caught_up - optimized,
                "swap_s": done - caught_up,
                "updates_replayed": replayed,
            }
        )
        logger.info(
            "vector index of %s built in %.1f s (%d updates made meanwhile applied)", name, done - started, replayed
        )

    async def _caught_up(self, name: str, copy: Path) -> tuple[qe.EdgeShard | None, int]:
        """Open the built copy and apply the journal to it in short calls until what is left is one call's worth.

        Each call is one turn of the store's thread: searches and writes go on between them (and writes
        keep adding to the journal). None when the journal outgrew its bound meanwhile.
        """
        built = self._built = await self._run(f"opening the built copy of {name!r}", qe.EdgeShard.load, str(copy))
        replayed = 0
        while True:
            before = len(self._journal) if self._journal is not None else 0
            left = await self._run(f"catching up the built copy of {name!r}", self._catch_up, built)
            if left is None:
                return None, replayed  # closed by `_build`
            replayed += min(before, CATCH_UP_OPS)
            if left <= CATCH_UP_OPS:
                return built, replayed

    async def _optimized(self, copy: Path) -> bool | None:
        """Build the copy's index in another process: whether it built any; None when given up (journal too long)."""
        with tempfile.TemporaryFile() as output:
            process = await asyncio.create_subprocess_exec(*self.optimizer, str(copy), stdout=output, stderr=output)
            try:
                while not await _exited(process):
                    if self._journal is None:
                        logger.warning("vector index build given up: %d points written meanwhile", self._journaled)
                        return None
            finally:
                if process.returncode is None:
                    process.kill()
                    await process.wait()
            output.seek(0)
            said = output.read().decode(errors="replace")
        if process.returncode != 0:
            raise StorageError(f"the vector index build exited with {process.returncode}: {said[-2000:]}")
        return said.strip().endswith(BUILT)

    async def close(self) -> None:
        """Stop a running build (its process killed, its copy deleted); the live shard stays as it is."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for name in list(self._shards):
            shutil.rmtree(self.root / (name + BUILDING), ignore_errors=True)

    @property
    def journaling(self) -> bool:
        """Whether a build's copy is made and the updates since are being kept for it."""
        return self._journal is not None

    async def wait(self) -> None:
        """Until the running build (if any) is over: a test's or a bench's wait (its caller bounds it)."""
        if self._task is not None:
            await asyncio.shield(self._task)


async def _exited(process: asyncio.subprocess.Process) -> bool:
    """Whether the process ended within `POLL_S`."""
    try:
        await asyncio.wait_for(asyncio.shield(process.wait()), POLL_S)
    except TimeoutError:
        return False
    return True
