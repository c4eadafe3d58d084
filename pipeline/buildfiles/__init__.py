"""Build files to declared dependencies (issue 16, part 1): `read_builds(files) -> BuildReading`.

`files` is every build file of one repository (`is_build_file`), path → bytes. Maven poms are read by
`pipeline.buildfiles.pom`, Gradle scripts and catalogs by `pipeline.buildfiles.gradle`. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from pipeline.buildfiles.gradle import read_gradle
from pipeline.buildfiles.model import (
    MAX_REASON_CHARS,
    POM,
    BuildReading,
    Dependency,
    DependencyKind,
    Problem,
    bounded,
    coordinate_problem,
    is_build_file,
    is_maven_group,
    library_repo_path,
    matches,
    parse_library_repo_path,
)
from pipeline.buildfiles.pom import read_poms

__all__ = [
    "BuildReading",
    "Dependency",
    "DependencyKind",
    "Problem",
    "coordinate_problem",
    "is_build_file",
    "library_repo_path",
    "matches",
    "parse_library_repo_path",
    "read_builds",
]


def read_builds(files: Mapping[str, bytes]) -> BuildReading:
    """The dependencies every build file of a repository declares, each once per file, scope and kind."""
    poms = {path: data for path, data in files.items() if path.rsplit("/", 1)[-1] == POM}
    gradle = {path: data for path, data in files.items() if path not in poms}
    maven_deps, maven_problems, maven_groups = read_poms(poms)
    gradle_deps, gradle_problems, gradle_groups = read_gradle(gradle)
    checked = [checked_coordinates(d) for d in [*maven_deps, *gradle_deps]]
    unique = {(d.source, d.group, d.artifact, d.kind, d.scope): d for d in checked}
    return BuildReading(
        dependencies=tuple(unique.values()),
        problems=tuple(
            dataclasses.replace(p, detail=bounded(p.detail, MAX_REASON_CHARS))
            for p in (*maven_problems, *gradle_problems)
        ),
        groups=tuple(sorted(g for g in maven_groups | gradle_groups if is_maven_group(g))),
    )


def checked_coordinates(dependency: Dependency) -> Dependency:
    """`dependency` with its text cut to a storable length, unresolved when it is no Maven coordinate (issue 24).

    A version that is not a Maven coordinate never reaches the library job: only resolved ones are fetched.
    """
    group, artifact, version = dependency.group, dependency.artifact, dependency.version
    why = dependency.unresolved
    if why is None:
        why = coordinate_problem(group, artifact, version)
    return dataclasses.replace(
        dependency,
        group=bounded(group),
        artifact=bounded(artifact),
        version=bounded(version),
        scope=bounded(dependency.scope),
        unresolved=None if why is None else bounded(why, MAX_REASON_CHARS),
    )
