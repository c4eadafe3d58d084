"""Credentials: a bearer token in, the caller's `Access` out (service tokens, GitLab identities, admins).

A token is first compared with the service tokens of the settings (stored as sha256 digests, every
entry compared in constant time); otherwise it is taken as a GitLab token (an OAuth access token, or a
personal, project or group access token) and GitLab is asked who it belongs to (`GET /api/v4/user`)
and which projects it may read:

- `GET /api/v4/projects?min_access_level=20&simple=true` with the caller's own token lists the
  projects where the caller is a Reporter or higher, through direct, inherited (parent group) and
  shared-group membership alike (`lib/api/projects.rb`, `ProjectsFinder` with `min_access_level`).
  Reporter is what GitLab requires for `read_code` on a private project. Project and group access
  tokens are bot users, so the same call lists their projects.
- Internal and public projects whose repository is open to everyone (`projects.visibility`,
  `projects.repository_access` in PostgreSQL, kept from the API by the sync) are added; external
  users (`/user` → `external: true`) get only the public ones, as in GitLab.
- GitLab administrators (`is_admin`) read everything.

The resolved `Access` is cached per token (keyed by its sha256, never the token) for
`access.ttl_s`: a removed member or a changed visibility is seen within that time. For visibility,
the TTL counts from when the open projects were last read from GitLab (`OpenSet.as_of`,
`app.auth.visibility`), not from the lookup.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

import httpx

from app.auth.access import Access, everything, token_digest
from app.core.access_settings import ALL_REPOS, AdminToken
from app.core.errors import GitLabAuthError, GitLabUnavailableError
from app.core.settings import Settings

logger = logging.getLogger(__name__)

REPORTER = 20
"""GitLab's Reporter access level: the least that may read a private project's code (`read_code`)."""
PROJECTS_PAGE = 100
MAX_CACHED = 10_000

T = TypeVar("T", bound=AdminToken)


class OpenSet(NamedTuple):
    """The indexed projects any signed-in user may read: id → visibility (`internal`/`public`)."""

    visibility: dict[int, str]
    as_of: float | None = None
    """When (on the identities' clock) GitLab was last asked about visibility; None: not asked, now."""


OpenProjects = Callable[[], Awaitable[OpenSet]]


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header; the scheme is case-insensitive (RFC 7235 §2.1)."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def match_token(token: str, entries: Sequence[T]) -> T | None:
    """The entry whose digest is the token's; every entry is compared, in constant time."""
    digest = token_digest(token).encode()
    found: T | None = None
    for entry in entries:
        if hmac.compare_digest(digest, entry.sha256.encode()):
            found = entry
    return found


@dataclass(frozen=True, slots=True, kw_only=True)
class GitLabUser:
    """What `GET /api/v4/user` says about the caller."""

    id: int
    username: str
    is_admin: bool
    external: bool


def project_set(user: GitLabUser, member_of: set[int], open_projects: dict[int, str]) -> Access:
    """The access of a GitLab user: everything for admins, else Reporter+ memberships plus open projects."""
    subject = f"user:{user.id}"
    if user.is_admin:
        return everything(subject)
    readable = {pid for pid, vis in open_projects.items() if vis == "public" or not user.external}
    return Access(subject=subject, project_ids=frozenset(member_of | readable))


class GitLabIdentities:
    """Resolves a GitLab token to the caller's `Access`, cached per token digest for `ttl_s`."""

    def __init__(
        self,
        base_url: str,
        http: Callable[[], httpx.AsyncClient],
        open_projects: OpenProjects,
        *,
        ttl_s: float,
        timeout_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        page_size: int = PROJECTS_PAGE,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._page_size = page_size
        self._http = http
        self._open_projects = open_projects
        self._ttl_s = ttl_s
        self._timeout_s = timeout_s
        self._clock = clock
        self._cache: dict[str, tuple[float, Access | None]] = {}
        self._pending: dict[str, asyncio.Task[Access | None]] = {}

    async def resolve(self, token: str) -> Access | None:
        """The token's access, or None when GitLab does not know the token.

        Raises:
            GitLabUnavailableError: GitLab did not answer (the caller answers 503, not 401).
        """
        key = token_digest(token)
        cached = self._cache.get(key)
        if cached is not None and self._clock() < cached[0]:
            return cached[1]
        # Concurrent first requests with one token (an MCP client opening a session) ask GitLab once.
        task = self._pending.get(key)
        if task is None:
            task = asyncio.ensure_future(self._lookup(token, key))
            self._pending[key] = task
            task.add_done_callback(lambda _: self._pending.pop(key, None))
        return await asyncio.shield(task)

    async def _lookup(self, token: str, key: str) -> Access | None:
        now = self._clock()
        try:
            user = await self._user(token)
            member_of = await self._member_projects(token)
        except GitLabAuthError:
            # Remembered too, so repeating a refused token does not ask GitLab again within the TTL.
            self._remember(key, now, None)
            return None
        open_set = await self._open_projects()
        access = project_set(user, member_of, open_set.visibility)
        # Cached from when visibility was read, so a project made private leaves every access within the TTL.
        self._remember(key, min(now, open_set.as_of if open_set.as_of is not None else now), access)
        return access

    def _remember(self, key: str, now: float, access: Access | None) -> None:
        if len(self._cache) >= MAX_CACHED:
            self._cache = {k: v for k, v in self._cache.items() if v[0] > now}
            if len(self._cache) >= MAX_CACHED:
                self._cache.clear()
        self._cache[key] = (now + self._ttl_s, access)

    async def _user(self, token: str) -> GitLabUser:
        body = await self._get_json(f"{self.base_url}/api/v4/user", token)
        if not isinstance(body, dict) or not isinstance(body.get("id"), int):
            raise GitLabUnavailableError("GitLab /user answered an unexpected body")
        return GitLabUser(
            id=body["id"],
            username=str(body.get("username", "")),
            is_admin=body.get("is_admin") is True,
            external=body.get("external") is True,
        )

    async def _member_projects(self, token: str) -> set[int]:
        url: str | None = (
            f"{self.base_url}/api/v4/projects?min_access_level={REPORTER}&simple=true"
            f"&pagination=keyset&order_by=id&sort=asc&per_page={self._page_size}"
        )
        ids: set[int] = set()
        while url is not None:
            response = await self._get(url, token)
            body = _json(response)
            if not isinstance(body, list):
                raise GitLabUnavailableError("GitLab /projects answered an unexpected body")
            ids.update(p["id"] for p in body if isinstance(p, dict) and isinstance(p.get("id"), int))
            nxt = response.links.get("next", {}).get("url")
            # Follow only links back to the same GitLab: the token goes with every request.
            url = nxt if nxt and nxt.startswith(self.base_url + "/") and body else None
        return ids

    async def _get_json(self, url: str, token: str) -> Any:
        return _json(await self._get(url, token))

    async def _get(self, url: str, token: str) -> httpx.Response:
        try:
            response = await self._http().get(
                url, headers={"Authorization": f"Bearer {token}"}, timeout=self._timeout_s
            )
        except httpx.HTTPError as exc:
            raise GitLabUnavailableError(f"GitLab did not answer: {type(exc).__name__}") from exc
        if response.status_code in (401, 403):
            raise GitLabAuthError("GitLab refused the token")
        if response.status_code != 200:
            raise GitLabUnavailableError(f"GitLab answered {response.status_code}")
        return response


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError as exc:
        raise GitLabUnavailableError("GitLab answered something that is not JSON") from exc


class Credentials:
    """Every credential `/mcp` and `/api/v1/*` accept: service tokens first, then GitLab identities."""

    def __init__(self, settings: Settings, identities: GitLabIdentities | None) -> None:
        self._service_tokens = settings.service_tokens
        self.identities = identities

    async def access(self, token: str) -> Access | None:
        """The caller's access, or None for a token nobody issued.

        Raises:
            GitLabUnavailableError: the token may be GitLab's, but GitLab did not answer.
        """
        entry = match_token(token, self._service_tokens)
        if entry is not None:
            subject = f"service:{entry.name}"
            if ALL_REPOS in entry.repos:
                return everything(subject)
            return Access(subject=subject, repo_prefixes=tuple(entry.repos))
        if self.identities is None:
            return None
        return await self.identities.resolve(token)


def build_credentials(
    settings: Settings,
    http: Callable[[], httpx.AsyncClient],
    open_projects: OpenProjects,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> Credentials:
    """Service tokens, plus GitLab identities when `JAVAKB_GITLAB__URL` is set."""
    identities = None
    if settings.gitlab.url:
        identities = GitLabIdentities(
            settings.gitlab.url,
            http,
            open_projects,
            ttl_s=settings.access.ttl_s,
            timeout_s=settings.gitlab.timeout_s,
            clock=clock,
        )
    return Credentials(settings, identities)
