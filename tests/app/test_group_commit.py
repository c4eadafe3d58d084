"""GroupCommit: concurrent submits share flushes; each caller gets its own result or the error."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from app.sync.group_commit import GroupCommit


class Recorder:
    """A flush that records its batches and holds each one until released."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.fail_on: set[int] = set()

    async def flush(self, items: Sequence[int]) -> list[int]:
        self.batches.append(list(items))
        await self.gate.wait()
        if self.fail_on & set(items):
            raise OSError(f"flush of {list(items)} failed")
        return [i * 10 for i in items]


async def test_one_caller_alone_is_flushed_at_once() -> None:
    rec = Recorder()
    commit = GroupCommit(rec.flush)
    assert await commit.submit(1) == 10
    assert rec.batches == [[1]]


async def test_callers_that_arrive_during_a_flush_share_the_next_one() -> None:
    rec = Recorder()
    commit = GroupCommit(rec.flush)
    rec.gate.clear()
    first = asyncio.create_task(commit.submit(1))
    await asyncio.sleep(0)  # the drainer starts and holds batch [1] at the gate
    await asyncio.sleep(0)
    rest = [asyncio.create_task(commit.submit(i)) for i in range(2, 7)]
    await asyncio.sleep(0)
    rec.gate.set()
    assert await asyncio.gather(first, *rest) == [10, 20, 30, 40, 50, 60]
    assert rec.batches == [[1], [2, 3, 4, 5, 6]]


async def test_callers_in_the_same_loop_turn_go_out_together_in_order() -> None:
    rec = Recorder()
    commit = GroupCommit(rec.flush)
    results = await asyncio.gather(*(commit.submit(i) for i in range(5)))
    assert results == [0, 10, 20, 30, 40]
    assert rec.batches == [[0, 1, 2, 3, 4]]


async def test_a_batch_never_exceeds_its_limit() -> None:
    rec = Recorder()
    commit = GroupCommit(rec.flush, max_batch=3)
    results = await asyncio.gather(*(commit.submit(i) for i in range(8)))
    assert results == [i * 10 for i in range(8)]
    assert rec.batches == [[0, 1, 2], [3, 4, 5], [6, 7]]


async def test_a_failed_flush_fails_its_own_callers_only() -> None:
    rec = Recorder()
    commit = GroupCommit(rec.flush, max_batch=2)
    rec.fail_on = {2}
    outcomes = await asyncio.gather(*(commit.submit(i) for i in range(1, 6)), return_exceptions=True)
    assert [str(o) for o in outcomes[:2]] == ["flush of [1, 2] failed"] * 2  # both callers of [1, 2]
    assert all(isinstance(o, OSError) for o in outcomes[:2])
    assert outcomes[2:] == [30, 40, 50]  # batches [3, 4] and [5] are not affected
    assert rec.batches == [[1, 2], [3, 4], [5]]


async def test_a_failed_flush_fails_every_caller_in_it() -> None:
    rec = Recorder()
    commit = GroupCommit(rec.flush)
    rec.fail_on = {1}
    outcomes = await asyncio.gather(*(commit.submit(i) for i in range(3)), return_exceptions=True)
    assert all(isinstance(o, OSError) for o in outcomes)
    assert await commit.submit(7) == 70  # the next flush works again


async def test_a_caller_that_goes_away_still_has_its_item_flushed() -> None:
    rec = Recorder()
    commit = GroupCommit(rec.flush)
    rec.gate.clear()
    leaving = asyncio.create_task(commit.submit(1))
    staying = asyncio.create_task(commit.submit(2))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    leaving.cancel()
    await asyncio.sleep(0)
    rec.gate.set()
    assert await staying == 20
    assert leaving.cancelled()
    assert rec.batches == [[1, 2]]


async def test_a_flush_with_the_wrong_number_of_results_is_an_error() -> None:
    async def short(items: Sequence[int]) -> list[int]:
        return [0]

    commit = GroupCommit(short)
    outcomes = await asyncio.gather(commit.submit(1), commit.submit(2), return_exceptions=True)
    assert all(isinstance(o, RuntimeError) for o in outcomes)


async def test_a_drain_cancelled_at_shutdown_leaves_no_caller_waiting() -> None:
    rec = Recorder()
    commit = GroupCommit(rec.flush)
    rec.gate.clear()
    waiting = [asyncio.create_task(commit.submit(i)) for i in range(3)]
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    drainer = commit._drainer
    assert drainer is not None
    drainer.cancel()
    done, pending = await asyncio.wait(waiting, timeout=1)
    assert not pending
    assert all(task.cancelled() for task in done)


def test_a_batch_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_batch"):
        GroupCommit(Recorder().flush, max_batch=0)
