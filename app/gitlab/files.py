"""One file's bytes at a commit, read from GitLab's REST API with a given token (issue 28, `read_code`).

`file_at` asks `GET /api/v4/projects/:id/repository/files/:path/raw?ref=<sha>` (gitlabhq
`lib/api/files.rb`) with the token it is given: the caller's own GitLab token when the caller holds
one (GitLab then checks the caller's own permissions), else the service's. A file GitLab does not
show that token (401, 403, 404) is None, the same answer either way; a file over `max_bytes` is
None too (never read whole). GitLab down or answering otherwise is `GitLabUnavailableError`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import quote

import httpx

from app.core.errors import GitLabUnavailableError
from app.core.settings import GitLabSettings

HIDDEN = frozenset({401, 403, 404})
"""Statuses that mean the token may not see the file (or it is not there): one answer for all."""


async def file_at(
    http: httpx.AsyncClient,
    base_url: str,
    token: str,
    project_id: int,
    path: str,
    sha: str,
    *,
    max_bytes: int,
    timeout_s: float,
) -> bytes | None:
    """The file's bytes at `sha`, None when the token may not read it, it does not exist or is over `max_bytes`.

    Raises:
        GitLabUnavailableError: GitLab did not answer, or answered an error that is not about this file.
    """
    url = f"{base_url.rstrip('/')}/api/v4/projects/{project_id}/repository/files/{quote(path, safe='')}/raw"
    headers = {"Authorization": f"Bearer {token}"}
    try:
        async with http.stream("GET", url, params={"ref": sha}, headers=headers, timeout=timeout_s) as response:
            if response.status_code in HIDDEN:
                return None
            if response.status_code != 200:
                raise GitLabUnavailableError(f"GitLab answered {response.status_code}")
            data = bytearray()
            async for piece in response.aiter_bytes():
                data += piece
                if len(data) > max_bytes:
                    return None
            return bytes(data)
    except httpx.HTTPError as exc:
        raise GitLabUnavailableError(f"GitLab did not answer: {type(exc).__name__}") from exc


GITLAB_USER = "user:"
"""How an `Access.subject` of a GitLab identity begins (`app.auth.identity.project_set`)."""


def file_reader(
    http: httpx.AsyncClient, settings: GitLabSettings, subject: str, caller_token: str | None, *, max_bytes: int
) -> Callable[[int, str, str], Awaitable[bytes | None]] | None:
    """`file_at` bound to the token a caller's read goes with; None without a GitLab URL or a token to use.

    A GitLab identity (`user:<id>`) reads with its own token, so GitLab checks its own permissions again;
    a service token or the local CLI, which hold no GitLab token, read with the service's once the index
    showed the caller may read the file (`app.search.code`).
    """
    token = caller_token if subject.startswith(GITLAB_USER) else None
    if token is None and settings.token is not None:
        token = settings.token.get_secret_value()
    base = settings.url
    if base is None or token is None:
        return None
    bound_base, bound_token = base, token

    async def read(project_id: int, path: str, sha: str) -> bytes | None:
        return await file_at(
            http, bound_base, bound_token, project_id, path, sha, max_bytes=max_bytes, timeout_s=settings.timeout_s
        )

    return read
