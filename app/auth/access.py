"""Who may read what: the `Access` a caller holds, and the Qdrant condition that enforces it.

Three kinds of caller reach the search module (docs/security.md):

- a GitLab identity (an OAuth login or a personal/project/group access token): the ids of the
  projects it may read, resolved by `app.auth.identity`;
- a service token from the settings: the repository path prefixes it may read;
- the local CLI and GitLab administrators: everything.

`Access.condition()` is the one place that turns this into a filter, and every `SearchService`
entry point puts it into the same Qdrant query as the caller's own filters, so limits, ranking and
counts only ever see readable points. `Access.may_read()` applies the same rule to a PostgreSQL
row (`list_repos`), so the two can never disagree. This module is pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from app.core.access_settings import token_digest as token_digest
from app.store import filters
from app.store.filters import Condition, Filter

PROJECT_ID_FIELD = "gitlab_project_id"
REPO_PREFIXES_FIELD = "repo_prefixes"


class ReadSet(NamedTuple):
    """What a caller may read, as query terms: everything, or projects by id, exact path or group prefix."""

    everything: bool
    ids: tuple[int, ...]
    paths: tuple[str, ...]
    prefixes: tuple[str, ...]  # each ending in '/'


@dataclass(frozen=True, slots=True, kw_only=True)
class Access:
    """What one caller may read. Exactly one of `project_ids` / `repo_prefixes` is set, or neither (everything).

    `subject` names the caller in logs and rate limits (`user:42`, `service:ci`, `local`); it is never
    a token.
    """

    subject: str
    project_ids: frozenset[int] | None = None
    repo_prefixes: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.project_ids is not None and self.repo_prefixes is not None:
            raise ValueError("an Access limits by project ids or by repository prefixes, not both")

    @property
    def unrestricted(self) -> bool:
        """Whether this caller reads everything (local CLI, GitLab administrators)."""
        return self.project_ids is None and self.repo_prefixes is None

    @property
    def scope_key(self) -> tuple[object, ...]:
        """A hashable key equal for callers that read exactly the same points (for per-scope caches)."""
        if self.project_ids is not None:
            return ("ids", self.project_ids)
        if self.repo_prefixes is not None:
            return ("prefixes", frozenset(self.repo_prefixes))
        return ("all",)

    def condition(self) -> Condition | None:
        """The filter condition that keeps only readable points (None: nothing to filter).

        A GitLab identity's set is written as whichever is shorter of the allowed ids, or the range
        `1..max(allowed)` minus the ids in it that are not allowed (`complement_condition`). Both
        select exactly the same points, derived from the allowed set alone: a project created or
        indexed later has a larger id or is simply not allowed, so neither form can let it through.
        Embedded Qdrant checks a `MatchAny` id by id for every point (docs/performance.md), so the
        shorter list is what keeps a reader of most of 20,000 projects affordable.
        """
        if self.repo_prefixes is not None:
            return filters.any_of(REPO_PREFIXES_FIELD, self.repo_prefixes) if self.repo_prefixes else nothing()
        if self.project_ids is None:
            return None
        if not self.project_ids:
            return nothing()
        allowed = sorted(self.project_ids)
        highest = allowed[-1]
        if highest - len(allowed) < len(allowed):  # the gaps below the highest id are fewer than the ids
            gaps = sorted(set(range(1, highest + 1)) - self.project_ids)
            return complement_condition(highest, gaps)
        return filters.any_of(PROJECT_ID_FIELD, allowed)

    def read_set(self) -> ReadSet:
        """The same rule as `may_read`, as the terms a PostgreSQL query filters by (`app.db.status`)."""
        if self.repo_prefixes is not None:
            groups = tuple(p for p in self.repo_prefixes if p.endswith("/"))
            paths = tuple(p for p in self.repo_prefixes if not p.endswith("/"))
            return ReadSet(everything=False, ids=(), paths=paths, prefixes=groups)
        if self.project_ids is None:
            return ReadSet(everything=True, ids=(), paths=(), prefixes=())
        return ReadSet(everything=False, ids=tuple(sorted(self.project_ids)), paths=(), prefixes=())

    def may_read(self, repo_path: str, project_id: int | None) -> bool:
        """The same rule as `condition()`, for one project known by path and (GitLab) id."""
        if self.repo_prefixes is not None:
            return any(_path_in(repo_path, prefix) for prefix in self.repo_prefixes)
        if self.project_ids is None:
            return True
        return project_id is not None and project_id in self.project_ids


def complement_condition(highest: int, gaps: Sequence[int]) -> Filter:
    """Points of a GitLab project whose id is in `1..highest` and not one of `gaps`."""
    excluded = [filters.any_of(PROJECT_ID_FIELD, gaps)] if gaps else []
    return filters.all_of(filters.between(PROJECT_ID_FIELD, 1, highest), none_of=excluded)


def everything(subject: str) -> Access:
    """An unrestricted access (the local CLI, a GitLab administrator)."""
    return Access(subject=subject)


LOCAL = everything("local")
"""The local CLI's access: the person who runs `javakb` owns the store."""


def _path_in(repo_path: str, prefix: str) -> bool:
    # The same rule as the `repo_prefixes` payload (app.store.vectors): `a/` covers `a/b`, `a/b` is only itself.
    return repo_path == prefix or (prefix.endswith("/") and repo_path.startswith(prefix))


def nothing() -> Filter:
    """A condition no point satisfies: an empty readable set must read nothing, not everything."""
    return filters.all_of(filters.is_empty("repo_path"))
