"""The fake GitLab's plain data, shared by its layers: a namespace, a project's snapshot, an armed fault.

The bottom of the fake: it imports no other `fake_gitlab*` module. Above it come the users
(`fake_gitlab_users.py`), the wire format (`fake_gitlab_wire.py`), what the endpoints read of the fake
(`fake_gitlab_port.py`), the endpoints (`fake_gitlab_api.py`), the HTTP server (`fake_gitlab_http.py`)
and, on top, `FakeGitLab` itself (`fake_gitlab.py`); each imports only modules listed before it
(`tests/app/test_layers.py` fails on a circle of imports).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from testkit.git_repo import GitRepo


@dataclass(frozen=True, slots=True, kw_only=True)
class Namespace:
    id: int
    full_path: str
    parent_id: int | None
    kind: str = "group"  # group | user (a personal namespace)

    @property
    def path(self) -> str:
        return self.full_path.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectSnapshot:
    """A consistent copy of a project's identity, taken under the lock, for one request."""

    id: int
    path_with_namespace: str
    default_branch: str
    repo: GitRepo
    created_at: str
    namespace: Namespace
    visibility: str = "private"
    repository_access_level: str = "enabled"
    archived: bool = False
    topics: tuple[str, ...] = ()
    forked_from_id: int | None = None
    marked_for_deletion_on: str | None = None  # a date, "2026-12-08", once an owner asked for delayed deletion
    last_activity_at: datetime = field(default_factory=lambda: datetime.now(tz=UTC))
    updated_at: datetime = field(default_factory=lambda: datetime.now(tz=UTC))

    @property
    def path(self) -> str:
        return self.path_with_namespace.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True, kw_only=True)
class Fault:
    """What a request armed by `FakeGitLab.fail_next` is answered with."""

    status: int
    retry_after: str | None
