"""What reading a project's build files gives: declared dependencies, and the files that could not be read.

Pure values (issue 16, part 1). `Dependency.unresolved` says why a version is not known; a resolved
dependency has it None and a concrete `version`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from pipeline._values import value

POM = "pom.xml"
GRADLE = ("build.gradle", "build.gradle.kts")
GRADLE_PROPERTIES = "gradle.properties"
CATALOG = "gradle/libs.versions.toml"
BUILD_FILE_NAMES = frozenset({POM, *GRADLE, GRADLE_PROPERTIES, "libs.versions.toml"})
"""The file names that describe dependencies: a change to any of them re-reads the project's build."""


def is_build_file(path: str) -> bool:
    """Whether `path` is a file the build reading reads (`pom.xml`, `build.gradle(.kts)`, a catalog, properties)."""
    name = path.rsplit("/", 1)[-1]
    if name == "libs.versions.toml":
        return path == CATALOG or path.endswith("/" + CATALOG)
    return name in BUILD_FILE_NAMES


class DependencyKind(enum.StrEnum):
    """What a declaration brings in."""

    LIBRARY = "library"  # a jar whose code the project compiles or runs against
    BOM = "bom"  # a Maven BOM import or a Gradle platform: versions only, no code


@value
class Dependency:
    """One declared dependency of one build file."""

    group: str
    artifact: str
    version: str = ""  # "" when not known; the text as far as it resolved otherwise
    kind: DependencyKind = DependencyKind.LIBRARY
    scope: str = ""  # Maven's scope or Gradle's configuration, as written
    source: str  # the build file that declares it
    unresolved: str | None = None  # why `version` is not a concrete version; None: resolved

    @property
    def coordinates(self) -> str:
        """`group:artifact:version` (the version empty when not known)."""
        return f"{self.group}:{self.artifact}:{self.version}"


@value
class Problem:
    """A build file that could not be read (malformed XML, a DOCTYPE, bad TOML), and why."""

    source: str
    detail: str


@value
class BuildReading:
    """Everything read from one project's build files."""

    dependencies: tuple[Dependency, ...] = ()
    problems: tuple[Problem, ...] = ()
    groups: tuple[str, ...] = ()
    """The groups the repository's own artifacts are published under (a pom's groupId, Gradle's `group = ...`)."""


def matches(patterns: tuple[str, ...], group: str, artifact: str) -> bool:
    """Whether `group:artifact` matches one of the globs (`org.springframework*`, `com.acme:*-client`).

    A pattern without a colon names groups only (`org.springframework*` allows every artifact of
    those groups); with one, it is matched against `group:artifact`. No patterns: everything matches.
    """
    if not patterns:
        return True
    key = f"{group}:{artifact}"
    return any(fnmatchcase(key if ":" in p else group, p) for p in patterns)


# Maven's own grammar (maven-model-builder, `org.apache.maven.model.validation.DefaultModelValidator`):
# `ID_REGEX = "[A-Za-z0-9_\\-.]+"` for groupId and artifactId (`validateId`), and a version may not hold
# `ILLEGAL_VERSION_CHARS = ILLEGAL_FS_CHARS = "\\/:\"<>|?*"` (`validateBannedCharacters`). A coordinate
# becomes a URL path on a Maven repository (app.libraries.maven), so ours is that grammar and a little
# stricter (issue 24; docs/decisions.md): no empty group segment, no `..` anywhere (a traversal), a
# version of printable ASCII without `#`, `%`, `;` (a fragment, an escape, Tomcat's `..;`) or
# whitespace, and each part at most MAX_COORDINATE_CHARS (PostgreSQL indexes the three together).
MAVEN_ID = re.compile(r"[A-Za-z0-9_\-.]+")
MAVEN_VERSION = re.compile(r"[\x21-\x7e]+")
BANNED_IN_VERSION = frozenset('\\/:"<>|?*#%;')
MAX_COORDINATE_CHARS = 200


def coordinate_problem(group: str, artifact: str, version: str) -> str | None:
    """Why `group:artifact:version` is not a Maven coordinate safe to fetch (see the grammar above); None: it is."""
    why = _not_maven(group, artifact, version)
    return None if why is None else f"not a Maven coordinate: {why}"


def is_maven_group(group: str) -> bool:
    """Whether `group` is a groupId a library could have (a project's own group is kept only then)."""
    return _part_problem("groupId", group) is None


def _not_maven(group: str, artifact: str, version: str) -> str | None:
    for name, text in (("groupId", group), ("artifactId", artifact), ("version", version)):
        why = _part_problem(name, text)
        if why is not None:
            return why
    banned = sorted(set(version) & BANNED_IN_VERSION)
    if banned or not MAVEN_VERSION.fullmatch(version):
        what = f"holds {''.join(banned)!r}" if banned else "is not printable ASCII without whitespace"
        return f"version {version!r} {what}"
    return None


def _part_problem(name: str, text: str) -> str | None:
    """Why one part is not Maven's: too long, a dot segment, or (group and artifact) not a Maven id."""
    if len(text) > MAX_COORDINATE_CHARS:
        return f"{name} is longer than {MAX_COORDINATE_CHARS} characters"
    if text == "." or ".." in text:
        return f"{name} {text!r} holds a dot segment ('.' or '..')"
    if name == "version":
        return None
    if not MAVEN_ID.fullmatch(text):
        return f"{name} {text!r} is not a Maven id ([A-Za-z0-9_\\-.]+)"
    if name == "groupId" and (text.startswith(".") or text.endswith(".")):
        return f"groupId {text!r} has an empty segment"
    return None


MAX_REASON_CHARS = 1000
"""An unresolved reason or a problem is stored cut to this (a reason may name every BOM a pom imports)."""


def bounded(text: str, limit: int = MAX_COORDINATE_CHARS) -> str:
    """`text` cut to `limit` characters (with `…`): what a build file wrote is stored, whatever its length."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


MAX_VALUE_CHARS = 1024
"""A value that interpolation (`${...}`, Gradle's `$x`) grows past this many characters stops there, unresolved."""
MAX_WORK = 1_000_000
"""Interpolation work per build file at most: characters produced plus entries copied (issue 24)."""
OVER_VALUE = f"interpolation grows a value past {MAX_VALUE_CHARS} characters (a property that repeats itself?)"
OVER_WORK = f"interpolation stopped after {MAX_WORK} units of work for this build file (a property bomb?)"


@dataclass(slots=True)
class Work:
    """What interpolating one build file may still spend, and the first bound it hit (its problem), if any.

    A 332-byte pom whose property refers to itself six times grows six-fold at each of the ten rounds
    of nesting followed (6^10 copies): issue 24. Every bound hit leaves that value unresolved and the
    file recorded once as a problem with this reason; its other declarations are still read.
    """

    left: int = MAX_WORK
    hit: str | None = None

    def spend(self, amount: int) -> bool:
        """Charge `amount`; False once the budget is spent (and from then on)."""
        self.left -= amount
        if self.left < 0 and self.hit is None:
            self.hit = OVER_WORK
        return self.left >= 0


def expand(
    text: str, pattern: re.Pattern[str], value: Callable[[re.Match[str]], str], work: Work
) -> tuple[str, str | None]:
    """`pattern.sub(value, text)` within the bounds: (the result, None), or (`text`, why it was not expanded).

    The result's length is known before it is built, so a value past MAX_VALUE_CHARS costs no more than that.
    """
    if work.left < 0:
        return text, OVER_WORK
    pieces: list[str] = []
    size = at = 0
    for match in pattern.finditer(text):
        replacement = value(match)
        pieces += (text[at : match.start()], replacement)
        size += match.start() - at + len(replacement)
        at = match.end()
        if size > MAX_VALUE_CHARS:
            work.hit = work.hit or OVER_VALUE
            return text, OVER_VALUE
    if not pieces:
        return text, None
    pieces.append(text[at:])
    size += len(text) - at
    if size > MAX_VALUE_CHARS:
        work.hit = work.hit or OVER_VALUE
        return text, OVER_VALUE
    if not work.spend(size):
        return text, OVER_WORK
    return "".join(pieces), None


LIBRARY_PREFIX = "maven:"
"""The `repo_path` of a library's chunks starts with this; a GitLab path never holds a colon."""


def library_repo_path(group: str, artifact: str, version: str) -> str:
    """`maven:<group>:<artifact>:<version>`: the `repo_path` a library version is indexed under."""
    return f"{LIBRARY_PREFIX}{group}:{artifact}:{version}"


def parse_library_repo_path(repo_path: str) -> tuple[str, str, str] | None:
    """(group, artifact, version) of a library's `repo_path`, or None for the org's own code."""
    if not repo_path.startswith(LIBRARY_PREFIX):
        return None
    parts = repo_path.removeprefix(LIBRARY_PREFIX).split(":")
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 and all(parts) else None
