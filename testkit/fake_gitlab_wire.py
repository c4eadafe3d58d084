"""The fake GitLab's wire format: request and response, API errors, query parameters, pagination
(offset and Link headers), the project list's filters and order, and GitLab's JSON entities and timestamps.

Shapes follow gitlabhq as `fake_gitlab_api.py` lists; its endpoints are built from these.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import formatdate
from http import HTTPStatus
from typing import Any, TypeVar
from urllib.parse import quote, unquote, urlencode

from testkit.fake_gitlab_model import Fault, ProjectSnapshot
from testkit.fake_gitlab_users import FakeUser
from testkit.git_repo import CommitInfo

T = TypeVar("T")
Json = dict[str, Any]
DEFAULT_PER_PAGE = 20
MAX_PER_PAGE = 100
HEX_SHA = re.compile(r"[0-9a-fA-F]{4,64}")
_TRUE = {"true", "1", "yes", "t"}
_FALSE = {"false", "0", "no", "f"}


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...]


class ApiError(Exception):
    def __init__(self, status: int, payload: Json) -> None:
        super().__init__(status, payload)
        self.status = status
        self.payload = payload


def not_found(what: str | None = None) -> ApiError:
    return ApiError(404, {"message": f"404 {what} Not Found" if what else "404 Not Found"})


def bad_request(message: str) -> ApiError:
    return ApiError(400, {"error": message})


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    method: str
    path: str  # as sent, percent-encoded
    query: dict[str, str]
    params: dict[str, str]  # route placeholders, decoded
    base_url: str
    user: FakeUser | None = None  # None: the sync's own (administrator) token
    body: bytes = b""


HeaderPair = tuple[str, str]


def token_entity(user_id: int, scopes: Sequence[str]) -> Json:
    """`Entities::PersonalAccessToken` of the token that asks."""
    return {
        "id": 1000 + user_id, "name": "javakb", "revoked": False, "created_at": "2026-01-01T00:00:00.000Z",
        "description": None, "scopes": list(scopes), "user_id": user_id, "last_used_at": None, "active": True,
        "expires_at": None,
    }  # fmt: skip


def system_hook_entity(
    hook_id: int, url: str, *, push_events: bool = True, repository_update_events: bool = True
) -> Json:
    """`Entities::Hook` of a system hook as `GET /hooks` lists it (the token is never returned)."""
    return {
        "id": hook_id, "url": url, "name": "", "description": "", "created_at": "2026-01-01T00:00:00.000Z",
        "push_events": push_events, "tag_push_events": False, "merge_requests_events": False,
        "repository_update_events": repository_update_events, "enable_ssl_verification": True, "url_variables": [],
    }  # fmt: skip


def commit_entity(commit: CommitInfo, project_web_url: str) -> Json:
    extended: dict[str, list[str]] = {}
    for key, value in commit.trailers:
        extended.setdefault(key, []).append(value)
    return {
        "id": commit.sha,
        "short_id": commit.sha[:8],
        "created_at": _api_time(commit.committed_date),
        "parent_ids": list(commit.parent_ids),
        "title": commit.message.split("\n", 1)[0].rstrip("\r"),
        "message": commit.message,
        "author_name": commit.author_name,
        "author_email": commit.author_email,
        "authored_date": _api_time(commit.authored_date),
        "committer_name": commit.committer_name,
        "committer_email": commit.committer_email,
        "committed_date": _api_time(commit.committed_date),
        "trailers": {key: values[-1] for key, values in extended.items()},
        "extended_trailers": extended,
        "web_url": f"{project_web_url}/-/commit/{commit.sha}",
    }


def _api_time(git_iso: str) -> str:
    """Git's strict ISO date as Rails renders times in the API: with milliseconds and the commit's offset."""
    return datetime.fromisoformat(git_iso).isoformat(timespec="milliseconds")


def bool_param(query: dict[str, str], name: str, *, default: bool) -> bool:
    """Grape's Boolean coercion: python-gitlab sends `True`, curl users send `true`."""
    raw = query.get(name)
    if raw is None:
        return default
    if raw.lower() in _TRUE:
        return True
    if raw.lower() in _FALSE:
        return False
    raise bad_request(f"{name} is invalid")


def int_param(query: dict[str, str], name: str, default: int) -> int:
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise bad_request(f"{name} is invalid") from None


def per_page_param(query: dict[str, str]) -> int:
    per_page = int_param(query, "per_page", DEFAULT_PER_PAGE)
    return DEFAULT_PER_PAGE if per_page <= 0 else min(per_page, MAX_PER_PAGE)


def offset_page(items: Sequence[T], req: Request) -> tuple[list[T], list[HeaderPair]]:
    """Kaminari-style page plus GitLab's `OffsetHeaderBuilder` headers."""
    per_page = per_page_param(req.query)
    page = max(int_param(req.query, "page", 1), 1)
    total_pages = max(math.ceil(len(items) / per_page), 1)
    next_page = page + 1 if page < total_pages else None
    prev_page = page - 1 if page > 1 else None
    links = [f'<{page_url(req, [("page", str(prev_page))])}>; rel="prev"'] if prev_page else []
    links += [f'<{page_url(req, [("page", str(next_page))])}>; rel="next"'] if next_page else []
    links += [f'<{page_url(req, [("page", "1")])}>; rel="first"']
    links += [f'<{page_url(req, [("page", str(total_pages))])}>; rel="last"']
    headers = [
        ("X-Per-Page", str(per_page)),
        ("X-Page", str(page)),
        ("X-Next-Page", str(next_page or "")),
        ("X-Prev-Page", str(prev_page or "")),
        ("Link", ", ".join(links)),
        ("X-Total", str(len(items))),
        ("X-Total-Pages", str(total_pages)),
    ]
    return list(items[(page - 1) * per_page : page * per_page]), headers


def page_url(req: Request, updates: list[HeaderPair]) -> str:
    """The request's URL on GitLab's configured host with some params replaced (Rails `to_query`: sorted)."""
    params = dict(req.query) | dict(updates)
    return f"{req.base_url}{req.path}?{urlencode(sorted(params.items()))}"


def next_link(req: Request, updates: list[HeaderPair]) -> str:
    return f'<{page_url(req, updates)}>; rel="next"'


def filter_attributes(projects: list[ProjectSnapshot], query: dict[str, str]) -> list[ProjectSnapshot]:
    """`archived` (absent: both), `visibility` and `topic` filters of `GET /projects` (`lib/api/projects.rb`)."""
    if "archived" in query:
        archived = bool_param(query, "archived", default=False)
        projects = [p for p in projects if p.archived == archived]
    visibility = query.get("visibility")
    if visibility:
        if visibility not in ("private", "internal", "public"):
            raise bad_request("visibility does not have a valid value")
        projects = [p for p in projects if p.visibility == visibility]
    topic = query.get("topic")
    if topic:
        wanted = {t.strip().lower() for t in topic.split(",") if t.strip()}
        projects = [p for p in projects if wanted <= {t.lower() for t in p.topics}]
    return projects


def filter_ids(projects: list[ProjectSnapshot], query: dict[str, str]) -> list[ProjectSnapshot]:
    after = int_param(query, "id_after", 0)
    before = int_param(query, "id_before", 0)
    return [p for p in projects if p.id > after and (before == 0 or p.id < before)]


def filter_activity(projects: list[ProjectSnapshot], query: dict[str, str]) -> list[ProjectSnapshot]:
    """`last_activity_after` / `_before` (`ProjectsFinder#by_last_activity_after`: strictly later / earlier)."""
    after, before = datetime_param(query, "last_activity_after"), datetime_param(query, "last_activity_before")
    return [
        p
        for p in projects
        if (after is None or p.last_activity_at > after) and (before is None or p.last_activity_at < before)
    ]


def filter_updated(projects: list[ProjectSnapshot], query: dict[str, str], order_by: str) -> list[ProjectSnapshot]:
    """`updated_after` / `_before` (GitLab 15.10, strictly later / earlier), only when ordered by `updated_at`.

    `lib/api/projects.rb`: "updated_after and updated_before are only available when ordering by updated_at".
    """
    after, before = datetime_param(query, "updated_after"), datetime_param(query, "updated_before")
    if after is None and before is None:
        return projects
    if order_by != "updated_at":
        raise bad_request("`updated_after` and `updated_before` are only available when ordering by `updated_at`")
    return [
        p for p in projects if (after is None or p.updated_at > after) and (before is None or p.updated_at < before)
    ]


def datetime_param(query: dict[str, str], name: str) -> datetime | None:
    """Grape's DateTime coercion (`DateTime.parse`): ISO 8601, a zone-less time is UTC; else 400 invalid."""
    raw = query.get(name)
    if raw is None or raw == "":
        return None
    try:
        parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise bad_request(f"{name} is invalid") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def api_timestamp(moment: datetime) -> str:
    """A Rails time in the API: UTC with milliseconds and a `Z`."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def project_sort_key(project: ProjectSnapshot, order_by: str) -> Any:
    if order_by in {"name", "path"}:
        return project.path.lower()
    if order_by == "last_activity_at":
        return project.last_activity_at
    if order_by == "updated_at":
        return project.updated_at
    return project.id  # created_at: ids grow with creation time here


def decode_page_token(token: str) -> tuple[str, bool]:
    """Gitaly's `decodePageToken`: base64 JSON `{"file_name": path}`, else an old-style object id."""
    try:
        decoded = json.loads(base64.b64decode(token, validate=True))
    except (binascii.Error, ValueError):
        return token, False
    if isinstance(decoded, dict) and isinstance(decoded.get("file_name"), str):
        return decoded["file_name"], True
    return token, False


def match_segments(pattern: tuple[str, ...], segments: list[str]) -> dict[str, str] | None:
    # Placeholders match one segment (GitLab's NO_SLASH_URL_PART_REGEX); "%2F" inside decodes to "/".
    if len(pattern) != len(segments):
        return None
    params: dict[str, str] = {}
    for want, got in zip(pattern, segments, strict=True):
        if want.startswith(":") and got:
            params[want[1:]] = unquote(got)
        elif want != got:
            return None
    return params


def json_response(status: int, body: Any, headers: Sequence[HeaderPair] = ()) -> Response:
    data = json.dumps(body, separators=(",", ":")).encode()
    return Response(status, data, (("Content-Type", "application/json"), *_COMMON_HEADERS, *headers))


_COMMON_HEADERS: tuple[HeaderPair, ...] = (
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "SAMEORIGIN"),
    ("Cache-Control", "max-age=0, private, must-revalidate"),
)


def raw_headers(file_name: str | None) -> list[HeaderPair]:
    # `send_git_blob` + `no_cache_headers`; Workhorse streams the bytes.
    disposition = "inline"
    if file_name:
        disposition = f"inline; filename=\"{quote(file_name)}\"; filename*=UTF-8''{quote(file_name)}"
    return [
        ("Content-Type", "text/plain; charset=utf-8"),
        ("Content-Disposition", disposition),
        ("Cache-Control", "no-cache, no-store"),
        ("Pragma", "no-cache"),
        ("Expires", "Fri, 01 Jan 1990 00:00:00 GMT"),
        ("X-Content-Type-Options", "nosniff"),
    ]


def fault_response(fault: Fault) -> Response:
    extra = [("Retry-After", fault.retry_after)] if fault.retry_after is not None else []
    if fault.status != 429:
        phrase = HTTPStatus(fault.status).phrase
        return json_response(fault.status, {"message": f"{fault.status} {phrase}"}, extra)
    # Rack::Attack's throttled response: plain text plus RateLimit-* headers.
    headers = [
        ("Content-Type", "text/plain"),
        ("RateLimit-Name", "throttle_authenticated_api"),
        ("RateLimit-Limit", "7200"),
        ("RateLimit-Observed", "7201"),
        ("RateLimit-Remaining", "0"),
    ]
    if fault.retry_after is not None and fault.retry_after.isdigit():
        reset = int(datetime.now(tz=UTC).timestamp()) + int(fault.retry_after)
        headers += [("RateLimit-Reset", str(reset)), ("RateLimit-ResetTime", formatdate(reset, usegmt=True))]
    return Response(429, b"Retry later\n", (*headers, *extra))


ARCHIVE_ROUTES: dict[str, str | None] = {
    "archive": None,
    "archive.tar.gz": "tar.gz",
    "archive.tgz": "tar.gz",
    "archive.tar": "tar",
    "archive.zip": "zip",
}


ARCHIVE_RATE_LIMITED = "This archive has been requested too many times. Try again later."


def q_format(query: dict[str, str]) -> str | None:
    """The `format` parameter of the archive endpoint (tar.gz when absent); None for one git cannot write."""
    fmt = query.get("format") or "tar.gz"
    return fmt if fmt in ("tar.gz", "tgz", "tar", "zip") else None
