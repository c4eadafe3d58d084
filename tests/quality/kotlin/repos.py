"""The Kotlin Spring repository of the `kotlin` question set, pinned; materialised by the same
`tests.quality.real.repos.materialise` (a local mirror root or a shallow fetch)."""

from __future__ import annotations

from typing import Final

from tests.quality.real.repos import Pin

PETCLINIC_KOTLIN: Final = Pin("spring-petclinic", "spring-petclinic-kotlin", "49f13fcbd34d32c45f19b1730a4574b824b08bf2")
PINS: Final[tuple[Pin, ...]] = (PETCLINIC_KOTLIN,)
