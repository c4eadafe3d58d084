"""The held-out repositories, pinned: none is in the real suite (`tests/quality/real/repos.py`) nor in
semble's benchmark. Materialised by the same `tests.quality.real.repos.materialise`."""

from __future__ import annotations

from typing import Final

from tests.quality.real.repos import Pin

PETCLINIC: Final = Pin("spring-projects", "spring-petclinic", "edf4db28affcc4741c79850a3d95bc3f177b5ff9")
REALWORLD: Final = Pin("gothinkster", "spring-boot-realworld-example-app", "ee17e31aafe733d98c4853c8b9a74d7f2f6c924a")
LITEMALL: Final = Pin("linlinjava", "litemall", "a1ef964a718b7277925b19ea26afe78ea3a1d325")
PINS: Final[tuple[Pin, ...]] = (PETCLINIC, REALWORLD, LITEMALL)
