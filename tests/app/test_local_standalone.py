"""A standalone `javakb index` (no serve running) is recorded as a local project by the next `javakb serve`.

Over the real stack: `javakb index` runs in this process with a PostgreSQL DSN nobody answers (it must not
need one) and notes what it indexed beside the store; the serve's start (`record_indexed_here`, what
`entry.cli_services.serve` runs first) records it, so `index_status`, `find_library_usages`,
`GET /admin/projects` and `javakb admin status` answer for it; a working tree that vanished shows `failed`.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import secrets
import shutil
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from app.auth.access import everything
from app.core.access_settings import token_digest
from app.core.settings import Settings
from app.sync.indexed_here import FILE_NAME, record_indexed_here
from entry.cli import main
from entry.cli_admin import run_admin_status
from entry.deps import open_service
from entry.web import create_app
from testkit.git_repo import GitRepo
from tests.app.test_admin_lists import _unclosed
from tests.app.test_local_projects import ADMIN, call, checkout, local_settings, status
from tests.app.test_serve_socket import cli, environment
from tests.conftest import truncate
from tests.mcp_server.test_tools import data, text
from tests.support.processes import ServeProcess, _wait

UNANSWERED_DSN = "postgresql://nobody@127.0.0.1:1/nothing"  # the standalone index must not open PostgreSQL


def standalone_index(monkeypatch: pytest.MonkeyPatch, store: Path, root: Path, repo: str) -> None:
    for name in list(os.environ):
        if name.upper().startswith("JAVAKB_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("JAVAKB_QDRANT__PATH", str(store))
    monkeypatch.setenv("JAVAKB_EMBEDDING__PROVIDER", "none")
    monkeypatch.setenv("JAVAKB_POSTGRES__DSN", UNANSWERED_DSN)
    assert main(["index", str(root), "--repo", repo]) == 0


async def serve_start(settings: Settings) -> None:
    me = everything("local")
    async with open_service(settings) as deps:
        await deps.store.ensure(await deps.index_model())
        assert await record_indexed_here(deps) == ["gone", "shop"]
        item = await status(deps, me)
        assert (item["source"], item["state"], item["behind"], item["files"]) == ("local", "ok", False, 1)
        assert item["last_run"] == "DONE" and item["last_run_trigger"] == "local" and item["last_error"] is None
        used = await call(deps, me, "find_library_usages", library="org.example:widgets")
        assert "shop" in text(used) and "1.2.3" in text(used) and "pom.xml" in text(used)
        [gone] = data(await call(deps, me, "index_status", repo="gone"))["results"]
        assert gone["state"] == "failed" and "is not on this machine" in gone["last_error"]
        assert await record_indexed_here(deps) == []  # recorded once: a restart does not run them again


def test_serve_records_what_a_standalone_index_wrote(
    tmp_path: Path, clean_db: str, clean_redis: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = checkout(tmp_path)
    moved = GitRepo.init(tmp_path / "moved", "main")
    shutil.copytree(repo.path / "src", moved.path / "src")
    settings = local_settings(tmp_path, clean_db, clean_redis)
    store = Path(settings.qdrant.path)
    standalone_index(monkeypatch, store, repo.path, "shop")
    standalone_index(monkeypatch, store, moved.path, "gone")
    notes = json.loads((store / FILE_NAME).read_text())
    assert notes["shop"]["root"] == str(repo.path.resolve()) and notes["shop"]["recorded"] is False
    assert notes["shop"]["files"] == 1
    shutil.rmtree(moved.path)  # the working tree vanished before serve started

    asyncio.run(asyncio.wait_for(serve_start(settings), timeout=45))
    assert json.loads((store / FILE_NAME).read_text())["shop"]["recorded"] is True
    with TestClient(create_app(settings)) as client:
        client.headers.update({"Authorization": f"Bearer {ADMIN}"})
        projects = client.get("/admin/projects").json()
        assert [(p["repo_path"], p["source"], p["status"]) for p in projects] == [
            ("gone", "local", "failed"),
            ("shop", "local", "ok"),
        ]
        out = io.StringIO()
        assert run_admin_status(argparse.Namespace(backfill=None, watch=False), settings, out, _unclosed(client)) == 0
        assert out.getvalue().splitlines()[0] == "projects: 1 failed, 1 ok; 0 syncs running"


async def forgotten(settings: Settings, dsn: str) -> None:
    async with open_service(settings) as deps:
        await deps.store.ensure(await deps.index_model())
        assert await record_indexed_here(deps) == ["shop"]
        await truncate(dsn)  # a new database: the store still holds the repository, so it is recorded again
        assert await record_indexed_here(deps) == ["shop"]
        assert (await status(deps, everything("local")))["files"] == 1


def test_a_new_database_records_the_noted_repositories_again(
    tmp_path: Path, clean_db: str, clean_redis: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = checkout(tmp_path)
    settings = local_settings(tmp_path, clean_db, clean_redis)
    standalone_index(monkeypatch, Path(settings.qdrant.path), repo.path, "shop")
    asyncio.run(asyncio.wait_for(forgotten(settings, clean_db), timeout=45))


@pytest.mark.integration
def test_a_serve_process_records_a_standalone_index_at_start(tmp_path: Path, clean_db: str) -> None:
    """The whole path with real processes: `javakb index` in a fresh interpreter, then `javakb serve`."""
    repo = checkout(tmp_path)
    token = secrets.token_urlsafe(32)
    env = {
        **environment(tmp_path / "kb", clean_db),
        "JAVAKB_ADMIN_TOKENS": json.dumps([{"name": "admin", "sha256": token_digest(token)}]),
    }
    indexed, _ = cli({**env, "JAVAKB_POSTGRES__DSN": UNANSWERED_DSN}, "index", str(repo.path), "--repo", "shop")
    assert indexed.returncode == 0, indexed.stderr
    serve = ServeProcess(env, tmp_path / "serve.log")
    try:
        serve.start()

        def listed() -> list[tuple[str, str, str]]:
            answer = httpx.get(serve.url + "/admin/projects", headers={"Authorization": f"Bearer {token}"}, timeout=30)
            assert answer.status_code == 200, answer.text
            return [(p["repo_path"], p["source"], p["status"]) for p in answer.json()]

        _wait(lambda: listed() == [("shop", "local", "ok")], "serve did not record the standalone index", 60.0)
    finally:
        serve.kill()
    assert json.loads((tmp_path / "kb" / FILE_NAME).read_text())["shop"]["recorded"] is True
