"""GitLab REST adapter over python-gitlab: the five calls the sync needs, none of them a clone.

python-gitlab is blocking (requests), so every call runs in a worker thread with one `Gitlab`
client per thread (a requests `Session` is not guaranteed thread-safe). python-gitlab retries 5xx
and honours 429 `Retry-After` itself (`retry_transient_errors=True`); what still fails is
translated here into `GitLabUnavailableError`, `GitLabNotFoundError` or `GitLabAuthError`.
"""

from __future__ import annotations

import asyncio
import tarfile
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import gitlab
import gitlab.exceptions
import requests
import urllib3.exceptions

from app.core import metrics
from app.core.errors import GitLabAuthError, GitLabError, GitLabNotFoundError, GitLabUnavailableError
from app.core.settings import GitLabSettings
from app.gitlab.archive import blob_hash_name, read_archive

T = TypeVar("T")
# python-gitlab retries transient errors 10 times by default (0.1 s doubling: ~100 s in a thread that
# cannot be cancelled, while the project showed `ok`). Every metadata call (project, branch, compare,
# tree, the sweep's listing) retries twice (~0.3 s) and file downloads four times; then our own policy
# is in charge: the job's `Retry` with backoff (status `failed ... (will retry)`), a compare that keeps
# failing falls back to the tree walk (issue 10), and a failed listing is listed again next sweep.
META_RETRIES = 2
_FILE_RETRIES = 4
LISTING_PAGE = 100  # GitLab's largest page
ARCHIVE_PATH = "/repository/archive"
MAX_PAUSE_S = 300.0  # a RateLimit-Reset further away than this is taken as a clock problem, not a wait


def pause_s(status: int, headers: Mapping[str, str], now: float) -> float:
    """How long every call must wait after this response: GitLab's rate-limit headers (pure).

    A 429's `Retry-After` (seconds), or a spent budget (`RateLimit-Remaining: 0`) until
    `RateLimit-Reset` (epoch seconds), as GitLab's `Gitlab::Throttle`/`Rack::Attack` send them.
    """
    retry_after = headers.get("Retry-After")
    if status == 429 and retry_after and retry_after.strip().isdigit():
        return min(MAX_PAUSE_S, float(retry_after))
    reset = headers.get("RateLimit-Reset")
    if headers.get("RateLimit-Remaining") == "0" and reset and reset.strip().isdigit():
        return min(MAX_PAUSE_S, max(0.0, float(reset) - now))
    return 0.0


class RateGate:
    """Holds every GitLab call of this process while GitLab says the budget is spent.

    python-gitlab honours a 429's `Retry-After` in the one thread that got it; the gate makes the
    other threads (other projects' syncs, a backfill) wait too instead of spending their retries,
    and it also reads `RateLimit-Remaining: 0` on successful answers, before any 429.
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._until = 0.0
        self.waits = 0
        """How many calls waited (for tests and the logs)."""

    def observe(self, status: int, headers: Mapping[str, str]) -> None:
        """Note one response's headers (called from the worker threads)."""
        now = self._clock()
        pause = pause_s(status, headers, now)
        if pause > 0:
            self._until = max(self._until, now + pause)

    async def wait(self) -> None:
        """Wait until the gate opens."""
        delay = self._until - self._clock()
        if delay > 0:
            self.waits += 1
            await asyncio.sleep(delay)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectInfo:
    """What the sync, the indexing scope and the access model need to know about a project.

    Read from `GET /projects/:id` (and the rows of `GET /projects`), whose shape is gitlabhq's
    `lib/api/entities/project.rb`: `namespace.kind` is `user` for a personal namespace,
    `forked_from_project` is there only for a fork whose parent the token can read
    (`ProjectDetails`), and `marked_for_deletion_on` only where delayed deletion exists
    (`ee/lib/ee/api/entities/project.rb`; in every edition since 18.0).
    """

    id: int
    path_with_namespace: str
    default_branch: str | None
    empty: bool
    namespace_kind: str | None = None
    namespace_path: str | None = None
    archived: bool = False
    forked_from_id: int | None = None
    topics: tuple[str, ...] = ()
    visibility: str | None = None
    repository_access: str | None = None
    marked_for_deletion_on: str | None = None


def project_info(attrs: Mapping[str, Any]) -> ProjectInfo:
    """A project entity of the REST API as a `ProjectInfo` (missing optional attributes stay unknown)."""
    namespace = attrs.get("namespace") or {}
    fork = attrs.get("forked_from_project")
    return ProjectInfo(
        id=int(attrs["id"]),
        path_with_namespace=str(attrs["path_with_namespace"]),
        default_branch=attrs.get("default_branch") or None,
        empty=bool(attrs.get("empty_repo", False)),
        namespace_kind=namespace.get("kind"),
        namespace_path=namespace.get("full_path"),
        archived=bool(attrs.get("archived", False)),
        forked_from_id=int(fork["id"]) if isinstance(fork, dict) and "id" in fork else None,
        topics=tuple(str(t) for t in attrs.get("topics") or attrs.get("tag_list") or ()),
        visibility=attrs.get("visibility"),
        repository_access=attrs.get("repository_access_level"),
        marked_for_deletion_on=attrs.get("marked_for_deletion_on") or attrs.get("marked_for_deletion_at"),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Activity:
    """A project as `GET /projects` lists it, with when GitLab last saw activity on it.

    GitLab moves `last_activity_at` on a push only when it is over an hour old
    (`Event::RESET_PROJECT_ACTIVITY_INTERVAL`, `Event#reset_project_activity`): see `app/sync/sweep.py`.
    """

    project: ProjectInfo
    last_activity_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class Diff:
    """One changed path of a compare (no blob ids: GitLab's compare has none)."""

    old_path: str
    new_path: str
    new_file: bool
    renamed_file: bool
    deleted_file: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """A compare's changed paths; `overflow` when GitLab cut the list (`compare_timeout`)."""

    diffs: tuple[Diff, ...]
    overflow: bool
    parent_ids: frozenset[str] = frozenset()
    """Every parent of the commits in `from..to`: `from` is among them iff `to` descends from it."""
    commits: int = 0
    """How many commits `from..to` holds (the index's lag, while it is behind)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RawFile:
    """A file's bytes and blob id (`X-Gitlab-Blob-Id`); `data` is None when it is over the size cap."""

    data: bytes | None
    blob_id: str
    size: int


def rest_root(settings: GitLabSettings) -> tuple[str, dict[str, str]] | None:
    """GitLab's REST root (`.../api/v4`) and the header carrying the token; None when either is unset.

    For the few single requests made with httpx (`javakb doctor`, `javakb admin install-hook`).
    """
    if not settings.url or settings.token is None:
        return None
    return f"{settings.url.rstrip('/')}/api/v4", {"PRIVATE-TOKEN": settings.token.get_secret_value()}


class GitLabClient:
    """Async facade over python-gitlab with bounded concurrency."""

    def __init__(self, settings: GitLabSettings) -> None:
        if not settings.url or settings.token is None:
            raise GitLabError("GitLab URL and token must be configured (JAVAKB_GITLAB__URL, JAVAKB_GITLAB__TOKEN)")
        self._url = settings.url
        self._token = settings.token.get_secret_value()
        self._timeout = settings.timeout_s
        self._local = threading.local()
        self._clients: list[gitlab.Gitlab] = []  # every thread's, so that `close` closes their connections
        self._clients_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=settings.api_concurrency, thread_name_prefix="gitlab")
        self._slots = asyncio.Semaphore(settings.api_concurrency)
        self.gate = RateGate()

    def close(self) -> None:
        """Stop the worker threads and close their HTTP sessions (else their sockets are left to the GC)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        with self._clients_lock:
            clients, self._clients = self._clients, []
        for client in clients:
            client.session.close()

    def _client(self) -> gitlab.Gitlab:
        client: gitlab.Gitlab | None = getattr(self._local, "client", None)
        if client is None:
            client = gitlab.Gitlab(
                self._url, private_token=self._token, timeout=self._timeout, retry_transient_errors=True, per_page=100
            )
            client.session.hooks["response"].append(self._observe)
            client.session.hooks["response"].append(observe_response)  # every answer, retried ones too
            self._local.client = client
            with self._clients_lock:
                self._clients.append(client)
        return client

    def _observe(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        if ARCHIVE_PATH in response.url:
            return  # the archive's limit is per project (5 a minute): its 429 sends that sync to the tree walk
        self.gate.observe(response.status_code, response.headers)

    async def _call(self, fn: Callable[[gitlab.Gitlab], T]) -> T:
        async with self._slots:
            await self.gate.wait()
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._pool, _translated, lambda: fn(self._client()))

    async def project(self, project_id: int) -> ProjectInfo:
        """GET /projects/:id."""

        def get(gl: gitlab.Gitlab) -> ProjectInfo:
            return project_info(gl.projects.get(project_id, max_retries=META_RETRIES).attributes)

        return await self._call(get)

    async def branch_head(self, project_id: int, branch: str) -> str | None:
        """The commit a branch points at; None when the branch does not exist (an empty repository)."""

        def get(gl: gitlab.Gitlab) -> str | None:
            try:
                branch_obj = gl.projects.get(project_id, lazy=True).branches.get(branch, max_retries=META_RETRIES)
            except gitlab.exceptions.GitlabGetError as exc:
                if exc.response_code == 404:
                    return None
                raise
            return str(branch_obj.attributes["commit"]["id"])

        return await self._call(get)

    async def compare(self, project_id: int, from_sha: str, to_sha: str) -> Comparison | None:
        """A direct (`straight=true`) compare; None when `from_sha` is gone (force push, GC)."""

        def get(gl: gitlab.Gitlab) -> Comparison | None:
            project = gl.projects.get(project_id, lazy=True)
            try:
                result: dict[str, Any] = project.repository_compare(  # type: ignore[assignment]
                    from_sha, to_sha, straight=True, max_retries=META_RETRIES
                )
            except gitlab.exceptions.GitlabError as exc:
                if exc.response_code == 404:
                    return None
                raise
            return Comparison(
                diffs=tuple(_diff(d) for d in result.get("diffs", [])),
                overflow=bool(result.get("compare_timeout")),
                parent_ids=frozenset(p for c in result.get("commits", []) for p in c.get("parent_ids", [])),
                commits=len(result.get("commits", [])),
            )

        return await self._call(get)

    async def tree(self, project_id: int, sha: str) -> dict[str, str]:
        """Every blob at a commit: path → blob id (recursive, keyset pagination)."""

        def get(gl: gitlab.Gitlab) -> dict[str, str]:
            project = gl.projects.get(project_id, lazy=True)
            entries: Iterator[dict[str, Any]] = project.repository_tree(  # type: ignore[assignment]
                ref=sha, recursive=True, iterator=True, pagination="keyset", per_page=100, max_retries=META_RETRIES
            )
            return {str(e["path"]): str(e["id"]) for e in entries if e.get("type") == "blob"}

        return await self._call(get)

    async def raw_file(self, project_id: int, path: str, ref: str, max_bytes: int) -> RawFile:
        """A file's bytes at a ref with its blob id; over `max_bytes` only the size is returned."""

        def get(gl: gitlab.Gitlab) -> RawFile:
            url = f"/projects/{project_id}/repository/files/{quote(path, safe='')}/raw"
            response: requests.Response = gl.http_request(
                "get", url, query_data={"ref": ref}, streamed=True, max_retries=_FILE_RETRIES
            )
            return _read_capped(response, max_bytes)

        return await self._call(get)

    async def raw_blob(self, project_id: int, blob_id: str, max_bytes: int) -> RawFile:
        """A blob's bytes by id (the tree walk knows blob ids)."""

        def get(gl: gitlab.Gitlab) -> RawFile:
            url = f"/projects/{project_id}/repository/blobs/{blob_id}/raw"
            response: requests.Response = gl.http_request("get", url, streamed=True, max_retries=_FILE_RETRIES)
            raw = _read_capped(response, max_bytes)
            return RawFile(data=raw.data, blob_id=blob_id, size=raw.size)

        return await self._call(get)

    async def project_at(self, ref: int | str) -> ProjectInfo:
        """GET /projects/:id by id or full path (`acme/shop`, sent URL-encoded)."""

        def get(gl: gitlab.Gitlab) -> ProjectInfo:
            return project_info(gl.projects.get(ref, max_retries=META_RETRIES).attributes)

        return await self._call(get)

    async def group_projects(self, ref: int | str, *, include_subgroups: bool) -> list[ProjectInfo]:
        """GET /groups/:id/projects (by id or full path), archived ones too, shared ones not, 100 a page."""

        def get(gl: gitlab.Gitlab) -> list[ProjectInfo]:
            pages = gl.groups.get(ref, lazy=True).projects.list(
                iterator=True, include_subgroups=include_subgroups, with_shared=False, order_by="id", sort="asc",
                per_page=LISTING_PAGE, max_retries=META_RETRIES,
            )  # fmt: skip
            return [project_info(p.attributes) for p in pages]

        return await self._call(get)

    async def archive(
        self, project_id: int, sha: str, keep: Callable[[str], bool], max_bytes: int
    ) -> dict[str, RawFile]:
        """The files `keep` accepts at `sha`, from one streamed `repository/archive.tar.gz` request.

        No retry and no wait on a 429 (the archive limit is 5 a minute per project on GitLab.com): the
        caller walks the tree instead (`GitLabUnavailableError`, or `ArchiveRefusedError`).
        """

        def get(gl: gitlab.Gitlab) -> dict[str, RawFile]:
            response: requests.Response = gl.http_request(
                "get", f"/projects/{project_id}{ARCHIVE_PATH}.tar.gz", query_data={"sha": sha}, streamed=True,
                obey_rate_limit=False, max_retries=0,
            )  # fmt: skip
            try:
                files = read_archive(response.raw, keep, max_bytes, blob_hash_name(sha))
            finally:
                response.close()
            return {path: RawFile(data=data, blob_id=blob, size=size) for path, (data, blob, size) in files.items()}

        return await self._call(get)

    async def project_ids(self) -> list[ProjectInfo]:
        """Every project the token can see, archived ones too (by id, 100 a page), for a backfill.

        The indexing scope (`app.sync.scope`) decides which of them are indexed, archived ones included,
        so that a backfill also finds the known projects that left scope.
        """
        return [a.project for a in await self.activity(None, archived=True)]

    async def activity(self, after: datetime | None, *, archived: bool = False) -> list[Activity]:
        """Projects with activity after `after` (None: every one), by id, 100 a page; archived ones when asked.

        `last_activity_after` keeps projects whose `last_activity_at` is strictly later
        (`ProjectsFinder#by_last_activity_after`). Pages are asked by `id_after` and a short page is
        the last: GitLab's keyset pager links a next page after every non-empty one
        (`Gitlab::Pagination::Keyset::Pager#apply_headers`), which would cost an empty call more.
        """
        query: dict[str, Any] = {"last_activity_after": _iso(after)} if after is not None else {}
        if not archived:
            query["archived"] = False  # absent, GitLab lists archived and active projects alike

        def get(gl: gitlab.Gitlab) -> list[Activity]:
            found: list[Activity] = []
            while True:
                page = gl.projects.list(
                    get_all=False, order_by="id", sort="asc", per_page=LISTING_PAGE,
                    id_after=found[-1].project.id if found else 0, max_retries=META_RETRIES, **query,
                )  # fmt: skip
                found += [_activity(p.attributes) for p in page]
                if len(page) < LISTING_PAGE:
                    return found

        return await self._call(get)


def _activity(attrs: dict[str, Any]) -> Activity:
    return Activity(project=project_info(attrs), last_activity_at=_time(attrs["last_activity_at"]))


def _iso(moment: datetime) -> str:
    """ISO 8601 in UTC, as the API documents its DateTime parameters (`YYYY-MM-DDTHH:MM:SSZ`)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _time(value: str) -> datetime:
    """An API timestamp (`2026-12-01T09:52:42.123Z`) as an aware datetime."""
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _diff(d: dict[str, Any]) -> Diff:
    return Diff(
        old_path=str(d["old_path"]),
        new_path=str(d["new_path"]),
        new_file=bool(d.get("new_file")),
        renamed_file=bool(d.get("renamed_file")),
        deleted_file=bool(d.get("deleted_file")),
    )


def observe_response(response: requests.Response, *args: object, **kwargs: object) -> None:
    """Count a GitLab answer by endpoint template and status; a 429 is a rate-limit wait (python-gitlab sleeps it)."""
    endpoint = metrics.gitlab_endpoint(urlsplit(response.url).path)
    metrics.GITLAB_REQUESTS.labels(endpoint=endpoint, status=str(response.status_code)).inc()
    if response.status_code == 429:
        metrics.RATE_LIMIT_WAITS.labels(upstream="gitlab").inc()
        wait = response.headers.get("Retry-After", "")
        metrics.RATE_LIMIT_SECONDS.labels(upstream="gitlab").inc(float(wait) if wait.isdigit() else 0.0)


def _read_capped(response: requests.Response, max_bytes: int) -> RawFile:
    """Read a streamed body up to `max_bytes`; past it, stop and report only the size."""
    blob_id = response.headers.get("X-Gitlab-Blob-Id", "")
    declared = int(response.headers.get("X-Gitlab-Size") or response.headers.get("Content-Length") or -1)
    try:
        if declared > max_bytes:
            return RawFile(data=None, blob_id=blob_id, size=declared)
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_content(chunk_size=65536):
            size += len(chunk)
            if size > max_bytes:
                return RawFile(data=None, blob_id=blob_id, size=size)
            chunks.append(chunk)
        return RawFile(data=b"".join(chunks), blob_id=blob_id, size=size)
    finally:
        response.close()


def _translated(call: Callable[[], T]) -> T:
    """Run a python-gitlab call and translate its errors (runs in a worker thread)."""
    try:
        return call()
    except gitlab.exceptions.GitlabAuthenticationError as exc:
        raise GitLabAuthError(f"GitLab refused the token: {exc}") from exc
    except gitlab.exceptions.GitlabError as exc:
        code = exc.response_code or 0
        if code in (401, 403):
            raise GitLabAuthError(f"GitLab refused the token (HTTP {code})") from exc
        if code == 404:
            raise GitLabNotFoundError(f"not found on GitLab: {exc.error_message}") from exc
        if code == 429 or code >= 500:
            raise GitLabUnavailableError(f"GitLab unavailable (HTTP {code}): {exc.error_message}") from exc
        raise GitLabError(f"GitLab error (HTTP {code}): {exc.error_message}") from exc
    except (requests.ConnectionError, requests.Timeout) as exc:
        raise GitLabUnavailableError(f"GitLab unreachable: {exc}") from exc
    except (tarfile.TarError, EOFError, zlib.error, urllib3.exceptions.HTTPError, OSError) as exc:
        # An archive cut or corrupted while it streamed (a dropped connection, a bad gzip member).
        raise GitLabUnavailableError(f"GitLab's archive could not be read: {exc}") from exc
