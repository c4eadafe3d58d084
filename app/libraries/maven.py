"""Sources jars from Maven repositories (Maven Central's layout): the one module that downloads them.

`<base>/<group as a path>/<artifact>/<version>/<artifact>-<version>-sources.jar`, tried in the
configured order. A 404 (or 410) from every repository is `Missing`; a refusal (401/403), a jar over
the size limit or a failing repository is `Failed`, with the repository's URL (never its
credentials) in the detail. Credentials are `SecretStr`s: sent as headers, never logged.

Coordinates are untrusted (anyone who can push writes them, issue 24): one that is not a Maven
coordinate (`pipeline.buildfiles.coordinate_problem`) is refused, and so is a URL that, normalised
and decoded, leaves the repository's base path or carries a query or a fragment: `Failed`, no request.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote

import httpx

from app.core.settings import MavenRepository
from pipeline.buildfiles import coordinate_problem

logger = logging.getLogger(__name__)
MISSING = frozenset({404, 410})


@dataclass(frozen=True, slots=True, kw_only=True)
class Fetched:
    """A sources jar's bytes and where they came from."""

    data: bytes
    url: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Missing:
    """No configured repository has the sources jar."""

    detail: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Failed:
    """A repository refused or failed: worth another try later."""

    detail: str


Outcome = Fetched | Missing | Failed


def sources_path(group: str, artifact: str, version: str) -> str:
    """The sources jar's path under a repository's base URL."""
    return f"{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}-sources.jar"


def _auth(repository: MavenRepository) -> tuple[dict[str, str], httpx.BasicAuth | None]:
    headers = {repository.token_header: repository.token.get_secret_value()} if repository.token else {}
    password = repository.password.get_secret_value() if repository.password else ""
    basic = httpx.BasicAuth(repository.username, password) if repository.username else None
    return headers, basic


async def fetch_sources(
    http: httpx.AsyncClient,
    repositories: Sequence[MavenRepository],
    coordinates: tuple[str, str, str],
    *,
    max_bytes: int,
    timeout_s: float,
) -> Outcome:
    """The sources jar of one library version from the first repository that has it."""
    refused = coordinate_problem(*coordinates)
    if refused is not None:
        return Failed(detail=f"refused, no request sent: {refused}")
    path = sources_path(*coordinates)
    failures: list[str] = []
    for repository in repositories:
        url = repository.url.rstrip("/") + "/" + path
        if not under_base(repository.url, url):
            failures.append(f"refused, no request sent: {url} leaves {repository.url}")
            continue
        outcome = await _one(http, repository, url, max_bytes, timeout_s)
        if isinstance(outcome, Fetched):
            return outcome
        if isinstance(outcome, Failed):
            failures.append(outcome.detail)
    if failures:
        return Failed(detail="; ".join(failures))
    tried = ", ".join(r.url for r in repositories)
    return Missing(detail=f"no {path.rsplit('/', 1)[-1]} in {tried}")


def under_base(base: str, url: str) -> bool:
    """Whether `url` is on `base`'s origin, under its path once normalised and decoded, with no query or fragment.

    httpx removes dot segments when it parses a URL and a server may decode `%2F` or `%2E` before
    resolving the path: both readings must stay under the base path.
    """
    root, target = httpx.URL(base), httpx.URL(url)
    if (target.scheme, target.host, target.port) != (root.scheme, root.host, root.port):
        return False
    if target.query or target.fragment or "?" in url or "#" in url:
        return False
    if any(segment in (".", "..") for segment in unquote(url).split("/")):
        return False  # httpx would resolve them before sending: the path asked for is not the path built
    prefix = root.path.rstrip("/") + "/"
    decoded = unquote(target.raw_path.decode("ascii"))
    return all(
        posixpath.normpath(path) == path.rstrip("/") and path.startswith(prefix) and "\\" not in path
        for path in (target.path, decoded)
    )


async def _one(
    http: httpx.AsyncClient, repository: MavenRepository, url: str, max_bytes: int, timeout_s: float
) -> Outcome:
    headers, basic = _auth(repository)
    try:
        async with http.stream("GET", url, headers=headers, auth=basic, timeout=timeout_s) as response:
            if response.status_code in MISSING:
                return Missing(detail=f"{response.status_code} from {url}")
            if response.status_code != 200:
                return Failed(detail=f"{response.status_code} from {url}")
            declared = int(response.headers.get("Content-Length") or 0)
            if declared > max_bytes:
                return Failed(detail=f"{url} is {declared} bytes, over the limit of {max_bytes} bytes")
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    return Failed(detail=f"{url} is over the limit of {max_bytes} bytes")
                chunks.append(chunk)
            return Fetched(data=b"".join(chunks), url=url)
    except httpx.HTTPError as exc:
        logger.info("sources jar %s: %s", url, type(exc).__name__)
        return Failed(detail=f"{url}: {type(exc).__name__}")
