"""A fake GitLab REST API over real HTTP, whose data comes from real git repositories.

`FakeGitLab` runs a `ThreadingHTTPServer` on 127.0.0.1 in a background thread and serves the handful of
`/api/v4` endpoints the sync job uses (projects, branches, compare, tree, raw files and blobs) with the
JSON shapes, headers, pagination and error bodies of GitLab itself, so python-gitlab (or httpx) works
against it unchanged. Each project is a git repository made with the git CLI under the test's tmp dir;
tests change it through `FakeProject` (commit, rename, force-reset, branch) and the fake reads git again
on every request. The endpoint logic lives in `testkit/fake_gitlab_api.py`, the HTTP server in
`testkit/fake_gitlab_http.py`; both read this class through `GitLabState` (`testkit/fake_gitlab_port.py`)
and the plain data (`ProjectSnapshot`, ...) lives in `testkit/fake_gitlab_model.py`, so this module sits on
top and none of them imports it.

    with FakeGitLab(tmp_path) as gl:
        project = gl.create_project("acme/shop")
        sha = project.commit({"src/main/java/A.java": "class A {}"}, "add A")
        client = gitlab.Gitlab(gl.url, private_token=gl.token)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import unquote

from testkit.fake_gitlab_api import GitLabApi
from testkit.fake_gitlab_http import GitLabHandler, GitLabServer, NoDelayGitLabHandler
from testkit.fake_gitlab_jobs import CiJobs
from testkit.fake_gitlab_model import Fault, Namespace, ProjectSnapshot
from testkit.fake_gitlab_users import Directory
from testkit.git_repo import GitError, GitRepo

ACTIVITY_INTERVAL = timedelta(hours=1)  # gitlabhq `Event::RESET_PROJECT_ACTIVITY_INTERVAL`


@dataclass(eq=False)
class FakeProject:
    """A project of the fake: identity (changed through `FakeGitLab`) plus a real git repository."""

    id: int
    path_with_namespace: str
    default_branch: str
    repo: GitRepo
    created_at: str
    visibility: str = "private"  # private | internal | public
    repository_access_level: str = "enabled"  # enabled | private (members only) | disabled
    archived: bool = False
    topics: tuple[str, ...] = ()
    forked_from_id: int | None = None
    marked_for_deletion_on: str | None = None  # a date, "2026-12-08", once an owner asked for delayed deletion
    last_activity_at: datetime = field(default_factory=lambda: datetime.now(tz=UTC))
    updated_at: datetime = field(default_factory=lambda: datetime.now(tz=UTC))
    """The `projects` row's own update time: a change of its columns (visibility, archived, path) moves it."""
    on_push: Callable[[FakeProject], None] | None = field(default=None, repr=False)
    """Called after every change of a branch (the fake's `Event` of a push: `last_activity_at`)."""

    @property
    def repo_dir(self) -> Path:
        return self.repo.path

    @property
    def path(self) -> str:
        return self.path_with_namespace.rsplit("/", 1)[-1]

    @property
    def namespace(self) -> str:
        return self.path_with_namespace.rsplit("/", 1)[0]

    def commit(self, files: Mapping[str, str | bytes | None], message: str, branch: str | None = None) -> str:
        """Write (str/bytes) or delete (None) files and commit them; returns the new sha.

        A branch that does not exist yet starts at the head of the default branch.
        """
        sha = self.repo.commit_files(branch or self.default_branch, files, message, base=self.default_branch)
        self._pushed()
        return sha

    def rename(self, old: str, new: str, message: str, branch: str | None = None) -> str:
        """`git mv old new` and commit; returns the new sha."""
        self.repo.checkout(branch or self.default_branch, self.default_branch)
        target = self.repo_dir / new
        target.parent.mkdir(parents=True, exist_ok=True)
        self.repo.run("mv", "--", old, new)
        sha = self.repo.commit_index(message)
        self._pushed()
        return sha

    def head(self, branch: str | None = None) -> str:
        name = branch or self.default_branch
        sha = self.repo.branch_head(name)
        if sha is None:
            raise LookupError(f"{self.path_with_namespace}: no branch {name!r}")
        return sha

    def force_reset(self, branch: str, sha: str) -> None:
        """Point `branch` at `sha`, as a force push would (the working tree follows if it is checked out)."""
        self.repo.run("update-ref", f"refs/heads/{branch}", sha)
        if self.repo.current_branch() == branch:
            self.repo.run("reset", "-q", "--hard", sha)
        self._pushed()

    def amend(self, message: str) -> str:
        """Rewrite the default branch's head commit with a new message only (same tree), as a force push."""
        self.repo.checkout(self.default_branch, self.default_branch)
        self.repo.run("commit", "-q", "--amend", "--allow-empty", "-m", message)
        self._pushed()
        return self.head()

    def prune(self) -> None:
        """Drop every object no branch reaches, as GitLab's housekeeping does after a force push: the
        old commits then 404 (`git gc --prune=now` after expiring the reflogs that keep them alive)."""
        self.repo.run("reflog", "expire", "--expire=now", "--all")
        self.repo.run("gc", "-q", "--prune=now")

    def create_branch(self, name: str, from_sha: str) -> None:
        self.repo.run("branch", "--", name, from_sha)
        self._pushed()

    def _pushed(self) -> None:
        if self.on_push is not None:
            self.on_push(self)


@dataclass(slots=True, kw_only=True)
class _Fault:
    remaining: int
    status: int
    retry_after: str | None
    path_contains: str | None


@dataclass
class _State:
    projects: dict[int, FakeProject] = field(default_factory=dict)
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    faults: list[_Fault] = field(default_factory=list)
    next_id: int = 1


class FakeGitLab:
    """The fake GitLab server and its test-side controls. Use it as a context manager."""

    def __init__(
        self,
        root: Path,
        token: str = "glpat-test",
        clock: Callable[[], datetime] | None = None,
        *,
        nodelay: bool = False,
    ) -> None:
        self.root = root / "fake-gitlab"
        self.nodelay = nodelay
        """TCP_NODELAY on every connection, as real servers do (without it, a response's second write waits
        for the client's delayed ACK, about 40 ms on loopback; only benchmarks care)."""
        self.token = token
        self.clock: Callable[[], datetime] = clock or (lambda: datetime.now(tz=UTC))
        """GitLab's clock: creation times and `last_activity_at` (tests move it to skip hours)."""
        self.lock = threading.Lock()
        self.bytes_sent = 0
        """Response body bytes served (benchmarks compare fetch strategies by it)."""
        self.calls: list[tuple[str, str]] = []
        """(method, path) of every request, the path as sent (percent-encoded, without the query)."""
        self.server_errors: list[str] = []
        """Unexpected exceptions inside the fake (each also answered with a 500); should stay empty."""
        self.max_diff_files = 1000
        """GitLab's `diff_max_files`: compare keeps this many diffs and sets `compare_timeout` past it."""
        self.safe_max_diff_files = 100
        """GitLab's safe limit (`DiffCollection::DEFAULT_LIMITS[:max_files]`): later diffs come back collapsed."""
        self.max_patch_bytes = 200 * 1024
        """GitLab's `diff_max_patch_bytes`: a longer patch comes back `too_large` with an empty diff."""
        self.directory = Directory()
        """Users, groups, memberships and OAuth (`testkit/fake_gitlab_users.py`)."""
        self.latency_s = 0.0
        """Seconds every API request takes before it is answered (a slow GitLab); requests overlap."""
        self.token_scopes: list[str] = ["api"]
        """The sync token's scopes, as `GET /personal_access_tokens/self` reports them."""
        self.system_hooks: list[dict[str, Any]] = []
        """System hooks as `GET /hooks` lists them (`system_hook_entity` builds one)."""
        self.system_hook_tokens: dict[int, str] = {}
        """The secret token each system hook was given (GitLab never lists it)."""
        self.archive_limit_per_min: int | None = None
        """GitLab's archive rate limit per project (5 on GitLab.com, behind `archive_rate_limit`); None: off."""
        self._archives: dict[int, list[datetime]] = {}
        self.ci_jobs = CiJobs()
        """CI jobs and their `CI_JOB_TOKEN`s, for `GET /api/v4/job` (`start_job`)."""
        self._state = _State()
        self._server: GitLabServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------------

    def __enter__(self) -> FakeGitLab:
        self.root.mkdir(parents=True, exist_ok=True)
        handler = NoDelayGitLabHandler if self.nodelay else GitLabHandler
        self._server = GitLabServer(("127.0.0.1", 0), GitLabApi(self), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.daemon = True
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._server is None or self._thread is None:
            return
        self._server.shutdown()
        self._server.close_connections()
        self._server.server_close()
        self._thread.join(timeout=5)
        self._server = None

    @property
    def url(self) -> str:
        """The base URL to give python-gitlab, e.g. `http://127.0.0.1:40123`."""
        if self._server is None:
            raise RuntimeError("FakeGitLab is not running; use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # -- projects ---------------------------------------------------------------------------------

    def create_project(self, path_with_namespace: str, default_branch: str = "main") -> FakeProject:
        """A new project with an empty git repository whose unborn HEAD is `default_branch`."""
        _check_full_path(path_with_namespace)
        with self.lock:
            if self._find_locked(path_with_namespace) is not None:
                raise ValueError(f"{path_with_namespace!r} has already been taken")
            project_id = self._state.next_id
            self._state.next_id += 1
            self._namespace_locked(path_with_namespace.rsplit("/", 1)[0])
        repo = GitRepo.init(self.root / f"project-{project_id}", default_branch)
        now = self.clock()
        created = now.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        # A new project's last activity is its creation (`Project#set_timestamps_for_create`).
        project = FakeProject(
            project_id,
            path_with_namespace,
            default_branch,
            repo,
            created,
            last_activity_at=now,
            updated_at=now,
            on_push=self._pushed,
        )
        with self.lock:
            self._state.projects[project_id] = project
        return project

    def start_job(self, project: FakeProject, *, sha: str | None = None, ref: str | None = None) -> str:
        """A running CI job of `project` at `sha` (its head) on `ref` (its default branch); its job token."""
        token, _ = self.ci_jobs.start(project.id, sha or project.head(), ref or project.default_branch)
        return token

    def project(self, project_id: int) -> FakeProject:
        with self.lock:
            return self._state.projects[project_id]

    def rename_project(self, project_id: int, new_path: str) -> None:
        """Change the project's own path (its last segment), keeping the namespace."""
        if "/" in new_path:
            raise ValueError("rename_project takes the new project path only; use transfer_project for namespaces")
        self._move(project_id, f"{self.project(project_id).namespace}/{new_path}")

    def transfer_project(self, project_id: int, new_namespace: str) -> None:
        """Move the project to another namespace (group path), keeping its own path."""
        self._move(project_id, f"{new_namespace.strip('/')}/{self.project(project_id).path}")

    def set_project_attributes(
        self,
        project_id: int,
        *,
        visibility: str | None = None,
        repository_access_level: str | None = None,
        archived: bool | None = None,
        topics: tuple[str, ...] | None = None,
        forked_from_id: int | None = None,
        marked_for_deletion_on: str | None = None,
    ) -> None:
        """Change what `GET /projects/:id` reports (visibility, archived, topics, fork parent, deletion date)."""
        if visibility is not None and visibility not in ("private", "internal", "public"):
            raise ValueError(f"unknown visibility {visibility!r}")
        if repository_access_level is not None and repository_access_level not in ("enabled", "private", "disabled"):
            raise ValueError(f"unknown repository_access_level {repository_access_level!r}")
        given = {
            "visibility": visibility,
            "repository_access_level": repository_access_level,
            "archived": archived,
            "topics": topics,
            "forked_from_id": forked_from_id,
            "marked_for_deletion_on": marked_for_deletion_on,
        }
        with self.lock:
            project = self._state.projects[project_id]
            for name, value in given.items():
                if value is not None:
                    setattr(project, name, value)
            # A column of `projects` moves its `updated_at`; `repository_access_level` lives in `project_features`,
            # whose update GitLab does not propagate to the project row (assumed here: the pessimistic case).
            if any(value is not None for name, value in given.items() if name != "repository_access_level"):
                project.updated_at = self.clock()

    def set_namespace_kind(self, full_path: str, kind: str) -> None:
        """Make a namespace a personal (`user`) one or a `group`."""
        if kind not in ("group", "user"):
            raise ValueError(f"unknown namespace kind {kind!r}")
        with self.lock:
            known = self._namespace_locked(full_path)
            self._state.namespaces[full_path] = Namespace(
                id=known.id, full_path=known.full_path, parent_id=known.parent_id, kind=kind
            )

    def set_default_branch(self, project_id: int, branch: str) -> None:
        project = self.project(project_id)
        if not project.repo.is_empty() and project.repo.branch_head(branch) is None:
            raise ValueError(f"branch {branch!r} does not exist")
        with self.lock:
            project.default_branch = branch

    def delete_project(self, project_id: int) -> None:
        with self.lock:
            del self._state.projects[project_id]

    def _pushed(self, project: FakeProject) -> None:
        """A push's `Event#reset_project_activity` (gitlabhq `app/models/event.rb`): `last_activity_at`
        moves to the event's time only when it is at least `RESET_PROJECT_ACTIVITY_INTERVAL` (1 hour) old."""
        with self.lock:
            now = self.clock()
            if project.last_activity_at <= now - ACTIVITY_INTERVAL:
                project.last_activity_at = now

    def _move(self, project_id: int, new_full_path: str) -> None:
        _check_full_path(new_full_path)
        with self.lock:
            project = self._state.projects[project_id]
            other = self._find_locked(new_full_path)
            if other is not None and other is not project:
                raise ValueError(f"{new_full_path!r} has already been taken")
            self._namespace_locked(new_full_path.rsplit("/", 1)[0])
            project.path_with_namespace = new_full_path
            project.updated_at = self.clock()

    # -- faults and accounting --------------------------------------------------------------------

    def fail_next(
        self, n: int, status: int = 500, retry_after: str | None = None, path_contains: str | None = None
    ) -> None:
        """Answer the next `n` requests (whose path contains `path_contains`, if given) with `status`.

        A 429 looks like GitLab's Rack::Attack throttle (text body, `RateLimit-*` headers); `retry_after`
        adds a `Retry-After` header to any status. Several calls queue up, first matching rule first.
        """
        with self.lock:
            self._state.faults.append(
                _Fault(remaining=n, status=status, retry_after=retry_after, path_contains=path_contains)
            )

    def call_count(self, path_contains: str) -> int:
        """How many requests had a path containing `path_contains` (matched encoded or decoded)."""
        with self.lock:
            return sum(1 for _, path in self.calls if _path_matches(path, path_contains))

    # -- used by the API --------------------------------------------------------------------------

    def record_call(self, method: str, path: str) -> Fault | None:
        """Log a request and return the fault it must answer with, if one is armed."""
        with self.lock:
            self.calls.append((method, path))
            for fault in self._state.faults:
                if fault.remaining > 0 and (fault.path_contains is None or _path_matches(path, fault.path_contains)):
                    fault.remaining -= 1
                    return Fault(status=fault.status, retry_after=fault.retry_after)
        return None

    def snapshot(self, id_or_path: str) -> ProjectSnapshot | None:
        """The project with this id or full path (case-insensitive, as GitLab's routes), if any."""
        with self.lock:
            project = self._find_locked(id_or_path)
            return None if project is None else self._snapshot_locked(project)

    def group(self, id_or_path: str) -> Namespace | None:
        """The group with this id or full path (case-insensitive); personal namespaces are not groups."""
        with self.lock:
            found = [
                n
                for n in self._state.namespaces.values()
                if (str(n.id) == id_or_path if id_or_path.isdigit() else n.full_path.lower() == id_or_path.lower())
            ]
        return found[0] if found and found[0].kind == "group" else None

    def archive_throttled(self, project_id: int) -> bool:
        """Count an archive request; whether it is over `archive_limit_per_min` in the last minute."""
        if self.archive_limit_per_min is None:
            return False
        with self.lock:
            now = self.clock()
            recent = [t for t in self._archives.get(project_id, []) if t > now - timedelta(minutes=1)]
            throttled = len(recent) >= self.archive_limit_per_min
            self._archives[project_id] = recent if throttled else [*recent, now]
        return throttled

    def snapshots(self) -> list[ProjectSnapshot]:
        with self.lock:
            return [self._snapshot_locked(p) for p in sorted(self._state.projects.values(), key=lambda p: p.id)]

    def _find_locked(self, id_or_path: str) -> FakeProject | None:
        if id_or_path.isdigit():
            return self._state.projects.get(int(id_or_path))
        wanted = id_or_path.lower()
        return next((p for p in self._state.projects.values() if p.path_with_namespace.lower() == wanted), None)

    def _snapshot_locked(self, project: FakeProject) -> ProjectSnapshot:
        return ProjectSnapshot(
            id=project.id,
            path_with_namespace=project.path_with_namespace,
            default_branch=project.default_branch,
            repo=project.repo,
            created_at=project.created_at,
            namespace=self._namespace_locked(project.namespace),
            visibility=project.visibility,
            repository_access_level=project.repository_access_level,
            archived=project.archived,
            topics=project.topics,
            forked_from_id=project.forked_from_id,
            marked_for_deletion_on=project.marked_for_deletion_on,
            last_activity_at=project.last_activity_at,
            updated_at=project.updated_at,
        )

    def _namespace_locked(self, full_path: str) -> Namespace:
        known = self._state.namespaces.get(full_path)
        if known is not None:
            return known
        parent = self._namespace_locked(full_path.rsplit("/", 1)[0]) if "/" in full_path else None
        namespace = Namespace(
            id=len(self._state.namespaces) + 1, full_path=full_path, parent_id=parent.id if parent else None
        )
        self._state.namespaces[full_path] = namespace
        return namespace


def _check_full_path(path_with_namespace: str) -> None:
    parts = path_with_namespace.split("/")
    if len(parts) < 2 or not all(parts):
        raise ValueError(f"expected 'namespace/project', got {path_with_namespace!r}")


def _path_matches(path: str, needle: str) -> bool:
    return needle in path or needle in unquote(path)


__all__ = ["FakeGitLab", "FakeProject", "GitError", "ProjectSnapshot"]
