"""GitLab hook bodies built by our own code, so that no test reads a sample from outside the repository.

The builders follow the gitlabhq code that makes each body (paths are in the gitlabhq repository):

- `push` and `tag_push`: `lib/gitlab/data_builder/push.rb` (`Gitlab::DataBuilder::Push.build`). Project
  hooks and system hooks get the same hash (`Project#execute_hooks`), with `project` from
  `Project#hook_attrs` (`app/models/project.rb`) and `commits` from `Commit#hook_attrs`.
- the old system-hook `push`, without `object_kind`, `user_username`, `project.id` or per-commit file
  lists: what the old `GitPushService` sent and what `doc/administration/system_hooks.md` still shows.
- `repository_update`: `lib/gitlab/data_builder/repository.rb` (`Gitlab::DataBuilder::Repository.update`),
  with `changes` and `refs` and no `object_kind`.
- `project_*` system events: `app/services/system_hooks_service.rb` with
  `lib/gitlab/hook_data/project_builder.rb`; rename and transfer add `old_path_with_namespace`
  (`Projects::UpdateService` and `Projects::TransferService` pass the old path).

The named samples at the end carry the ids, paths, refs and shas the hook tests assert.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, NotRequired, TypedDict

ZERO_SHA: Final = "0" * 40
PUSH_COMMIT_LIMIT: Final = 20  # `Git::BaseHooksService::PROCESS_COMMIT_LIMIT`: hooks carry at most 20 commits
VISIBILITY: Final = {0: "private", 10: "internal", 20: "public"}  # `Gitlab::VisibilityLevel`

ProjectEventName = Literal["project_create", "project_destroy", "project_rename", "project_transfer", "project_update"]


@dataclass(frozen=True, slots=True, kw_only=True)
class HookProject:
    """The project fields a hook body is made from."""

    id: int
    name: str
    namespace: str  # the namespace's display name, as `Project#hook_attrs` sends it
    path_with_namespace: str
    default_branch: str | None = "master"
    visibility_level: int = 0
    namespace_id: int = 23
    description: str = ""
    host: str = "example.com"

    @property
    def web_url(self) -> str:
        return f"http://{self.host}/{self.path_with_namespace}"

    @property
    def ssh_url(self) -> str:
        return f"git@{self.host}:{self.path_with_namespace}.git"

    @property
    def http_url(self) -> str:
        return f"{self.web_url}.git"


@dataclass(frozen=True, slots=True, kw_only=True)
class HookUser:
    """The user who pushed, or the owner of a project."""

    id: int
    name: str
    username: str
    email: str
    avatar: str = "https://s.gravatar.com/avatar/0000000000000000?s=80"


@dataclass(frozen=True, slots=True, kw_only=True)
class HookCommit:
    """One commit of a push."""

    sha: str
    message: str
    timestamp: str
    author_name: str
    author_email: str
    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


class ProjectAttrs(TypedDict):
    """`Project#hook_attrs`: `id` is missing from the old system-hook shape."""

    id: NotRequired[int]
    name: str
    description: str
    web_url: str
    avatar_url: str | None
    git_ssh_url: str
    git_http_url: str
    namespace: str
    visibility_level: int
    path_with_namespace: str
    default_branch: str | None
    homepage: str
    url: str
    ssh_url: str
    http_url: str


class RepositoryAttrs(TypedDict):
    """`Project#hook_attrs.slice(...)` as the push builder sends it under `repository`."""

    name: str
    url: str
    description: str
    homepage: str
    git_http_url: str
    git_ssh_url: str
    visibility_level: int


class Author(TypedDict):
    name: str
    email: str


class CommitAttrs(TypedDict):
    """`Commit#hook_attrs`: the old system-hook shape has no `title` and no file lists."""

    id: str
    message: str
    title: NotRequired[str]
    timestamp: str
    url: str
    author: Author
    added: NotRequired[list[str]]
    modified: NotRequired[list[str]]
    removed: NotRequired[list[str]]


class PushBody(TypedDict):
    """A `push` or `tag_push` body; the old system-hook shape lacks the `NotRequired` keys."""

    object_kind: NotRequired[str]
    event_name: str
    before: str
    after: str
    ref: str
    ref_protected: NotRequired[bool]
    checkout_sha: str | None
    message: NotRequired[str | None]
    user_id: int
    user_name: str
    user_username: NotRequired[str]
    user_email: str
    user_avatar: str
    project_id: int
    project: ProjectAttrs
    commits: list[CommitAttrs]
    total_commits_count: int
    repository: RepositoryAttrs


class RefChange(TypedDict):
    before: str
    after: str
    ref: str


class RepositoryUpdateBody(TypedDict):
    """`Gitlab::DataBuilder::Repository.update`: no `object_kind`, no commits."""

    event_name: str
    user_id: int
    user_name: str
    user_email: str
    user_avatar: str
    project_id: int
    project: ProjectAttrs
    changes: list[RefChange]
    refs: list[str]


class Owner(TypedDict):
    name: str
    email: str


class ProjectEventBody(TypedDict):
    """`Gitlab::HookData::ProjectBuilder#build` for one `project_*` system event."""

    event_name: ProjectEventName
    created_at: str
    updated_at: str
    name: str
    path: str
    path_with_namespace: str
    project_id: int
    project_namespace_id: int
    owners: list[Owner]
    owner_name: str
    owner_email: str
    project_visibility: str
    old_path_with_namespace: NotRequired[str]


def project_attrs(project: HookProject) -> ProjectAttrs:
    """`Project#hook_attrs(backward: false)`: the `project` object of push and repository bodies."""
    return {
        "id": project.id,
        "name": project.name,
        "description": project.description,
        "web_url": project.web_url,
        "avatar_url": None,
        "git_ssh_url": project.ssh_url,
        "git_http_url": project.http_url,
        "namespace": project.namespace,
        "visibility_level": project.visibility_level,
        "path_with_namespace": project.path_with_namespace,
        "default_branch": project.default_branch,
        "homepage": project.web_url,
        "url": project.ssh_url,
        "ssh_url": project.ssh_url,
        "http_url": project.http_url,
    }


def repository_attrs(project: HookProject) -> RepositoryAttrs:
    """The `repository` object of a push body (the backward-compatible subset of the project's attrs)."""
    return {
        "name": project.name,
        "url": project.ssh_url,
        "description": project.description,
        "homepage": project.web_url,
        "git_http_url": project.http_url,
        "git_ssh_url": project.ssh_url,
        "visibility_level": project.visibility_level,
    }


def commit_attrs(project: HookProject, commit: HookCommit) -> CommitAttrs:
    """`Commit#hook_attrs(with_changed_files: true)`."""
    return {
        "id": commit.sha,
        "message": commit.message,
        "title": commit.message.split("\n", 1)[0],
        "timestamp": commit.timestamp,
        "url": f"{project.web_url}/commit/{commit.sha}",
        "author": {"name": commit.author_name, "email": commit.author_email},
        "added": list(commit.added),
        "modified": list(commit.modified),
        "removed": list(commit.removed),
    }


def push_body(
    project: HookProject,
    user: HookUser,
    *,
    before: str,
    after: str,
    ref: str,
    commits: Sequence[HookCommit] = (),
    total_commits_count: int | None = None,
    checkout_sha: str | None = None,
    ref_protected: bool = False,
) -> PushBody:
    """`Gitlab::DataBuilder::Push.build`: a `push`, or a `tag_push` when `ref` is under `refs/tags/`.

    `commits` is in the order GitLab lists them; only the newest `PUSH_COMMIT_LIMIT` are kept while
    `total_commits_count` (default: all of them) counts every one. `checkout_sha` is the commit the ref
    points at (for an annotated tag, the tagged commit); `Push.checkout_sha` makes it null on a delete.
    """
    kind = "tag_push" if ref.startswith("refs/tags/") else "push"
    return {
        "object_kind": kind,
        "event_name": kind,
        "before": before,
        "after": after,
        "ref": ref,
        "ref_protected": ref_protected,
        "checkout_sha": None if after == ZERO_SHA else checkout_sha or after,
        "message": None,
        "user_id": user.id,
        "user_name": user.name,
        "user_username": user.username,
        "user_email": user.email,
        "user_avatar": user.avatar,
        "project_id": project.id,
        "project": project_attrs(project),
        "commits": [commit_attrs(project, c) for c in commits[-PUSH_COMMIT_LIMIT:]],
        "total_commits_count": len(commits) if total_commits_count is None else total_commits_count,
        "repository": repository_attrs(project),
    }


def legacy_system_push_body(body: PushBody) -> PushBody:
    """The old system-hook shape of `body` (`GitPushService`, still in `doc/administration/system_hooks.md`)."""
    legacy: PushBody = {
        "event_name": body["event_name"],
        "before": body["before"],
        "after": body["after"],
        "ref": body["ref"],
        "checkout_sha": body["checkout_sha"],
        "user_id": body["user_id"],
        "user_name": body["user_name"],
        "user_email": body["user_email"],
        "user_avatar": body["user_avatar"],
        "project_id": body["project_id"],
        "project": _without_id(body["project"]),
        "commits": [_legacy_commit(c) for c in body["commits"]],
        "total_commits_count": body["total_commits_count"],
        "repository": body["repository"],
    }
    return legacy


def _without_id(attrs: ProjectAttrs) -> ProjectAttrs:
    copy = attrs.copy()
    copy.pop("id", None)
    return copy


def _legacy_commit(commit: CommitAttrs) -> CommitAttrs:
    return {
        "id": commit["id"],
        "message": commit["message"],
        "timestamp": commit["timestamp"],
        "url": commit["url"],
        "author": commit["author"],
    }


def repository_update_body(project: HookProject, user: HookUser, changes: Sequence[RefChange]) -> RepositoryUpdateBody:
    """`Gitlab::DataBuilder::Repository.update`: `refs` lists the ref of every change."""
    return {
        "event_name": "repository_update",
        "user_id": user.id,
        "user_name": user.name,
        "user_email": user.email,
        "user_avatar": user.avatar,
        "project_id": project.id,
        "project": project_attrs(project),
        "changes": list(changes),
        "refs": [change["ref"] for change in changes],
    }


def project_event_body(
    event: ProjectEventName,
    project: HookProject,
    owner: HookUser,
    *,
    created_at: str,
    updated_at: str,
    old_path_with_namespace: str | None = None,
) -> ProjectEventBody:
    """`Gitlab::HookData::ProjectBuilder#build`, as `SystemHooksService#execute_hooks_for` sends it.

    `old_path_with_namespace` is given for `project_rename` and `project_transfer` only, where GitLab sends it.
    """
    body: ProjectEventBody = {
        "event_name": event,
        "created_at": created_at,
        "updated_at": updated_at,
        "name": project.name,
        "path": project.path_with_namespace.rsplit("/", 1)[-1],
        "path_with_namespace": project.path_with_namespace,
        "project_id": project.id,
        "project_namespace_id": project.namespace_id,
        "owners": [{"name": owner.name, "email": owner.email}],
        "owner_name": owner.name,
        "owner_email": owner.email,
        "project_visibility": VISIBILITY[project.visibility_level],
    }
    if old_path_with_namespace is not None:
        body["old_path_with_namespace"] = old_path_with_namespace
    return body


# Named samples: the values the hook tests assert.

DIASPORA: Final = HookProject(id=15, name="Diaspora", namespace="Mike", path_with_namespace="mike/diaspora")
EXAMPLE: Final = HookProject(id=1, name="Example", namespace="Jsmith", path_with_namespace="jsmith/example")
UNDERSCORE: Final = HookProject(
    id=73, name="Underscore", namespace="Jsmith", path_with_namespace="jsmith/underscore", visibility_level=10
)
STORECLOUD: Final = HookProject(id=74, name="StoreCloud", namespace="Jsmith", path_with_namespace="jsmith/storecloud")
JSMITH: Final = HookUser(id=4, name="John Smith", username="jsmith", email="john@example.com")
ADMIN: Final = HookUser(id=1, name="John Smith", username="root", email="admin@example.com")

BEFORE: Final = "95790bf891e76fee5e1747ab589903a6a1f80f22"
HEAD: Final = "da1560886d4f094c3e6c9ef40349f7d38b5d27d7"
CREATED_AT: Final = "2012-07-21T07:30:58Z"
UPDATED_AT: Final = "2012-07-21T07:38:22Z"
TWO_COMMITS: Final = (
    HookCommit(
        sha="b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327",
        message="Translate the search page.\n\nThe Catalan strings were missing.",
        timestamp="2011-12-12T14:27:31+02:00",
        author_name="Ana Ferrer",
        author_email="ana@example.com",
        added=("CHANGELOG",),
        modified=("app/controller/application.rb",),
    ),
    HookCommit(
        sha=HEAD,
        message="Fix the readme",
        timestamp="2012-01-03T23:36:29+02:00",
        author_name="John Smith",
        author_email="john@example.com",
        added=("CHANGELOG",),
        modified=("app/controller/application.rb",),
    ),
)


def project_webhook_push() -> PushBody:
    """A push of two commits (four in all) to `mike/diaspora`'s default branch, as a project hook gets it."""
    return push_body(
        DIASPORA,
        JSMITH,
        before=BEFORE,
        after=HEAD,
        ref="refs/heads/master",
        commits=TWO_COMMITS,
        total_commits_count=4,
        ref_protected=True,
    )


def system_hook_push() -> PushBody:
    """The same push in the old system-hook shape (no `object_kind`)."""
    return legacy_system_push_body(project_webhook_push())


def push_branch_create() -> PushBody:
    """A push that creates `feature-x` (`before` is all zeros), as `Git::BranchHooksService` reports it."""
    return push_body(
        DIASPORA,
        JSMITH,
        before=ZERO_SHA,
        after=HEAD,
        ref="refs/heads/feature-x",
        commits=TWO_COMMITS,
        total_commits_count=4,
    )


def push_branch_delete() -> PushBody:
    """A push that deletes `feature-x`: `after` all zeros, `checkout_sha` null, no commits."""
    return push_body(DIASPORA, JSMITH, before=HEAD, after=ZERO_SHA, ref="refs/heads/feature-x")


def system_hook_tag_push() -> PushBody:
    """A tag `v1.0.0` created on `jsmith/example` (annotated: `checkout_sha` is the tagged commit)."""
    return push_body(
        EXAMPLE,
        ADMIN,
        before=ZERO_SHA,
        after="82b3d5ae55f7080f1e6022629cdb57bfae7cccc7",
        ref="refs/tags/v1.0.0",
        checkout_sha="5937ac0a7beb003549fc5fd26fc247adbce4a52e",
    )


def system_hook_repository_update() -> RepositoryUpdateBody:
    """A `repository_update` moving `jsmith/example`'s default branch."""
    change: RefChange = {
        "before": "8205ea8d81ce0c6b90fbe8280d118cc9fdad6130",
        "after": "4045ea7a3df38697b3730a20fb73c8bed8a3e69e",
        "ref": "refs/heads/master",
    }
    return repository_update_body(EXAMPLE, ADMIN, [change])


def system_hook_project_destroy() -> ProjectEventBody:
    """`project_destroy` of `jsmith/underscore` (73)."""
    return _sample_event("project_destroy", UNDERSCORE)


def system_hook_project_rename() -> ProjectEventBody:
    """`project_rename` of 73 from `jsmith/overscore` to `jsmith/underscore`."""
    return _sample_event("project_rename", UNDERSCORE, old_path="jsmith/overscore")


def system_hook_project_transfer() -> ProjectEventBody:
    """`project_transfer` of 73 from `jsmith/overscore` to `scores/underscore`."""
    moved = HookProject(
        id=73, name="Underscore", namespace="Scores", path_with_namespace="scores/underscore", visibility_level=10
    )
    return _sample_event("project_transfer", moved, old_path="jsmith/overscore")


def system_hook_project_update() -> ProjectEventBody:
    """`project_update` of `jsmith/storecloud` (74)."""
    return _sample_event("project_update", STORECLOUD)


def _sample_event(event: ProjectEventName, project: HookProject, old_path: str | None = None) -> ProjectEventBody:
    """A sample lifecycle event of jsmith's, with the samples' timestamps."""
    return project_event_body(
        event, project, JSMITH, created_at=CREATED_AT, updated_at=UPDATED_AT, old_path_with_namespace=old_path
    )
