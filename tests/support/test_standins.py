from __future__ import annotations

from typing import Any

import pytest

from entry.deps import as_built
from testkit.standins import ByRole, Method, around


class Counter:
    def __init__(self) -> None:
        self.total = 0

    def add(self, n: int) -> int:
        self.total += n
        return self.total

    def add_twice(self, n: int) -> int:
        self.add(n)
        return self.add(n)


def recording(seen: list[int]) -> Any:
    def wrap(add: Method) -> Method:
        def recorded(n: int) -> int:
            seen.append(n)
            return int(add(n))

        return recorded

    return wrap


def test_a_wrapped_method_is_seen_from_the_parts_own_methods_too() -> None:
    seen: list[int] = []
    part = Counter()
    counted = around(part, add=recording(seen))

    assert counted.add_twice(3) == 6
    assert seen == [3, 3]  # add_twice ran with the stand-in as self
    assert part.total == counted.total == 6  # state lives on the part


def test_attributes_written_through_the_stand_in_land_on_the_part() -> None:
    part = Counter()
    counted = around(part, add=recording([]))
    counted.total = 41
    assert part.total == 41
    assert counted.add(1) == 42


def test_wrapping_a_method_the_part_lacks_fails_at_once() -> None:
    with pytest.raises(AttributeError, match="no method scroll"):
        around(Counter(), scroll=recording([]))


def test_by_role_wraps_only_the_named_roles() -> None:
    seen: list[int] = []
    wrap = ByRole({"store": {"add": recording(seen)}})
    store, db = wrap("store", Counter()), wrap("db", Counter())
    store.add(1)
    db.add(2)
    assert seen == [1]
    assert isinstance(db, Counter) and not isinstance(store, Counter)
    part = Counter()
    assert as_built("store", part) is part
