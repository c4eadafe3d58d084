"""The per-project advisory lock works for every int64 project id (issue 9)."""

from __future__ import annotations

import asyncio

import pytest

from app.db import Database, lock_key


@pytest.mark.parametrize("project_id", [1, 2**31 - 1, 2**31, 2**40, 2**63 - 1])
async def test_a_project_lock_is_exclusive_for_every_int64_id(clean_db: str, project_id: int) -> None:
    first, second = await Database.connect(clean_db), await Database.connect(clean_db)
    try:
        async with first.project_lock(project_id) as got:
            assert got
            async with second.project_lock(project_id) as busy:
                assert not busy
            async with second.project_lock(project_id + 1 if project_id < 2**63 - 1 else 1) as other:
                assert other
        async with second.project_lock(project_id) as free_again:
            assert free_again
    finally:
        await first.close()
        await second.close()


def test_lock_keys_are_signed_bigints_and_stable() -> None:
    keys = {lock_key(i) for i in range(10_000)}
    assert len(keys) == 10_000
    assert all(-(2**63) <= k < 2**63 for k in keys)
    assert lock_key(2**63 - 1) == lock_key(2**63 - 1)


async def test_project_locks_wait_while_the_generations_lock_is_held_exclusively(clean_db: str) -> None:
    # A pool of two: one connection for the exclusive lock, one held by a project lock waiting for it.
    db = await Database.connect(clean_db, min_size=1, max_size=2)
    order: list[str] = []
    try:
        async with db.generations_lock() as conn:

            async def sync() -> None:
                async with db.project_lock(7) as got:
                    assert got
                    order.append("project locked")

            waiting = asyncio.create_task(sync())
            await asyncio.sleep(0.2)
            assert order == []  # the project lock waits for the exclusive holder
            # The pool is empty now: the block's queries must use its own connection (db.create_rebuild() would hang).
            await conn.execute("INSERT INTO rebuilds DEFAULT VALUES")
            assert await db.rebuild(1, conn=conn) is not None
            order.append("switched")
        await asyncio.wait_for(waiting, 5)
        assert order == ["switched", "project locked"]
    finally:
        await db.close()
