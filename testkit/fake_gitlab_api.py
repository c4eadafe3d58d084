"""The endpoints of the fake GitLab: request in, GitLab-shaped response out, data read from git.

Shapes and behaviour follow gitlabhq (paths relative to its repository):
- errors: `not_found!("Branch")` renders `{"message": "404 Branch Not Found"}`; Grape's own errors and the
  catch-all route (`lib/api/api.rb`) render `{"error": "..."}`.
- projects: `lib/api/entities/{project_identity,basic_project_details,project,namespace_basic}.rb`; keyset
  pagination needs `order_by=id` (`lib/gitlab/pagination/keyset.rb`, else 405) and always links to
  `id_after`/`id_before` of the last row (`keyset/pager.rb`, `keyset/request_context.rb`).
- compare: `lib/api/repositories.rb`, `app/services/compare_service.rb` (unknown ref → 404 Ref Not Found),
  `lib/gitlab/git/compare.rb` (same commit → no commits, no diffs), `app/models/compare.rb` (web_url),
  `lib/api/entities/{compare,diff,commit}.rb`.
- tree: `lib/gitlab/pagination/gitaly_keyset_pager.rb` (Link only while entries remain), Gitaly
  `internal/gitaly/service/commit/tree_entries.go` (trees first; page token = base64 JSON `{"file_name"}`).
- files and blobs: `lib/api/files.rb` (`X-Gitlab-*` headers from `blob_data`), `lib/api/repositories.rb`.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, quote

from testkit.fake_gitlab_model import ProjectSnapshot
from testkit.fake_gitlab_port import GitLabState
from testkit.fake_gitlab_users import user_entity
from testkit.fake_gitlab_wire import (
    ARCHIVE_RATE_LIMITED,
    ARCHIVE_ROUTES,
    HEX_SHA,
    ApiError,
    HeaderPair,
    Json,
    Request,
    Response,
    api_timestamp,
    bad_request,
    bool_param,
    commit_entity,
    decode_page_token,
    fault_response,
    filter_activity,
    filter_attributes,
    filter_ids,
    filter_updated,
    json_response,
    match_segments,
    next_link,
    not_found,
    offset_page,
    per_page_param,
    project_sort_key,
    q_format,
    raw_headers,
    system_hook_entity,
    token_entity,
)
from testkit.git_repo import EMPTY_TREE, FileChange, GitError, TreeEntry

Handler = Callable[[Request], Response]


class GitLabApi:
    """Routes `/api/v4` requests to handlers; faults and auth come first, as GitLab's middleware does."""

    def __init__(self, gl: GitLabState) -> None:
        self.gl = gl
        self.routes: tuple[tuple[str, tuple[str, ...], Handler], ...] = (
            ("GET", ("user",), self.current_user),
            ("GET", ("personal_access_tokens", "self"), self.token_self),
            ("GET", ("hooks",), self.list_system_hooks),
            ("POST", ("hooks",), self.add_system_hook),
            ("PUT", ("hooks", ":hook_id"), self.edit_system_hook),
            ("GET", ("projects",), self.list_projects),
            ("GET", ("projects", ":id"), self.get_project),
            ("GET", ("projects", ":id", "repository", "branches", ":branch"), self.get_branch),
            ("GET", ("projects", ":id", "repository", "compare"), self.compare),
            ("GET", ("projects", ":id", "repository", "tree"), self.tree),
            ("GET", ("projects", ":id", "repository", "files", ":file_path", "raw"), self.raw_file),
            ("HEAD", ("projects", ":id", "repository", "files", ":file_path"), self.file_metadata),
            ("GET", ("projects", ":id", "repository", "blobs", ":sha", "raw"), self.raw_blob),
            ("GET", ("groups", ":id", "projects"), self.group_projects),
            *(("GET", ("projects", ":id", "repository", name), self.archive) for name in ARCHIVE_ROUTES),
        )

    def handle(self, method: str, target: str, token: str | None, body: bytes = b"") -> Response:
        path, _, query_string = target.partition("?")
        fault = self.gl.record_call(method, path)
        if fault is not None:
            return fault_response(fault)
        user = None if token == self.gl.token else self.gl.directory.user_for(token)
        if token != self.gl.token and user is None:
            return json_response(401, {"message": "401 Unauthorized"})
        try:
            handler, params = self._match(method, path)
            query = dict(parse_qsl(query_string, keep_blank_values=True))
            request = Request(
                method=method, path=path, query=query, params=params, base_url=self.gl.url, user=user, body=body
            )
            return handler(request)
        except ApiError as err:
            return json_response(err.status, err.payload)

    def internal_error(self) -> Response:
        return json_response(500, {"message": "500 Internal Server Error"})

    def _match(self, method: str, path: str) -> tuple[Handler, dict[str, str]]:
        segments = path.split("/")
        if segments[:3] == ["", "api", "v4"]:
            for route_method, pattern, handler in self.routes:
                params = match_segments(pattern, segments[3:])
                # Rack answers HEAD on every GET route (without a body).
                if params is not None and (route_method == method or (method == "HEAD" and route_method == "GET")):
                    return handler, params
        raise ApiError(404, {"error": "404 Not Found"})

    def _project(self, req: Request) -> ProjectSnapshot:
        project = self.gl.snapshot(req.params["id"])
        if project is None:
            raise not_found("Project")
        return project

    # -- projects ---------------------------------------------------------------------------------

    def current_user(self, req: Request) -> Response:
        """`GET /user`; the sync's own token belongs to an administrator (`root`, id 1)."""
        if req.user is None:
            root = {"id": 1, "username": "root", "name": "Administrator", "state": "active", "is_admin": True}
            return json_response(200, root | {"bot": False, "external": False})
        return json_response(200, user_entity(req.user, req.base_url))

    def token_self(self, req: Request) -> Response:
        """`GET /personal_access_tokens/self` (`lib/api/personal_access_tokens/self_information.rb`)."""
        user_id, scopes = (1, self.gl.token_scopes) if req.user is None else (req.user.id, ["read_api"])
        return json_response(200, token_entity(user_id, scopes))

    def list_system_hooks(self, req: Request) -> Response:
        """`GET /hooks` (`lib/api/system_hooks.rb`): administrators only."""
        if req.user is not None and not req.user.is_admin:
            return json_response(403, {"message": "403 Forbidden"})
        return json_response(200, self.gl.system_hooks)

    def add_system_hook(self, req: Request) -> Response:
        """`POST /hooks`: 201 with the new hook (`url` required; the token is kept, never returned)."""
        fields = self._hook_fields(req)
        if "url" not in fields:
            return json_response(400, {"error": "url is missing"})
        hook_id = max((h["id"] for h in self.gl.system_hooks), default=0) + 1
        hook = system_hook_entity(hook_id, str(fields.pop("url"))) | fields
        self.gl.system_hooks.append(hook)
        return json_response(201, hook)

    def edit_system_hook(self, req: Request) -> Response:
        """`PUT /hooks/:hook_id`: the given fields change; 404 for an unknown hook."""
        hook = next((h for h in self.gl.system_hooks if str(h["id"]) == req.params["hook_id"]), None)
        if hook is None:
            raise not_found()
        fields = self._hook_fields(req, hook_id=int(hook["id"]))
        hook.update(fields)
        return json_response(200, hook)

    def _hook_fields(self, req: Request, hook_id: int | None = None) -> dict[str, Any]:
        if req.user is not None and not req.user.is_admin:
            raise ApiError(403, {"message": "403 Forbidden"})
        fields = dict(json.loads(req.body or b"{}"))
        token = fields.pop("token", None)
        if token is not None:
            key = hook_id if hook_id is not None else max((h["id"] for h in self.gl.system_hooks), default=0) + 1
            self.gl.system_hook_tokens[key] = str(token)
        allowed = set(system_hook_entity(0, "")) - {"id", "created_at"}
        return {k: v for k, v in fields.items() if k in allowed}

    def get_project(self, req: Request) -> Response:
        return json_response(200, self._project_entity(self._project(req), req.base_url, simple=False))

    def list_projects(self, req: Request) -> Response:
        q = req.query
        order_by, sort = q.get("order_by", "created_at"), q.get("sort", "desc")
        if order_by not in {"id", "name", "path", "created_at", "updated_at", "last_activity_at"}:
            raise bad_request("order_by does not have a valid value")
        if sort not in {"asc", "desc"}:
            raise bad_request("sort does not have a valid value")
        projects = self.gl.snapshots()
        if req.user is not None:  # what the caller may list (`testkit/fake_gitlab_users.py`)
            projects = self.gl.directory.visible(req.user, projects, q)
        projects = filter_updated(filter_activity(filter_ids(filter_attributes(projects, q), q), q), q, order_by)
        projects.sort(key=lambda p: (project_sort_key(p, order_by), p.id), reverse=sort == "desc")
        simple = bool_param(q, "simple", default=False)
        if q.get("pagination") == "keyset":
            if order_by != "id":
                raise ApiError(405, {"error": "Keyset pagination is not yet available for this type of request"})
            page = projects[: per_page_param(q)]
            bound = "id_after" if sort == "asc" else "id_before"
            headers = [("Link", next_link(req, [(bound, str(page[-1].id))]))] if page else []
        else:
            page, headers = offset_page(projects, req)
        body = [self._project_entity(p, req.base_url, simple=simple) for p in page]
        return json_response(200, body, headers)

    def _project_entity(self, project: ProjectSnapshot, base_url: str, *, simple: bool) -> Json:
        web_url = f"{base_url}/{project.path_with_namespace}"
        namespace = project.namespace
        entity: Json = {
            "id": project.id,
            "description": None,
            "name": project.path,
            "name_with_namespace": " / ".join(project.path_with_namespace.split("/")),
            "path": project.path,
            "path_with_namespace": project.path_with_namespace,
            "created_at": project.created_at,
            # `default_branch_or_main`: an empty repository still reports the configured default branch.
            "default_branch": project.default_branch,
            "tag_list": list(project.topics),
            "topics": list(project.topics),
            "ssh_url_to_repo": f"git@127.0.0.1:{project.path_with_namespace}.git",
            "http_url_to_repo": f"{web_url}.git",
            "web_url": web_url,
            "readme_url": None,
            "forks_count": 0,
            "avatar_url": None,
            "star_count": 0,
            "last_activity_at": api_timestamp(project.last_activity_at),
            "namespace": {
                "id": namespace.id,
                "name": namespace.path,
                "path": namespace.path,
                "kind": namespace.kind,
                "full_path": namespace.full_path,
                "parent_id": namespace.parent_id,
                "avatar_url": None,
                "web_url": f"{base_url}/groups/{namespace.full_path}",
            },
        }
        if simple:
            return entity
        api_self = f"{base_url}/api/v4/projects/{project.id}"
        details: Json = {
            "_links": {"self": api_self, "repo_branches": f"{api_self}/repository/branches"},
            "empty_repo": project.repo.is_empty(),
            "archived": project.archived,
            "updated_at": api_timestamp(project.updated_at),
            "visibility": project.visibility,
            "repository_access_level": project.repository_access_level,
            # `ee/lib/ee/api/entities/project.rb`: both name the date delayed deletion was asked for (null
            # until then); exposed where adjourned deletion is available, which is every edition since 18.0.
            "marked_for_deletion_at": project.marked_for_deletion_on,
            "marked_for_deletion_on": project.marked_for_deletion_on,
        }
        if project.forked_from_id is not None:
            parent = self.gl.snapshot(str(project.forked_from_id))
            details["forked_from_project"] = (
                self._project_entity(parent, base_url, simple=True)
                if parent is not None
                else {"id": project.forked_from_id}
            )
        return entity | details

    # -- branches and commits ---------------------------------------------------------------------

    def get_branch(self, req: Request) -> Response:
        project = self._project(req)
        name = req.params["branch"]
        sha = project.repo.branch_head(name)
        if sha is None:
            raise not_found("Branch")
        web_url = f"{req.base_url}/{project.path_with_namespace}"
        is_default = name == project.default_branch
        return json_response(
            200,
            {
                "name": name,
                "commit": commit_entity(project.repo.commit_info(sha), web_url),
                "merged": False,
                "protected": is_default,
                "developers_can_push": False,
                "developers_can_merge": False,
                "can_push": True,
                "default": is_default,
                "web_url": f"{web_url}/-/tree/{quote(name)}",
            },
        )

    def compare(self, req: Request) -> Response:
        project = self._project(req)
        missing = [name for name in ("from", "to") if name not in req.query]
        if missing:
            raise bad_request(", ".join(f"{name} is missing" for name in missing))
        straight = bool_param(req.query, "straight", default=False)
        repo = project.repo
        base = repo.resolve_commit(req.query["from"])
        head = repo.resolve_commit(req.query["to"])
        if base is None or head is None:
            raise not_found("Ref")
        web_url = f"{req.base_url}/{project.path_with_namespace}"
        same = base == head
        commits = [] if same else repo.commits(f"{base}..{head}")
        merge_base = None if straight else repo.merge_base(base, head)
        # `Gitlab::Git::Diff.between`: straight diffs from..to, otherwise merge-base(from, to)..to.
        changes = [] if same else repo.diff(base if straight else merge_base or EMPTY_TREE, head)
        overflow = len(changes) > self.gl.max_diff_files
        kept = changes[: self.gl.max_diff_files]
        body = {
            "commit": commit_entity(commits[-1], web_url) if commits else None,
            "commits": [commit_entity(c, web_url) for c in commits],
            "diffs": [self._diff_entity(change, index) for index, change in enumerate(kept)],
            "compare_timeout": overflow,
            "compare_same_ref": same,
            "web_url": f"{web_url}/-/compare/{base if straight else merge_base or base}...{head}",
        }
        return json_response(200, body)

    def _diff_entity(self, change: FileChange, index: int) -> Json:
        too_large = len(change.patch.encode()) > self.gl.max_patch_bytes
        collapsed = not too_large and index >= min(self.gl.safe_max_diff_files, self.gl.max_diff_files)
        return {
            "diff": "" if too_large or collapsed else change.patch,
            "collapsed": collapsed,
            "too_large": too_large,
            "new_path": change.new_path,
            "old_path": change.old_path,
            "a_mode": change.old_mode,
            "b_mode": change.new_mode,
            "new_file": change.status == "A",
            "renamed_file": change.status == "R",
            "deleted_file": change.status == "D",
            "generated_file": False,
        }

    # -- tree -------------------------------------------------------------------------------------

    def tree(self, req: Request) -> Response:
        project = self._project(req)
        q = req.query
        recursive = bool_param(q, "recursive", default=False)
        pagination = q.get("pagination", "legacy")
        if pagination not in {"legacy", "keyset", "none"}:
            raise bad_request("pagination does not have a valid value")
        if pagination == "none" and not recursive:
            raise bad_request('pagination cannot be "none" unless "recursive" is true')
        entries = self._tree_entries(project, q.get("ref") or project.default_branch, q.get("path", ""), recursive)
        headers: list[HeaderPair] = []
        if pagination == "none":
            page = entries
        elif pagination == "keyset":
            page, headers = self._tree_keyset_page(entries, req)
        else:
            page, headers = offset_page(entries, req)
        body = [
            {"id": e.sha, "name": e.name, "type": e.type, "path": e.path, "mode": e.mode.rjust(6, "0")} for e in page
        ]
        return json_response(200, body, headers)

    def _tree_entries(self, project: ProjectSnapshot, ref: str, path: str, recursive: bool) -> list[TreeEntry]:
        repo = project.repo
        commit = None if repo.is_empty() else repo.resolve_commit(ref)
        if commit is None:
            raise not_found("Tree")
        path = path.strip("/")
        treeish = f"{commit}:{path}" if path else commit
        if path and repo.object_type(treeish) != "tree":
            raise not_found("Tree")
        entries = repo.ls_tree(treeish, recursive=recursive)
        if path:
            entries = [TreeEntry(mode=e.mode, type=e.type, sha=e.sha, path=f"{path}/{e.path}") for e in entries]
        # Gitaly sorts TREES_FIRST (stable) when paginating, and `Tree#sorted_entries` orders
        # trees, then blobs, then submodules.
        rank = {"tree": 0, "blob": 1, "commit": 2}
        return sorted(entries, key=lambda e: rank.get(e.type, 3))

    def _tree_keyset_page(self, entries: list[TreeEntry], req: Request) -> tuple[list[TreeEntry], list[HeaderPair]]:
        per_page = per_page_param(req.query)
        token = req.query.get("page_token")
        start = 0
        if token:
            file_name, by_path = decode_page_token(token)
            keys = [e.path if by_path else e.sha for e in entries]
            if file_name not in keys:
                # Gitaly: "could not find starting OID", an unhandled error that GitLab turns into a 500.
                raise ApiError(500, {"message": "500 Internal Server Error"})
            start = keys.index(file_name) + 1
        page = entries[start : start + per_page]
        if start + per_page >= len(entries):
            return page, []
        cursor = base64.b64encode(json.dumps({"file_name": page[-1].path}, separators=(",", ":")).encode()).decode()
        return page, [("Link", next_link(req, [("page_token", cursor)]))]

    # -- files and blobs --------------------------------------------------------------------------

    def raw_file(self, req: Request) -> Response:
        headers, data = self._file(req, ref_required=False)
        return Response(200, data, (*headers, *raw_headers(req.params["file_path"].rsplit("/", 1)[-1])))

    def file_metadata(self, req: Request) -> Response:
        headers, _data = self._file(req, ref_required=True)
        return Response(200, b"", (("Content-Type", "application/json"), *headers))

    def _file(self, req: Request, *, ref_required: bool) -> tuple[list[HeaderPair], bytes]:
        project = self._project(req)
        ref = req.query.get("ref")
        if ref is None and ref_required:
            raise bad_request("ref is missing")
        if ref == "":
            raise bad_request("ref is empty")
        repo = project.repo
        commit = None if repo.is_empty() else repo.resolve_commit(ref or project.default_branch)
        if commit is None:
            raise not_found("Commit")
        path = req.params["file_path"]
        blob = repo.blob_at(commit, path)
        if blob is None:
            raise not_found("File")
        data = repo.read_blob(blob.sha)
        blob_data = {
            "File-Name": blob.name,
            "File-Path": blob.path,
            "Size": str(len(data)),
            "Encoding": "base64",
            "Content-Sha256": hashlib.sha256(data).hexdigest(),
            "Ref": ref or "",
            "Blob-Id": blob.sha,
            "Commit-Id": commit,
            "Last-Commit-Id": repo.last_commit_for_path(commit, path),
            "Execute-Filemode": "true" if blob.mode == "100755" else "false",
        }
        return [(f"X-Gitlab-{name}", value) for name, value in blob_data.items()], data

    def raw_blob(self, req: Request) -> Response:
        project = self._project(req)
        sha = req.params["sha"]
        if not HEX_SHA.fullmatch(sha) or project.repo.object_type(sha) != "blob":
            raise not_found("Blob")
        return Response(200, project.repo.read_blob(sha), tuple(raw_headers(None)))

    # -- groups and archives ---------------------------------------------------------------------

    def group_projects(self, req: Request) -> Response:
        """`GET /groups/:id/projects` (`lib/api/groups.rb`, `GroupProjectsFinder`): the group's own projects,
        with `include_subgroups=true` its descendants' too; offset pages, `created_at desc` by default."""
        group = self.gl.group(req.params["id"])
        if group is None:
            raise not_found("Group")
        q = req.query
        nested = bool_param(q, "include_subgroups", default=False)
        inside = [
            p
            for p in self.gl.snapshots()
            if p.namespace.full_path == group.full_path
            or (nested and p.namespace.full_path.startswith(group.full_path + "/"))
        ]
        projects = filter_attributes(inside, q)
        order_by, sort = q.get("order_by", "created_at"), q.get("sort", "desc")
        projects.sort(key=lambda p: (project_sort_key(p, order_by), p.id), reverse=sort == "desc")
        page, headers = offset_page(projects, req)
        simple = bool_param(q, "simple", default=False)
        return json_response(200, [self._project_entity(p, req.base_url, simple=simple) for p in page], headers)

    def archive(self, req: Request) -> Response:
        """`GET /projects/:id/repository/archive[.format]?sha=&path=` (`lib/api/repositories.rb`).

        `git archive` at the commit with the prefix `<project>-<ref>-<commit>/` (`append_sha: true`,
        `Repository#archive_metadata`); tar.gz when no format is given. The archive rate limit
        (`project_repositories_archive`, 5 a minute per project and user, `Gitlab::RateLimitHelpers`)
        answers 429 with `{"error": ...}`; any failure to build it (an unknown ref, an empty repository)
        is `not_found!('File')` (the endpoint's `rescue StandardError`).
        """
        project = self._project(req)
        name = req.path.rsplit("/", 1)[-1]
        fmt = ARCHIVE_ROUTES[name] if name != "archive" else q_format(req.query)
        if self.gl.archive_throttled(project.id):
            return json_response(429, {"error": ARCHIVE_RATE_LIMITED}, [("Retry-After", "60")])
        ref = req.query.get("sha") or project.default_branch
        repo = project.repo
        commit = None if repo.is_empty() else repo.resolve_commit(ref)
        if commit is None or fmt is None:
            raise not_found("File")
        prefix = f"{project.path}-{ref.replace('/', '-')}-{commit}/"
        paths = ["--", req.query["path"]] if req.query.get("path") else []
        try:
            data = repo.run("archive", f"--format={fmt}", f"--prefix={prefix}", commit, *paths)
        except GitError:
            raise not_found("File") from None
        disposition = f'attachment; filename="{prefix[:-1]}.{fmt}"'
        headers = (("Content-Type", "application/octet-stream"), ("Content-Disposition", disposition))
        return Response(200, data, headers)


# -- entities -------------------------------------------------------------------------------------


# -- params and pagination ------------------------------------------------------------------------


# -- responses ------------------------------------------------------------------------------------
