"""The indexing scope (issue 9): which GitLab projects are indexed at all. Pure: facts in, a decision out.

`decide(info, scope)` judges a project from what `GET /projects/:id` says (`ProjectInfo`); the
receiver knows only a payload's path and asks `decide_path`, which applies the same path rules and
leaves the rest to the sync. Every caller acts on the decision the same way: an out-of-scope
project is never synced, and a known one that leaves scope is purged (`app.sync.lifecycle`).

The rules, first match wins: a project marked for deletion is out; a path under a `deny` prefix is
out; with an `allow` list, a path under none of its prefixes is out; then personal namespaces,
forks and archived projects are out unless their setting says otherwise; and a project carrying the
opt-out topic is out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.events import Event, Ignored, SyncRequested

if TYPE_CHECKING:
    from app.core.settings import ScopeSettings
    from app.gitlab.client import ProjectInfo


@dataclass(frozen=True, slots=True, kw_only=True)
class InScope:
    """The project is indexed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OutOfScope:
    """The project is not indexed, and why (shown as its status detail and in delivery records)."""

    reason: str


Decision = InScope | OutOfScope
IN_SCOPE = InScope()


def under(path: str, prefix: str) -> bool:
    """Whether `path` is `prefix` or inside it, on whole segments and case-insensitively (GitLab routes)."""
    lowered = path.lower()
    return lowered == prefix or lowered.startswith(prefix + "/")


def decide_path(path: str, scope: ScopeSettings) -> Decision:
    """The rules that need only a project's path (`path_with_namespace`).

    Reasons never repeat the path: the receiver answers with them, and a payload's path is not ours to echo.
    """
    denied = next((p for p in scope.deny if under(path, p)), None)
    if denied is not None:
        return OutOfScope(reason=f"under the denied prefix {denied!r}")
    if scope.allow and not any(under(path, p) for p in scope.allow):
        return OutOfScope(reason="under none of the allowed prefixes")
    return IN_SCOPE


def decide(info: ProjectInfo, scope: ScopeSettings) -> Decision:
    """The whole decision for a project as the GitLab API describes it."""
    if info.marked_for_deletion_on:
        return OutOfScope(reason=f"marked for deletion on {info.marked_for_deletion_on}")
    by_path = decide_path(info.path_with_namespace, scope)
    if isinstance(by_path, OutOfScope):
        return by_path
    if info.namespace_kind == "user" and not scope.personal:
        return OutOfScope(reason="in a personal namespace (scope.personal is off)")
    if info.forked_from_id is not None and not scope.forks:
        return OutOfScope(reason=f"a fork of project {info.forked_from_id} (scope.forks is off)")
    if info.archived and not scope.archived:
        return OutOfScope(reason="archived (scope.archived is off)")
    topic = scope.ignore_topic
    if topic is not None and topic.casefold() in {t.casefold() for t in info.topics}:
        return OutOfScope(reason=f"opted out with the topic {topic!r}")
    return IN_SCOPE


def screen(event: Event, scope: ScopeSettings) -> Event:
    """The receiver's check: a push whose path is out of scope becomes `Ignored` with the reason.

    Lifecycle events always pass: a destroy, move or update of a project that is (or was) indexed
    must reach the worker, which confirms it with the API and applies the whole decision.
    """
    if not isinstance(event, SyncRequested):
        return event
    decision = decide_path(event.repo_path, scope)
    if isinstance(decision, OutOfScope):
        return Ignored(event=event.event, reason=f"out of scope: {decision.reason}", project_id=event.project_id)
    return event
