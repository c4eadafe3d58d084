"""The per-project advisory lock works for every int64 project id (issue 9)."""

from __future__ import annotations

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
