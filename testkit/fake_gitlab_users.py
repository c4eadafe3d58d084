"""Who may read what in the fake GitLab: users and their tokens, groups, memberships, and OAuth.

Kept apart from the sync-side fake (`fake_gitlab.py`, `fake_gitlab_api.py`), which only asks this
module which user a token belongs to and which projects that user may list. Behaviour follows
gitlabhq (paths relative to its repository):

- access levels: `app/models/project_authorization.rb` and `Projects::Authorizations` (the highest of
  direct project membership, membership of the project's group or any ancestor group (inherited), a
  group the project's group is shared with (`group_group_links`, capped at the link's level, applying
  to the shared group's descendants too) and a group the project is shared with
  (`project_group_links`, capped likewise); Guest 10, Reporter 20, Developer 30, Maintainer 40, Owner 50;
- `GET /projects` (`lib/api/projects.rb`, `ProjectsFinder`): `min_access_level` keeps projects where
  the caller has at least that level; `membership=true` keeps projects where the caller is a member;
  otherwise every project the caller can see (public, internal unless the user is external, and
  member projects); administrators see every project unless `min_access_level`/`membership` is given;
- `GET /user` (`lib/api/users.rb`): `Entities::UserPublic` (with `external`, `bot`), plus `is_admin`
  only for administrators (`lib/api/entities/user_with_admin.rb`);
- OAuth (`doc/api/oauth2.md`, Doorkeeper): `/oauth/authorize` redirects the signed-in user back with
  a `code`; `/oauth/token` exchanges it (client id and secret in the body or HTTP Basic, PKCE S256
  checked, `redirect_uri` must match) for `{access_token, token_type: "Bearer", expires_in: 7200,
  refresh_token, scope, created_at}`; errors are RFC 6749 `{"error": ..., "error_description": ...}`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from testkit.fake_gitlab_model import ProjectSnapshot

GUEST, REPORTER, DEVELOPER, MAINTAINER, OWNER = 10, 20, 30, 40, 50


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeUser:
    id: int
    username: str
    token: str  # a personal (or, for a bot, project/group) access token
    is_admin: bool = False
    external: bool = False
    bot: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class OAuthApp:
    client_id: str
    client_secret: str
    redirect_uri: str


@dataclass(frozen=True, slots=True, kw_only=True)
class _Grant:
    user_id: int
    client_id: str
    redirect_uri: str
    scope: str
    code_challenge: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpReply:
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...]


@dataclass
class Directory:
    """Users, groups and memberships of the fake GitLab; change it only through its methods."""

    users: dict[int, FakeUser] = field(default_factory=dict)
    group_members: dict[str, dict[int, int]] = field(default_factory=dict)  # group path → user → level
    project_members: dict[int, dict[int, int]] = field(default_factory=dict)  # project → user → level
    group_links: list[tuple[str, str, int]] = field(default_factory=list)  # (shared group, with group, level)
    project_links: list[tuple[int, str, int]] = field(default_factory=list)  # (project, with group, level)
    oauth_apps: dict[str, OAuthApp] = field(default_factory=dict)
    oauth_tokens: dict[str, int] = field(default_factory=dict)  # access token → user
    signed_in: int | None = None  # the user whose browser goes through /oauth/authorize
    token_requests: int = 0
    pkce_verified: int = 0  # token exchanges whose code_verifier matched the authorize request's challenge
    _grants: dict[str, _Grant] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- test-side controls --------------------------------------------------------------------------

    def add_user(self, username: str, *, is_admin: bool = False, external: bool = False, bot: bool = False) -> FakeUser:
        with self._lock:
            user_id = 100 + len(self.users)
            user = FakeUser(
                id=user_id, username=username, token=f"glpat-{username}-{secrets.token_hex(4)}",
                is_admin=is_admin, external=external, bot=bot,
            )  # fmt: skip
            self.users[user_id] = user
            return user

    def add_group_member(self, group: str, user: FakeUser, level: int) -> None:
        with self._lock:
            self.group_members.setdefault(group, {})[user.id] = level

    def add_project_member(self, project_id: int, user: FakeUser, level: int) -> None:
        with self._lock:
            self.project_members.setdefault(project_id, {})[user.id] = level

    def remove_project_member(self, project_id: int, user: FakeUser) -> None:
        with self._lock:
            self.project_members.get(project_id, {}).pop(user.id, None)

    def share_group(self, shared: str, with_group: str, level: int) -> None:
        """`POST /groups/:id/share`: members of `with_group` get up to `level` in `shared` and below."""
        with self._lock:
            self.group_links.append((shared, with_group, level))

    def share_project(self, project_id: int, with_group: str, level: int) -> None:
        with self._lock:
            self.project_links.append((project_id, with_group, level))

    def register_oauth_app(self, redirect_uri: str) -> OAuthApp:
        app = OAuthApp(
            client_id=secrets.token_hex(16), client_secret="gloas-" + secrets.token_hex(16), redirect_uri=redirect_uri
        )
        with self._lock:
            self.oauth_apps[app.client_id] = app
        return app

    # -- used by the API -----------------------------------------------------------------------------

    def user_for(self, token: str | None) -> FakeUser | None:
        if not token:
            return None
        with self._lock:
            if token in self.oauth_tokens:
                return self.users.get(self.oauth_tokens[token])
            return next((u for u in self.users.values() if u.token == token), None)

    def access_level(self, user: FakeUser, project: ProjectSnapshot) -> int:
        """The user's highest access level on the project, over every way GitLab grants one."""
        with self._lock:
            levels = [self.project_members.get(project.id, {}).get(user.id, 0)]
            levels.extend(self._group_level(user, g) for g in _ancestors(project.namespace.full_path))
            for pid, with_group, cap in self.project_links:
                if pid == project.id:
                    levels.append(min(cap, self._member_level(user, with_group)))
        return max(levels)

    def _group_level(self, user: FakeUser, group: str) -> int:
        """Direct membership of `group`, plus what groups shared with it grant (lock held)."""
        level = self.group_members.get(group, {}).get(user.id, 0)
        for shared, with_group, cap in self.group_links:
            if shared == group:
                level = max(level, min(cap, self._member_level(user, with_group)))
        return level

    def _member_level(self, user: FakeUser, group: str) -> int:
        """Membership of `group` directly or inherited from an ancestor (not through its own shares)."""
        return max(self.group_members.get(g, {}).get(user.id, 0) for g in _ancestors(group))

    def visible(self, user: FakeUser, projects: list[ProjectSnapshot], query: dict[str, str]) -> list[ProjectSnapshot]:
        """The `GET /projects` listing for `user` with `min_access_level` / `membership` as GitLab reads them."""
        raw_min = query.get("min_access_level")
        membership = query.get("membership", "").lower() in ("true", "1", "yes", "t")
        if raw_min:
            wanted = int(raw_min)
            return [p for p in projects if self.access_level(user, p) >= wanted]
        if membership:
            return [p for p in projects if self.access_level(user, p) > 0]
        if user.is_admin:
            return projects
        return [p for p in projects if self._can_see(user, p)]

    def _can_see(self, user: FakeUser, project: ProjectSnapshot) -> bool:
        if project.visibility == "public" or (project.visibility == "internal" and not user.external):
            return True
        return self.access_level(user, project) > 0

    # -- OAuth ---------------------------------------------------------------------------------------

    def oauth(self, method: str, target: str, body: bytes, authorization: str | None) -> HttpReply:
        path, _, query_string = target.partition("?")
        if method == "GET" and path == "/oauth/authorize":
            return self._authorize(dict(parse_qsl(query_string)))
        if method == "POST" and path == "/oauth/token":
            return self._token(dict(parse_qsl(body.decode())), authorization)
        return _json(404, {"error": "404 Not Found"})

    def _authorize(self, q: dict[str, str]) -> HttpReply:
        app = self.oauth_apps.get(q.get("client_id", ""))
        if app is None or q.get("redirect_uri") != app.redirect_uri:
            # Doorkeeper shows an error page instead of redirecting to an unverified URI.
            return _json(400, {"error": "invalid_client", "error_description": "unknown client or redirect URI"})
        if q.get("response_type") != "code" or self.signed_in is None:
            return _redirect(app.redirect_uri, {"error": "access_denied", "state": q.get("state", "")})
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._grants[code] = _Grant(
                user_id=self.signed_in, client_id=app.client_id, redirect_uri=app.redirect_uri,
                scope=q.get("scope", ""), code_challenge=q.get("code_challenge"),
            )  # fmt: skip
        return _redirect(app.redirect_uri, {"code": code, "state": q.get("state", "")})

    def _token(self, form: dict[str, str], authorization: str | None) -> HttpReply:
        client_id, secret = _client_credentials(form, authorization)
        app = self.oauth_apps.get(client_id)
        with self._lock:
            self.token_requests += 1
            grant = self._grants.pop(form.get("code", ""), None)
        if app is None or not secrets.compare_digest(secret, app.client_secret):
            return _json(401, {"error": "invalid_client", "error_description": "Client authentication failed"})
        if form.get("grant_type") != "authorization_code" or grant is None or grant.client_id != client_id:
            return _json(400, {"error": "invalid_grant", "error_description": "The provided grant is invalid"})
        if form.get("redirect_uri") != grant.redirect_uri or not _pkce_ok(
            grant.code_challenge, form.get("code_verifier")
        ):
            return _json(400, {"error": "invalid_grant", "error_description": "The provided grant is invalid"})
        token = secrets.token_hex(32)
        with self._lock:
            self.oauth_tokens[token] = grant.user_id
            self.pkce_verified += grant.code_challenge is not None
        return _json(200, {
            "access_token": token, "token_type": "Bearer", "expires_in": 7200,
            "refresh_token": secrets.token_hex(32), "scope": grant.scope, "created_at": int(time.time()),
        })  # fmt: skip


def user_entity(user: FakeUser, base_url: str) -> dict[str, Any]:
    """`GET /user`: `Entities::UserPublic`, with `is_admin` only for administrators."""
    entity: dict[str, Any] = {
        "id": user.id, "username": user.username, "name": user.username.title(), "state": "active",
        "locked": False, "avatar_url": None, "web_url": f"{base_url}/{user.username}",
        "bot": user.bot, "external": user.external, "email": f"{user.username}@example.com",
    }  # fmt: skip
    if user.is_admin:
        entity["is_admin"] = True
    return entity


def _ancestors(group: str) -> list[str]:
    parts = group.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _client_credentials(form: dict[str, str], authorization: str | None) -> tuple[str, str]:
    scheme, _, value = (authorization or "").partition(" ")
    if scheme.lower() == "basic" and value:
        client_id, _, secret = base64.b64decode(value).decode().partition(":")
        return client_id, secret
    return form.get("client_id", ""), form.get("client_secret", "")


def _pkce_ok(challenge: str | None, verifier: str | None) -> bool:
    if challenge is None:
        return True  # PKCE is optional for confidential clients
    if not verifier:
        return False
    digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return secrets.compare_digest(digest, challenge)


def _redirect(uri: str, params: dict[str, str]) -> HttpReply:
    separator = "&" if urlsplit(uri).query else "?"
    return HttpReply(status=302, body=b"", headers=(("Location", uri + separator + urlencode(params)),))


def _json(status: int, body: Any) -> HttpReply:
    return HttpReply(status=status, body=json.dumps(body).encode(), headers=(("Content-Type", "application/json"),))
