"""`javakb doctor` against real PostgreSQL and Redis, the fake GitLab, a fake embedding server and
embedded Qdrant: all well, then each dependency broken in turn, with the message it must give."""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from pydantic import SecretStr

from app.core.embedded import EMBEDDED_MODEL
from app.core.settings import Settings
from app.store.engines import open_store
from app.store.vectors import IndexModel
from entry import doctor
from entry.cli import main
from entry.cli_admin import run_doctor
from entry.doctor import Finding, Verdict, examine, judge_hooks, report
from testkit.fake_embedder import FakeEmbeddingServer
from testkit.fake_gitlab import FakeGitLab
from testkit.fake_gitlab_wire import system_hook_entity
from tests.conftest import REDIS, SERVER
from tests.support.tokens import admin_token, service_token

SECRET = "x7Jq2mP9vL4sR8tW1zK6"  # long, random-looking: not a placeholder
PUBLIC = "https://kb.example.com"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def gitlab(tmp_path: Path) -> Iterator[FakeGitLab]:
    with FakeGitLab(tmp_path, token="glpat-" + SECRET) as gl:
        gl.system_hooks.append(system_hook_entity(7, PUBLIC + "/hooks/gitlab"))
        yield gl


@pytest.fixture
def embedder() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(dim=64) as server:
        yield server


def settings_for(
    pg_dsn: str, gl: FakeGitLab, emb: FakeEmbeddingServer | None, qdrant: Path, **changes: Any
) -> Settings:
    values: dict[str, Any] = {
        "postgres": {"dsn": SecretStr(pg_dsn)},
        "redis": {"url": REDIS},
        "qdrant": {"path": str(qdrant)},
        "embedding": {"base_url": emb.base_url, "model": "fake-embed"} if emb else {},
        "gitlab": {"url": gl.url, "token": SecretStr(gl.token), "webhook_secret": SecretStr(SECRET)},
        "oauth": {"public_url": PUBLIC},
    }
    for key, value in changes.items():
        section, _, field = key.partition("__")
        if field:
            values[section] = {**values.get(section, {}), field: value}
        else:
            values[section] = value
    return Settings(**values)


def by_name(findings: list[Finding]) -> dict[str, list[Finding]]:
    grouped: dict[str, list[Finding]] = {}
    for f in findings:
        grouped.setdefault(f.name, []).append(f)
    return grouped


def only(findings: list[Finding], name: str) -> Finding:
    [found] = by_name(findings)[name]
    return found


async def test_everything_well_is_all_ok_and_exit_zero(
    pg_dsn: str, gitlab: FakeGitLab, embedder: FakeEmbeddingServer, tmp_path: Path
) -> None:
    findings = await examine(settings_for(pg_dsn, gitlab, embedder, tmp_path / "q"))
    assert {f.name: f.verdict for f in findings} == dict.fromkeys(
        [
            "environment",
            "secrets",
            "clients",
            "postgres",
            "redis",
            "qdrant",
            "embeddings",
            "gitlab",
            "gitlab token",
            "gitlab reach",
            "system hook",
        ],
        Verdict.OK,
    )
    text, code = report(findings)
    assert code == 0 and "0 failed, 0 warnings" in text
    assert "fake-embed: 64 dimensions" in text and "hook 7 sends pushes" in text
    assert not (tmp_path / "q").exists()  # nothing was created


async def test_postgres_down_missing_or_unmigrated(pg_dsn: str, gitlab: FakeGitLab, tmp_path: Path) -> None:
    down = settings_for(f"postgresql://root@127.0.0.1:{free_port()}/javakb", gitlab, None, tmp_path)
    found = only(await examine(down, [doctor.check_postgres]), "postgres")
    assert found.verdict is Verdict.FAIL and "cannot connect" in found.detail and "JAVAKB_POSTGRES__DSN" in found.fix

    missing = settings_for(f"{SERVER}/javakb_missing_{uuid.uuid4().hex[:8]}", gitlab, None, tmp_path)
    found = only(await examine(missing, [doctor.check_postgres]), "postgres")
    assert found.verdict is Verdict.FAIL and "does not exist" in found.detail and "javakb migrate" in found.fix
    found = only(await examine(missing, [doctor.check_local_postgres]), "postgres")  # `serve` makes it at start
    assert found.verdict is Verdict.WARN and "does not exist" in found.detail and "javakb serve" in found.fix
    assert only(await examine(down, [doctor.check_local_postgres]), "postgres").verdict is Verdict.FAIL

    name = f"javakb_empty_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(f"{SERVER}/postgres")
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        found = only(
            await examine(settings_for(f"{SERVER}/{name}", gitlab, None, tmp_path), [doctor.check_postgres]), "postgres"
        )
        assert found.verdict is Verdict.FAIL and "migrations not applied: 0001" in found.detail
        assert found.fix == "run `javakb migrate`"
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def test_redis_down(pg_dsn: str, gitlab: FakeGitLab, tmp_path: Path) -> None:
    settings = settings_for(pg_dsn, gitlab, None, tmp_path, redis={"url": f"redis://:pw@127.0.0.1:{free_port()}/3"})
    found = only(await examine(settings, [doctor.check_redis]), "redis")
    assert found.verdict is Verdict.FAIL and "JAVAKB_REDIS__URL" in found.fix
    assert "pw" not in found.detail  # the URL's password is not printed


async def test_embedding_endpoint_down_or_of_another_dimension(
    pg_dsn: str, gitlab: FakeGitLab, embedder: FakeEmbeddingServer, tmp_path: Path
) -> None:
    settings = settings_for(
        pg_dsn,
        gitlab,
        embedder,
        tmp_path / "q",
        embedding__base_url=f"http://127.0.0.1:{free_port()}/v1",
        embedding__max_retries=0,
    )
    found = only(await examine(settings, [doctor.check_embeddings]), "embeddings")
    assert found.verdict is Verdict.FAIL and "JAVAKB_EMBEDDING__BASE_URL" in found.fix

    settings = settings_for(pg_dsn, gitlab, embedder, tmp_path / "q")
    store = open_store(settings.qdrant)
    await store.ensure(IndexModel(embedding_model="fake-embed", dimension=32))
    await store.close()
    found = only(await examine(settings, [doctor.check_embeddings]), "embeddings")
    assert found.verdict is Verdict.FAIL and "answers 64 dimensions; the collection holds 32" in found.detail


async def test_an_embedding_model_the_endpoint_does_not_serve(pg_dsn: str, gitlab: FakeGitLab, tmp_path: Path) -> None:
    with FakeEmbeddingServer(dim=64, model="served-model") as served:
        settings = settings_for(pg_dsn, gitlab, served, tmp_path)
        found = only(await examine(settings, [doctor.check_embeddings]), "embeddings")
    assert found.verdict is Verdict.FAIL and "does not serve model 'fake-embed' (HTTP 404)" in found.detail
    assert "JAVAKB_EMBEDDING__MODEL" in found.fix


async def test_an_embedding_key_the_endpoint_refuses(pg_dsn: str, gitlab: FakeGitLab, tmp_path: Path) -> None:
    with FakeEmbeddingServer(dim=64, api_key="sk-the-right-key-0123456789") as guarded:
        settings = settings_for(
            pg_dsn, gitlab, guarded, tmp_path, embedding__api_key=SecretStr("sk-a-wrong-key-0123456789")
        )
        found = only(await examine(settings, [doctor.check_embeddings]), "embeddings")
    assert found.verdict is Verdict.FAIL and "refused the API key (HTTP 401)" in found.detail
    assert "JAVAKB_EMBEDDING__API_KEY" in found.fix and "sk-a-wrong-key" not in report([found])[0]


async def test_configured_dimensions_are_checked_with_a_real_request(
    pg_dsn: str, gitlab: FakeGitLab, tmp_path: Path
) -> None:
    with FakeEmbeddingServer(dim=64, honours_dimensions=False) as fixed:
        settings = settings_for(pg_dsn, gitlab, fixed, tmp_path / "q", embedding__dimensions=32)
        found = only(await examine(settings, [doctor.check_embeddings]), "embeddings")
        assert fixed.calls == 1  # asked, although the size is configured
    assert found.verdict is Verdict.FAIL and "returned a vector of 64 dimensions, expected 32" in found.detail
    assert "JAVAKB_EMBEDDING__DIMENSIONS" in found.fix

    with FakeEmbeddingServer(dim=64) as shortening:  # a model that can answer 32 floats
        settings = settings_for(pg_dsn, gitlab, shortening, tmp_path / "q", embedding__dimensions=32)
        found = only(await examine(settings, [doctor.check_embeddings]), "embeddings")
    assert found.verdict is Verdict.OK and found.detail == "fake-embed: 32 dimensions, hybrid search (endpoint)"


async def test_the_default_is_the_embedded_model_and_none_is_lexical_only(
    pg_dsn: str, gitlab: FakeGitLab, tmp_path: Path
) -> None:
    settings = settings_for(pg_dsn, gitlab, None, tmp_path / "q")  # no endpoint configured
    found = only(await examine(settings, [doctor.check_embeddings]), "embeddings")
    assert found.verdict is Verdict.OK
    assert found.detail == f"{EMBEDDED_MODEL}: 256 dimensions, hybrid search (embedded, in-process)"

    settings = settings_for(pg_dsn, gitlab, None, tmp_path / "q", embedding__provider="none")
    found = only(await examine(settings, [doctor.check_embeddings]), "embeddings")
    assert found.verdict is Verdict.OK and "lexical-only" in found.detail and "PROVIDER" in found.detail


async def test_qdrant_holding_another_model(
    pg_dsn: str, gitlab: FakeGitLab, embedder: FakeEmbeddingServer, tmp_path: Path
) -> None:
    settings = settings_for(pg_dsn, gitlab, embedder, tmp_path / "q")
    store = open_store(settings.qdrant)
    await store.ensure(IndexModel(embedding_model="other-model", dimension=64))
    await store.close()
    found = only(await examine(settings, [doctor.check_qdrant]), "qdrant")
    assert found.verdict is Verdict.FAIL and "holds other-model (64 dimensions)" in found.detail
    assert "the settings ask for fake-embed" in found.detail


async def test_qdrant_switched_to_the_next_model_by_a_rebuild_is_a_warning(
    pg_dsn: str, gitlab: FakeGitLab, embedder: FakeEmbeddingServer, tmp_path: Path
) -> None:
    settings = settings_for(pg_dsn, gitlab, embedder, tmp_path / "q")
    settings = settings.model_copy(update={"next_embedding": settings.embedding.model_copy(update={"model": "next"})})
    store = open_store(settings.qdrant)
    await store.ensure(IndexModel(embedding_model="next", dimension=64))
    await store.close()
    found = only(await examine(settings, [doctor.check_qdrant]), "qdrant")
    assert found.verdict is Verdict.WARN and "JAVAKB_NEXT_EMBEDDING" in found.fix


async def test_qdrant_server_unreachable(pg_dsn: str, gitlab: FakeGitLab, tmp_path: Path) -> None:
    settings = settings_for(pg_dsn, gitlab, None, tmp_path, qdrant__url=f"http://127.0.0.1:{free_port()}")
    found = only(await examine(settings, [doctor.check_qdrant]), "qdrant")
    assert found.verdict is Verdict.FAIL and "JAVAKB_QDRANT__URL" in found.fix


async def test_an_embedded_qdrant_that_cannot_be_opened(pg_dsn: str, gitlab: FakeGitLab, tmp_path: Path) -> None:
    (tmp_path / "not-a-folder").write_text("a file where the store's folder should be")
    settings = settings_for(pg_dsn, gitlab, None, tmp_path / "not-a-folder")
    found = only(await examine(settings, [doctor.check_qdrant]), "qdrant")
    assert found.verdict is Verdict.FAIL and found.detail.startswith(f"cannot open embedded at {tmp_path}/not-a-folder")
    assert "JAVAKB_QDRANT__PATH" in found.fix


async def test_gitlab_token_refused_or_missing(pg_dsn: str, gitlab: FakeGitLab, tmp_path: Path) -> None:
    wrong = settings_for(pg_dsn, gitlab, None, tmp_path, gitlab__token=SecretStr("glpat-wrong-token-123456"))
    found = only(await examine(wrong, [doctor.check_gitlab]), "gitlab")
    assert found.verdict is Verdict.FAIL and "refused (401)" in found.detail

    unset = settings_for(pg_dsn, gitlab, None, tmp_path, gitlab__url=None)
    assert only(await examine(unset, [doctor.check_gitlab]), "gitlab").verdict is Verdict.FAIL

    gone = settings_for(pg_dsn, gitlab, None, tmp_path, gitlab__url=f"http://127.0.0.1:{free_port()}")
    found = only(await examine(gone, [doctor.check_gitlab]), "gitlab")
    assert found.verdict is Verdict.FAIL and "cannot reach" in found.detail


async def test_gitlab_scopes_reach_and_hook(pg_dsn: str, gitlab: FakeGitLab, tmp_path: Path) -> None:
    settings = settings_for(pg_dsn, gitlab, None, tmp_path)
    gitlab.token_scopes = ["read_repository"]
    found = only(await examine(settings, [doctor.check_gitlab]), "gitlab token")
    assert found.verdict is Verdict.FAIL and "read_api" in found.fix

    gitlab.token_scopes = ["api"]
    gitlab.system_hooks[0]["push_events"] = False  # repository update events alone are enough
    assert only(await examine(settings, [doctor.check_gitlab]), "system hook").verdict is Verdict.OK
    gitlab.system_hooks[0]["repository_update_events"] = False
    found = only(await examine(settings, [doctor.check_gitlab]), "system hook")
    assert found.verdict is Verdict.FAIL and "neither push nor repository update" in found.detail

    gitlab.system_hooks.clear()
    found = only(await examine(settings, [doctor.check_gitlab]), "system hook")
    assert found.verdict is Verdict.FAIL and f"{PUBLIC}/hooks/gitlab" in found.detail
    assert "javakb admin install-hook" in found.fix


async def test_a_members_token_warns_that_it_cannot_see_everything(
    pg_dsn: str, gitlab: FakeGitLab, tmp_path: Path
) -> None:
    user = gitlab.directory.add_user("dev")
    findings = await examine(
        settings_for(pg_dsn, gitlab, None, tmp_path, gitlab__token=SecretStr(user.token)), [doctor.check_gitlab]
    )
    assert only(findings, "gitlab reach").verdict is Verdict.WARN
    assert only(findings, "system hook").verdict is Verdict.WARN
    assert report(findings)[1] == 0  # warnings alone do not fail


async def test_weak_or_missing_secrets(pg_dsn: str, gitlab: FakeGitLab, tmp_path: Path) -> None:
    weak = settings_for(pg_dsn, gitlab, None, tmp_path, gitlab__webhook_secret=SecretStr("changeme"))
    found = only(await examine(weak, [doctor.check_secrets]), "secrets")
    assert found.verdict is Verdict.FAIL and found.detail == "JAVAKB_GITLAB__WEBHOOK_SECRET is a placeholder"
    assert "changeme" not in report([found])[0]

    dev = settings_for(pg_dsn, gitlab, None, tmp_path, gitlab__webhook_secret=SecretStr("changeme"), dev_mode=True)
    assert only(await examine(dev, [doctor.check_secrets]), "secrets").verdict is Verdict.WARN

    none = settings_for(pg_dsn, gitlab, None, tmp_path, gitlab__webhook_secret=None)
    found = only(await examine(none, [doctor.check_secrets]), "secrets")
    assert found.verdict is Verdict.FAIL and "every GitLab delivery is refused" in found.detail


async def test_guessable_or_shared_token_digests_warn(pg_dsn: str, gitlab: FakeGitLab, tmp_path: Path) -> None:
    base = settings_for(pg_dsn, gitlab, None, tmp_path)
    guessable = base.model_copy(update={"metrics_tokens": [admin_token("changeme", "prometheus")]})
    (found,) = [f for f in await examine(guessable, [doctor.check_secrets]) if f.name == "token digests"]
    assert found.verdict is Verdict.WARN
    assert found.detail == (
        "JAVAKB_METRICS_TOKENS entry 'prometheus' is the sha256 of a placeholder or a short string: anyone can guess it"
    )
    shared = base.model_copy(
        update={"admin_tokens": [admin_token("x" * 32, "ops")], "service_tokens": [service_token("x" * 32, name="ci")]}
    )
    (found,) = [f for f in await examine(shared, [doctor.check_secrets]) if f.name == "token digests"]
    assert "'ops' and JAVAKB_SERVICE_TOKENS entry 'ci' have the same digest" in found.detail
    assert "x" * 32 not in report([found])[0] and "changeme" not in report([found])[0]


async def test_a_hanging_dependency_fails_by_its_timeout(pg_dsn: str, gitlab: FakeGitLab, tmp_path: Path) -> None:
    async def hangs(settings: Settings, client: object) -> list[Finding]:
        await asyncio.sleep(30)
        return []

    hangs.__name__ = "check_slow"
    [found] = await examine(settings_for(pg_dsn, gitlab, None, tmp_path), [hangs], timeout_s=0.2)
    assert found.name == "slow" and found.verdict is Verdict.FAIL and "within 0.2 s" in found.detail


def test_the_hook_rule() -> None:
    hooks = [system_hook_entity(1, "https://other.example.com/hooks/gitlab"), system_hook_entity(2, PUBLIC + "/x")]
    assert judge_hooks(hooks, PUBLIC).verdict is Verdict.FAIL
    assert judge_hooks(hooks, None).verdict is Verdict.OK  # without a public URL any receiver path counts
    assert judge_hooks([system_hook_entity(3, PUBLIC + "/hooks/gitlab/")], PUBLIC).verdict is Verdict.OK


def test_the_cli_prints_the_report_and_fails(pg_dsn: str, gitlab: FakeGitLab, tmp_path: Path) -> None:
    settings = settings_for(pg_dsn, gitlab, None, tmp_path, redis={"url": f"redis://127.0.0.1:{free_port()}/0"})
    out = io.StringIO()
    assert run_doctor(argparse.Namespace(local=None), settings, out) == 1
    text = out.getvalue()
    assert "FAIL  redis:" in text and "ok    postgres:" in text and text.rstrip().endswith("1 failed, 0 warnings")


def local_env(monkeypatch: pytest.MonkeyPatch, pg_dsn: str, qdrant: Path, tokens: str) -> None:
    """The README's local set-up: PostgreSQL, Redis, embedded Qdrant and model, a service token, no GitLab."""
    for name in [n for n in os.environ if n.startswith("JAVAKB_") and n != "JAVAKB_TEST_REDIS"]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("JAVAKB_POSTGRES__DSN", pg_dsn)
    monkeypatch.setenv("JAVAKB_REDIS__URL", REDIS)
    monkeypatch.setenv("JAVAKB_QDRANT__PATH", str(qdrant))
    monkeypatch.setenv("JAVAKB_SERVICE_TOKENS", tokens)


def test_the_readme_s_local_set_up_passes_doctor_in_its_local_profile(
    pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = service_token("a-local-token-" + SECRET).model_dump_json()
    local_env(monkeypatch, pg_dsn, tmp_path / "q", f"[{entry}]")

    code = main(["doctor"])  # no GitLab URL: the local profile, chosen by itself

    out = capsys.readouterr().out
    assert code == 0, out
    assert out.startswith("profile: local")
    assert "gitlab" not in out.split("\n", 1)[1].lower()  # neither GitLab nor its webhook secret is asked for
    assert "ok    clients: 1 service token(s)" in out
    assert main(["doctor", "--service"]) == 1  # the service profile still wants GitLab and the hook's secret
    assert "FAIL  gitlab" in capsys.readouterr().out


def test_without_any_client_credential_doctor_fails_and_says_how_to_make_one(
    pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    local_env(monkeypatch, pg_dsn, tmp_path / "q", "[]")

    assert main(["doctor", "--local"]) == 1

    out = capsys.readouterr().out
    assert "FAIL  clients: JAVAKB_SERVICE_TOKENS is empty and no GitLab is set" in out
    assert "javakb token --name dev --repos '*'" in out


async def test_with_a_gitlab_its_tokens_are_client_credentials_and_the_service_profile_is_chosen(
    pg_dsn: str, gitlab: FakeGitLab, tmp_path: Path
) -> None:
    settings = settings_for(pg_dsn, gitlab, None, tmp_path)
    assert doctor.profile(settings, None)[1] == doctor.CHECKS
    assert doctor.profile(settings, True)[1] == doctor.LOCAL_CHECKS
    found = only(await examine(settings, [doctor.check_clients]), "clients")
    assert found.verdict is Verdict.OK and "GitLab tokens" in found.detail
