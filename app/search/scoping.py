"""Scoping and access: whose code a read covers and the one filter a caller's read runs under.

Every entry point takes the caller's `Access` first; its condition goes into the same Qdrant query
as the caller's filters (never applied afterwards), so limits, ranking and counts only see what the
caller may read, and an unreadable repository answers exactly as a nonexistent one.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass

from app.auth.access import Access, nothing
from app.search.hits import Hit
from app.search.ranking import handles
from app.store.filters import Condition, Filter, all_of, any_of, either, eq
from app.store.payloads import flagged
from pipeline.spring import ANY_METHOD


class SearchScope(enum.StrEnum):
    """Whose code a read covers (issues 16, 27): the org's own (the default), its tests, the libraries', or all."""

    CODE = "code"
    TESTS = "tests"
    LIBRARIES = "libraries"
    ALL = "all"


SCOPE_HELP = (
    "code: the organization's code (default, never its tests); tests: its test code (indexed with "
    "JAVAKB_CHUNKING__INDEX_TESTS); libraries: indexed dependency sources; all: every one."
)
"""What a `scope` parameter means, for the MCP tools, the REST API and the CLI."""

LIBRARY_FLAG = "library"
"""The chunk flag (`app.store.payloads.FLAGS`) of a library's points."""
TEST_FLAG = "test"
"""The chunk flag of test code's points (`pipeline.scope.is_test`)."""
OUTSIDE_CODE = (LIBRARY_FLAG, TEST_FLAG)
"""The flags of points the `code` scope leaves out."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Where:
    """Where a lookup looks: `repo` (ending in `/`, a group prefix), `path_prefix` (a folder or file), `language`.

    Every exact lookup and set page takes one (`app.search.lookups`, `sets`, `endpoints`); `Filters` is one
    with a search's other filters.
    """

    repo: str | None = None
    path_prefix: str | None = None
    language: str | None = None  # `java` or `kotlin` (`Chunk.language`)

    def as_filters(self) -> Filters:
        """These three alone as search filters (a `Filters`' others left out)."""
        return Filters(repo=self.repo, path_prefix=self.path_prefix, language=self.language)

    def in_repo(self) -> Where:
        """All of `repo`: the folder and language left out (what a lookup of the symbol asked about reads)."""
        return Where(repo=self.repo)

    def narrowing(self) -> list[Condition]:
        """The folder's and language's store conditions alone, for a read whose repository is set apart (hierarchy)."""
        return [
            *([in_folder(self.path_prefix)] if self.path_prefix else []),
            *([eq("language", self.language)] if self.language else []),
        ]


EVERYWHERE = Where()
"""A lookup's default: every repository, folder and language the caller may read (`Where` is frozen)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Filters(Where):
    """Search filters: where to look (`Where`) and what to keep there.

    `generated`: None for any code, False for hand-written code only, True for generated code only.
    """

    symbol_type: str | None = None
    stereotype: str | None = None
    annotation: str | None = None
    http_method: str | None = None
    generated: bool | None = None


def build_filter(
    access: Access,
    filters: Filters,
    *extra: Condition,
    scope: SearchScope | None = SearchScope.CODE,
    libraries: Collection[str] = (),
) -> Filter | None:
    """Translate the caller's access, search filters and scope to one Qdrant filter (None when nothing filters).

    Library points (the `library` flag) are third-party code: `code` leaves them out, `libraries` reads
    only them, `all` reads them besides what `access` allows. Test code (the `test` flag) is the org's own,
    read under `access` like its other code: `tests` reads only it, `code` leaves it out, `all` reads it.
    A restricted caller reads only the library versions in `libraries` (the `maven:` paths of the versions
    a project it may read uses, `ReadableLibraries`; none when not given); an unrestricted one reads every
    library (docs/security.md).
    The org's own code is filtered by `access.condition()` exactly as without a scope. `scope=None` adds
    the access condition alone (the repositories' facets, which tell library points by their path).
    """
    must: list[Condition] = list(extra)
    must_not: list[Condition] = []
    if filters.repo:
        repo = filters.repo
        must.append(any_of("repo_prefixes", [repo]) if repo.endswith("/") else eq("repo_path", repo))
    if filters.path_prefix:
        must.append(in_folder(filters.path_prefix))
    if filters.symbol_type:
        must.append(eq("symbol_type", filters.symbol_type))
    if filters.stereotype:
        must.append(eq("stereotype", filters.stereotype))
    if filters.annotation:
        must.append(eq("annotation_names", annotation_name(filters.annotation)))
    if filters.http_method:
        must.append(any_of("http_method", [filters.http_method.upper(), ANY_METHOD]))
    if filters.language:
        must.append(eq("language", filters.language))
    if filters.generated is not None:  # must_not: a point written before the field existed reads as hand-written
        (must if filters.generated else must_not).append(flagged("generated"))
    _scoped(access, scope, libraries, must, must_not)
    if not must and not must_not:
        return None
    return Filter(must=must or None, must_not=must_not or None)


def _scoped(
    access: Access,
    scope: SearchScope | None,
    libraries: Collection[str],
    must: list[Condition],
    must_not: list[Condition],
) -> None:
    """Add the scope's and the access's conditions, last (embedded Qdrant checks them in order: they cost most)."""
    readable = access.condition()
    library = flagged(LIBRARY_FLAG)
    if readable is not None:  # a restricted caller: only the library versions its readable projects use
        library = all_of(library, any_of("repo_path", sorted(libraries))) if libraries else nothing()
    if scope is None:
        if readable is not None:
            must.append(readable)
    elif scope is SearchScope.LIBRARIES:
        must.append(library)
    elif scope is SearchScope.ALL:
        if readable is not None:
            must.append(either(readable, library))
    elif scope is SearchScope.TESTS:
        must.append(flagged(TEST_FLAG))
        if readable is not None:
            must.append(readable)
    else:  # must_not: a point written before the flags existed is the org's code
        must_not.extend([library, flagged(TEST_FLAG)])
        if readable is not None:
            must.append(readable)


def in_folder(path_prefix: str) -> Condition:
    """A file or a whole folder (`path_prefix`, slashes around it ignored): the `path_prefixes` filter."""
    prefix = path_prefix.strip("/")
    return any_of("path_prefixes", [prefix, prefix + "/"])


def annotation_name(annotation: str) -> str:
    """`@org.springframework...Transactional(readOnly = true)` → `Transactional`."""
    return annotation.strip().lstrip("@").split("(", 1)[0].rsplit(".", 1)[-1].strip()


def passes(hit: Hit, filters: Filters) -> bool:
    """Whether a hit found by an exact lookup also satisfies the search's other filters."""
    chunk = hit.chunk
    checks = (
        (filters.path_prefix, lambda v: _in_folder(hit.file_path, v.strip("/"))),
        (filters.symbol_type, lambda v: hit.symbol_type == v),
        (filters.stereotype, lambda v: chunk.stereotype == v),
        (filters.annotation, lambda v: annotation_name(v) in chunk.annotation_names),
        (filters.http_method, lambda v: handles([v.upper()], chunk)),
        (filters.language, lambda v: chunk.language == v),
    )
    wanted = filters.generated
    return all(check(value) for value, check in checks if value) and wanted in (None, chunk.generated)


def _in_folder(file_path: str, prefix: str) -> bool:
    """The same rule as the `path_prefixes` filter: the file itself, or a whole folder above it."""
    return file_path == prefix or file_path.startswith(prefix + "/")


ReadableLibraries = Callable[[Access], Awaitable[frozenset[str]]]
"""The `maven:` paths of the library versions a restricted caller may read (`app.libraries.usage.readable_versions`)."""
