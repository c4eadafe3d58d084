"""Access values, their Qdrant condition, GitLab identity resolution and the repositories cache."""

from __future__ import annotations

import ast
import asyncio
import io
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
import pytest_asyncio
from pydantic import SecretStr, TypeAdapter
from qdrant_client import models as qm

from app.auth.access import LOCAL, Access, complement_condition, token_digest
from app.auth.identity import Credentials, GitLabIdentities, OpenSet, bearer_token
from app.core.access_settings import IndexJobToken, OAuthSettings, ServiceToken
from app.core.errors import ConfigError, GitLabUnavailableError
from app.core.settings import QdrantSettings, Settings
from app.runtime import Deps
from app.sync.local_index import index_directory
from entry.cli_admin import run_token
from entry.deps import open_deps
from entry.web import create_app
from testkit.fake_gitlab import FakeGitLab
from testkit.fake_gitlab_users import REPORTER
from tests.support.tenants import ManualClock
from tests.support.tokens import service_token

JAVA = "package a;\n\n/** A. */\npublic class A {\n    public void run() {\n    }\n}\n"


def test_the_bearer_scheme_is_case_insensitive_and_the_token_required() -> None:
    assert bearer_token("Bearer abc") == bearer_token("bearer abc") == bearer_token("BEARER  abc ") == "abc"
    assert bearer_token("Bearer") is bearer_token("Basic abc") is bearer_token(None) is bearer_token("abc") is None


def test_may_read_follows_the_same_rule_as_the_condition() -> None:
    by_ids = Access(subject="u", project_ids=frozenset({1, 2}))
    by_prefix = Access(subject="s", repo_prefixes=("eng/", "oss/lib"))

    assert by_ids.may_read("x/y", 1) and not by_ids.may_read("x/y", 3) and not by_ids.may_read("x/y", None)
    assert by_prefix.may_read("eng/a/b", None) and by_prefix.may_read("oss/lib", 9)
    assert not by_prefix.may_read("oss/library", None) and not by_prefix.may_read("engine/x", None)
    assert LOCAL.may_read("anything", None) and LOCAL.condition() is None


def test_an_access_limits_by_ids_or_by_prefixes_never_both() -> None:
    with pytest.raises(ValueError, match="not both"):
        Access(subject="x", project_ids=frozenset(), repo_prefixes=())


@pytest_asyncio.fixture
async def store(tmp_path: Path) -> AsyncIterator[Deps]:
    (tmp_path / "src/main/java/a").mkdir(parents=True)
    (tmp_path / "src/main/java/a/A.java").write_text(JAVA)
    async with open_deps(Settings(qdrant=QdrantSettings(path=":memory:"))) as deps:
        await deps.store.ensure(await deps.index_model())
        yield deps


async def _write_project(deps: Deps, tmp_path: Path, repo: str, project_id: int | None) -> None:
    await index_directory(deps, tmp_path, repo)
    if project_id is not None:  # tag the local index as a GitLab project, as the sync writes it
        condition = qm.FieldCondition(key="repo_path", match=qm.MatchValue(value=repo))
        await deps.store.set_payload_where(qm.Filter(must=[condition]), {"gitlab_project_id": project_id})


async def test_the_complement_selects_the_same_points_as_the_allowed_set(store: Deps, tmp_path: Path) -> None:
    for i in range(1, 7):
        await _write_project(store, tmp_path, f"g/p{i}", i)
    await _write_project(store, tmp_path, "local/checkout", None)  # no project id: never a GitLab reader's
    access = Access(subject="u", project_ids=frozenset({1, 2, 4, 5}))

    complement = access.condition()  # one gap (3) below the highest id (5) is fewer than 4 ids
    allowed = qm.FieldCondition(key="gitlab_project_id", match=qm.MatchAny(any=[1, 2, 4, 5]))

    assert complement == complement_condition(5, [3])
    for condition in (allowed, complement):
        found = await store.store.counts_by("repo_path", where=qm.Filter(must=[condition]))
        assert set(found) == {"g/p1", "g/p2", "g/p4", "g/p5"}
    sparse = Access(subject="u", project_ids=frozenset({1, 50}))
    assert sparse.condition() == allowed.model_copy(update={"match": qm.MatchAny(any=[1, 50])})


async def test_an_empty_readable_set_reads_nothing(store: Deps, tmp_path: Path) -> None:
    await _write_project(store, tmp_path, "g/p1", 1)

    for nobody in (Access(subject="u", project_ids=frozenset()), Access(subject="s", repo_prefixes=())):
        assert await store.search.repositories(nobody) == {}
        assert await store.search.symbol(nobody, "A") == []


async def test_a_repository_synced_after_the_cached_list_is_found_at_once(store: Deps, tmp_path: Path) -> None:
    await _write_project(store, tmp_path, "g/first", 1)
    assert set(await store.search.repositories(LOCAL)) == {"g/first"}  # cached for a few seconds now
    await _write_project(store, tmp_path, "g/second", 2)

    assert await store.search.knows_repository(LOCAL, "g/second")
    assert not await store.search.knows_repository(Access(subject="u", project_ids=frozenset({1})), "g/second")


@pytest.fixture
def gitlab(tmp_path: Path) -> Iterator[FakeGitLab]:
    with FakeGitLab(tmp_path) as gl:
        yield gl


async def test_memberships_are_read_across_every_page(gitlab: FakeGitLab) -> None:
    user = gitlab.directory.add_user("pat")
    projects = [gitlab.create_project(f"g/p{i}") for i in range(5)]
    for p in projects[:4]:
        gitlab.directory.add_project_member(p.id, user, REPORTER)
    async with httpx.AsyncClient() as http:
        identities = GitLabIdentities(gitlab.url, lambda: http, _no_open, ttl_s=60, page_size=2)
        access = await identities.resolve(user.token)

    assert access is not None and access.project_ids == frozenset(p.id for p in projects[:4])
    # Two full pages, then the empty one GitLab's keyset pager links to after a full page (`keyset/pager.rb`).
    assert gitlab.call_count("/api/v4/projects") == 3


async def test_gitlab_down_is_an_error_and_an_unknown_token_is_none(gitlab: FakeGitLab) -> None:
    user = gitlab.directory.add_user("pat")
    clock = ManualClock()
    async with httpx.AsyncClient() as http:
        identities = GitLabIdentities(gitlab.url, lambda: http, _no_open, ttl_s=60, clock=clock)
        assert await identities.resolve("glpat-unknown") is None
        refused_calls = gitlab.call_count("/api/v4/user")
        assert await identities.resolve("glpat-unknown") is None
        assert gitlab.call_count("/api/v4/user") == refused_calls  # a refused token is remembered too
        gitlab.fail_next(1, 503, path_contains="/user")
        with pytest.raises(GitLabUnavailableError):
            await identities.resolve(user.token)
        assert await identities.resolve(user.token) is not None
        calls = gitlab.call_count("/api/v4/user")
        assert await identities.resolve(user.token) is not None  # cached: GitLab is not asked again
        assert gitlab.call_count("/api/v4/user") == calls


async def test_service_tokens_are_matched_by_digest_before_gitlab_is_asked() -> None:
    settings = Settings(service_tokens=[service_token("svc", ["eng/"], "ci")])
    credentials = Credentials(settings, identities=None)

    assert await credentials.access("svc") == Access(subject="service:ci", repo_prefixes=("eng/",))
    assert await credentials.access("svc2") is None


def test_the_token_command_prints_a_settings_entry_for_the_token_it_prints_once() -> None:
    out, err = io.StringIO(), io.StringIO()
    args = SimpleNamespace(name="ci", repos=["eng/", "oss/lib"], admin=False, project=None)

    assert run_token(args, Settings(), out, err) == 0  # type: ignore[arg-type]
    [entry] = TypeAdapter(list[ServiceToken]).validate_json(out.getvalue())
    token = err.getvalue().strip().splitlines()[-1]
    assert entry == ServiceToken(name="ci", sha256=token_digest(token), repos=["eng/", "oss/lib"])
    assert token not in out.getvalue() and len(token) > 40
    assert json.loads(out.getvalue())[0]["sha256"] == token_digest(token)


def test_the_token_command_prints_an_index_job_token_of_one_project() -> None:
    out, err = io.StringIO(), io.StringIO()
    args = SimpleNamespace(name="shop-ci", repos=None, admin=False, project=42)

    assert run_token(args, Settings(), out, err) == 0  # type: ignore[arg-type]
    [entry] = TypeAdapter(list[IndexJobToken]).validate_json(out.getvalue())
    token = err.getvalue().strip().splitlines()[-1]
    assert entry == IndexJobToken(name="shop-ci", sha256=token_digest(token), project_id=42)
    assert "JAVAKB_INDEX_JOB_TOKENS" in err.getvalue()
    both = SimpleNamespace(name="x", repos=["eng/"], admin=False, project=42)
    assert run_token(both, Settings(), io.StringIO(), io.StringIO()) == 2  # type: ignore[arg-type]


async def _no_open() -> OpenSet:
    return OpenSet({})


def test_only_the_composition_root_imports_the_mcp_package() -> None:
    """`app/` holds credentials and rendering of its own; only `entry/web.py` (it mounts MCP) imports `mcp_server`."""
    offenders = []
    for module in sorted([*Path("app").glob("**/*.py"), *Path("entry").glob("*.py")]):
        tree = ast.parse(module.read_text())
        names = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        if module.as_posix() != "entry/web.py" and any(n.split(".")[0] == "mcp_server" for n in names):
            offenders.append(module.as_posix())
    assert offenders == []


def test_oauth_without_a_gitlab_url_refuses_to_start() -> None:
    oauth = OAuthSettings(client_id="id", client_secret=SecretStr("s"), public_url="https://kb.example.com")
    with pytest.raises(ConfigError, match="JAVAKB_GITLAB__URL"):
        create_app(Settings(oauth=oauth))


async def test_concurrent_first_requests_with_one_token_ask_gitlab_once(gitlab: FakeGitLab) -> None:
    user = gitlab.directory.add_user("pat")
    async with httpx.AsyncClient() as http:
        identities = GitLabIdentities(gitlab.url, lambda: http, _no_open, ttl_s=60)
        answers = await asyncio.gather(*(identities.resolve(user.token) for _ in range(5)))

    assert len({a.subject for a in answers if a is not None}) == 1 and None not in answers
    assert gitlab.call_count("/api/v4/user") == 1
