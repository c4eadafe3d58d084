"""Settings entries for test tokens: what `javakb token` prints, for a token the test chose."""

from __future__ import annotations

from app.auth.access import token_digest
from app.core.access_settings import ALL_REPOS, AdminToken, IndexJobToken, ServiceToken


def service_token(token: str, repos: list[str] | None = None, name: str = "test") -> ServiceToken:
    """A service token reading `repos` (default: every repository)."""
    return ServiceToken(name=name, sha256=token_digest(token), repos=repos or [ALL_REPOS])


def admin_token(token: str, name: str = "admin") -> AdminToken:
    """An admin token for `/admin/*`."""
    return AdminToken(name=name, sha256=token_digest(token))


def index_job_token(token: str, project_id: int, name: str = "ci") -> IndexJobToken:
    """An index-job token for `POST /api/v1/index-jobs` of one project."""
    return IndexJobToken(name=name, sha256=token_digest(token), project_id=project_id)
