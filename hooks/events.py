"""GitLab hook payloads → the few events the indexer acts on (pure).

Dispatch is on `event_name`, falling back to `object_kind` (project and group hooks send both;
instance events sent only to system hooks have only `event_name`). Only the default branch
matters: `ref == refs/heads/<project.default_branch>`, and a null default branch (the first push
to an empty project) counts as default (`Git::BranchHooksService#default_branch?`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.errors import PayloadError
from app.core.events import (  # re-exported: replay jobs queued before the move name these classes here
    MAX_ID,
    MOVE_EVENTS,
    Event,
    GitLabEvent,
    Ignored,
    ProjectDestroyed,
    ProjectMoved,
    ProjectUpdated,
    SyncRequested,
)

__all__ = [
    "MAX_ID",
    "Event",
    "GitLabEvent",
    "Ignored",
    "ProjectDestroyed",
    "ProjectMoved",
    "ProjectUpdated",
    "SyncRequested",
    "parse_event",
]

ZERO_SHA = "0" * 40
_BRANCH_PREFIX = "refs/heads/"
MAX_TEXT_CHARS = 4096  # paths, refs, shas and event names: far above any real one


def parse_event(body: Any) -> Event:
    """Classify a decoded JSON body; malformed bodies raise `PayloadError` with a short reason."""
    if not isinstance(body, dict):
        raise PayloadError("the body is not a JSON object")
    name = body.get("event_name") or body.get("object_kind")
    if not isinstance(name, str) or not name:
        raise PayloadError("no event_name or object_kind")
    _check_text("event_name", name)
    if name == GitLabEvent.PUSH:
        return _push(body)
    if name == GitLabEvent.REPOSITORY_UPDATE:
        return _repository_update(body)
    if name == GitLabEvent.PROJECT_DESTROY:
        return ProjectDestroyed(
            event=GitLabEvent.PROJECT_DESTROY,
            project_id=_int(body, "project_id"),
            repo_path=_str(body, "path_with_namespace"),
        )
    if name in MOVE_EVENTS:
        return ProjectMoved(
            event=GitLabEvent(name),
            project_id=_int(body, "project_id"),
            old_path=_str(body, "old_path_with_namespace"),
            new_path=_str(body, "path_with_namespace"),
        )
    if name == GitLabEvent.PROJECT_UPDATE:
        return ProjectUpdated(
            event=GitLabEvent.PROJECT_UPDATE,
            project_id=_int(body, "project_id"),
            repo_path=_str(body, "path_with_namespace"),
        )
    return Ignored(event=name, reason=f"event {name} is not used")


def _push(body: Mapping[str, Any]) -> Event:
    project = _obj(body, "project")
    project_id = _int(body, "project_id")
    ref, after = _str(body, "ref"), _str(body, "after")
    default = _default_branch(project)
    if not _is_default(ref, default):
        return Ignored(event=GitLabEvent.PUSH, reason=f"{ref} is not the default branch", project_id=project_id)
    if after == ZERO_SHA:
        return Ignored(event=GitLabEvent.PUSH, reason="the default branch was deleted", project_id=project_id)
    return _sync_requested(GitLabEvent.PUSH, project_id, project, default, ref, after)


def _repository_update(body: Mapping[str, Any]) -> Event:
    project = _obj(body, "project")
    project_id = _int(body, "project_id")
    default = _default_branch(project)
    changes = body.get("changes")
    if not isinstance(changes, list):
        raise PayloadError("changes is missing or not a list")
    for change in changes:
        if not isinstance(change, dict):
            raise PayloadError("a change is not an object")
        ref, after = _str(change, "ref"), _str(change, "after")
        if _is_default(ref, default) and after != ZERO_SHA:
            return _sync_requested(GitLabEvent.REPOSITORY_UPDATE, project_id, project, default, ref, after)
    return Ignored(event=GitLabEvent.REPOSITORY_UPDATE, reason="no change to the default branch", project_id=project_id)


def _sync_requested(
    event: GitLabEvent, project_id: int, project: Mapping[str, Any], default: str | None, ref: str, after: str
) -> SyncRequested:
    """A sync of the project's default branch, which `ref` names, up to `after`."""
    return SyncRequested(
        event=event,
        project_id=project_id,
        repo_path=_str(project, "path_with_namespace"),
        default_branch=default,
        ref=ref,
        after=after,
    )


def _default_branch(project: Mapping[str, Any]) -> str | None:
    value = project.get("default_branch")
    return _check_text("default_branch", value) if isinstance(value, str) and value else None


def _is_default(ref: str, default: str | None) -> bool:
    if not ref.startswith(_BRANCH_PREFIX):
        return False  # tags and other refs
    return default is None or ref == _BRANCH_PREFIX + default


def _obj(body: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = body.get(key)
    if not isinstance(value, dict):
        raise PayloadError(f"{key} is missing or not an object")
    return value


def _str(body: Mapping[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise PayloadError(f"{key} is missing or not a string")
    return _check_text(key, value)


def _check_text(key: str, value: str) -> str:
    """Refuse what PostgreSQL cannot store (NUL, lone surrogates) or what is absurdly long, at the edge."""
    if len(value) > MAX_TEXT_CHARS:
        raise PayloadError(f"{key} is longer than {MAX_TEXT_CHARS} characters")
    if "\x00" in value:
        raise PayloadError(f"{key} contains a NUL character")
    try:
        value.encode()
    except UnicodeEncodeError as exc:
        raise PayloadError(f"{key} is not valid Unicode (a lone surrogate)") from exc
    return value


def _int(body: Mapping[str, Any], key: str) -> int:
    value = body.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise PayloadError(f"{key} is missing or not an integer")
    if not 1 <= value <= MAX_ID:
        raise PayloadError(f"{key} is out of range (1 to 2^63-1)")
    return value
