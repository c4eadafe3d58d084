"""Which library versions to fetch, keep, mark and purge: pure (issue 16; docs/dependencies.md).

Input: how many projects in scope use each resolved version, the rows already kept, the settings.
A version is wanted when the allowlist allows it, enough projects use it, and its group is not one
the org's own projects publish under (that is our code, readable only as its project allows); wanted versions are
taken most-used first up to `max_libraries`. Wanted and not indexed yet (or failed, or over budget
last time) is fetched; indexed stays; `no_sources` is not asked again. A version no project uses
any more is purged: its points and its row go. An indexed version that stopped being wanted loses
its points and keeps a row saying why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.core.settings import LibrarySettings
from app.core.states import LibraryStatus
from app.db import Coordinates, LibraryRow
from pipeline.buildfiles import coordinate_problem, matches

RETRIED = frozenset({LibraryStatus.PENDING, LibraryStatus.FAILED, LibraryStatus.OVER_BUDGET, LibraryStatus.NOT_ALLOWED})


@dataclass(frozen=True, slots=True, kw_only=True)
class LibraryPlan:
    """What one run of the library job does."""

    fetch: tuple[Coordinates, ...]  # most used first
    keep: tuple[Coordinates, ...]  # indexed and still wanted
    mark: Mapping[Coordinates, tuple[LibraryStatus, str]]  # rows to (re)write without fetching
    unindex: tuple[Coordinates, ...]  # indexed, not wanted any more: points go, the row stays (in `mark`)
    forget: tuple[Coordinates, ...]  # used by no project: points and row go


OWN = "built by one of the organization's projects: its code is indexed with that project's access rules"


def plan_libraries(
    usage: Mapping[Coordinates, int],
    known: Mapping[Coordinates, LibraryRow],
    settings: LibrarySettings,
    *,
    own: frozenset[str] = frozenset(),
) -> LibraryPlan:
    """Decide per library version (see the module docstring); a group in `own` is the org's code, never fetched."""
    allow = tuple(settings.allow)
    ranked = sorted(usage, key=lambda c: (-usage[c], c))
    mark: dict[Coordinates, tuple[LibraryStatus, str]] = {}
    wanted: list[Coordinates] = []
    for coordinates in ranked:
        group, artifact, _ = coordinates
        if (problem := coordinate_problem(*coordinates)) is not None:  # recorded before issue 24's check
            mark[coordinates] = (LibraryStatus.NOT_ALLOWED, problem)
        elif group in own:
            mark[coordinates] = (LibraryStatus.NOT_ALLOWED, OWN)
        elif not matches(allow, group, artifact):
            mark[coordinates] = (LibraryStatus.NOT_ALLOWED, "outside JAVAKB_LIBRARIES__ALLOW")
        elif usage[coordinates] < settings.min_projects:
            mark[coordinates] = (
                LibraryStatus.NOT_ALLOWED,
                f"used by {usage[coordinates]} projects, fewer than"
                f" JAVAKB_LIBRARIES__MIN_PROJECTS={settings.min_projects}",
            )
        elif len(wanted) >= settings.max_libraries:
            mark[coordinates] = (
                LibraryStatus.OVER_BUDGET,
                f"past JAVAKB_LIBRARIES__MAX_LIBRARIES={settings.max_libraries}",
            )
        else:
            wanted.append(coordinates)
    fetch: list[Coordinates] = []
    keep: list[Coordinates] = []
    for coordinates in wanted:
        row = known.get(coordinates)
        status = row.status if row is not None else LibraryStatus.PENDING
        if status is LibraryStatus.INDEXED:
            keep.append(coordinates)
        elif status in RETRIED:
            fetch.append(coordinates)
    unindex = tuple(c for c, row in known.items() if row.status is LibraryStatus.INDEXED and c in mark)
    forget = tuple(sorted(c for c in known if c not in usage))
    mark = {c: v for c, v in mark.items() if known.get(c) is None or (known[c].status, known[c].detail) != v}
    return LibraryPlan(fetch=tuple(fetch), keep=tuple(keep), mark=mark, unindex=unindex, forget=forget)
