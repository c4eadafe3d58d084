"""Local checkouts are projects like any other (issue 27), over the real stack (PostgreSQL, Redis, the store):
a git checkout indexed locally answers `index_status`, `refresh_repo` and `find_library_usages` over MCP,
`GET /api/v1/index-status`, `GET /admin/projects` and `javakb admin status`; its lag is the working tree's.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import time
from pathlib import Path
from typing import Any

from fastmcp import Client
from pydantic import SecretStr
from starlette.testclient import TestClient

from app.auth.access import Access, everything
from app.core.settings import EmbeddingSettings, PostgresSettings, QdrantSettings, QueueSettings, Settings
from app.runtime import ServiceDeps
from app.sync.local_project import index_local
from app.sync.watch import watch
from entry.cli_admin import run_admin_status
from entry.deps import open_service
from entry.web import create_app
from entry.worker import build_worker
from mcp_server.server import create_server
from testkit.git_repo import GitRepo
from tests.app.test_admin_lists import _unclosed
from tests.app.test_local_api import until
from tests.mcp_server.test_tools import assert_tool_error, data, text
from tests.support.sources import service_java as service
from tests.support.tokens import admin_token, service_token

SRC = "src/main/java/com/acme/"
ADMIN, READER = "admin-token-for-local-0123456", "reader-token-for-local-0123456"
POM = """<project><modelVersion>4.0.0</modelVersion><groupId>com.acme</groupId><artifactId>shop</artifactId>
<version>1.0</version><dependencies><dependency><groupId>org.example</groupId><artifactId>widgets</artifactId>
<version>1.2.3</version></dependency></dependencies></project>"""


def checkout(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "shop", "main")
    for rel, content in {"pom.xml": POM, SRC + "A.java": service("A")}.items():
        (repo.path / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo.path / rel).write_text(content)
    repo.run("add", "-A")
    repo.run("commit", "-q", "-m", "first")
    return repo


def local_settings(tmp_path: Path, dsn: str, redis_url: str) -> Settings:
    """`javakb serve` on local defaults (no GitLab), lexical-only, its store on disk."""
    return Settings(
        postgres=PostgresSettings(dsn=SecretStr(dsn)),
        redis=QueueSettings(url=redis_url, queue="javakb:test:local"),
        qdrant=QdrantSettings(path=str(tmp_path / "store")),
        embedding=EmbeddingSettings(provider="none"),
        admin_tokens=[admin_token(ADMIN)],
        service_tokens=[service_token(READER, ["shop"], name="reader")],
    )


async def call(deps: ServiceDeps, access: Access, tool: str, **arguments: Any) -> Any:
    async with Client(create_server(lambda: deps, unauthenticated=access)) as client:
        return await client.call_tool(tool, arguments, raise_on_error=False)


async def status(deps: ServiceDeps, access: Access) -> dict[str, Any]:
    items: list[dict[str, Any]] = data(await call(deps, access, "index_status", repo="shop"))["results"]
    assert len(items) == 1
    return items[0]


async def through_mcp(settings: Settings, repo: GitRepo) -> None:
    me, other = everything("local"), Access(subject="service:other", repo_prefixes=("acme/",))
    async with open_service(settings) as deps:
        await deps.store.ensure(await deps.index_model())
        await index_local(deps, repo.path, "shop")
        item = await status(deps, me)
        assert (item["source"], item["state"], item["behind"], item["files"]) == ("local", "ok", False, 1)
        assert item["chunks"] >= 2 and item["indexed_sha"] == item["gitlab_head"] and item["last_run"] == "DONE"
        assert item["lag_seconds"] == 0.0 and item["last_error"] is None and item["last_run_trigger"] == "local"
        used = await call(deps, me, "find_library_usages", library="org.example:widgets")
        assert "shop" in text(used) and "1.2.3" in text(used) and "pom.xml" in text(used)
        hidden = await call(deps, other, "find_library_usages", library="org.example:widgets")
        assert "shop" not in text(hidden)
        assert_tool_error(await call(deps, other, "index_status", repo="shop"), "No index status")

        (repo.path / SRC / "B.java").write_text(service("B"))  # the working tree moves on after indexing
        behind = await status(deps, me)
        assert (behind["behind"], behind["state"], behind["files"]) == (True, "pending", 1)
        assert behind["gitlab_head"] != behind["indexed_sha"] and behind["lag_seconds"] is not None
        line = text(await call(deps, me, "index_status", repo="shop"))
        assert "shop  state=pending" in line and "worktree=" in line

        [asked] = data(await call(deps, me, "refresh_repo", repo="shop"))["results"]
        assert (asked["repo"], asked["state"]) == ("shop", "queued")
        await build_worker(settings, deps, burst=True, handle_signals=False).main()
        fresh = await status(deps, me)
        assert (fresh["behind"], fresh["state"], fresh["files"]) == (False, "ok", 2)
        # the refresh's job, or the reconcile sweep's that the burst worker ran first for the same generation
        assert fresh["last_run_trigger"] in ("refresh", "reconcile")
        assert_tool_error(await call(deps, other, "refresh_repo", repo="shop"), "Unknown repository")


def test_a_local_checkout_answers_every_status_tool_like_a_gitlab_project(
    tmp_path: Path, clean_db: str, clean_redis: str
) -> None:
    repo = checkout(tmp_path)
    settings = local_settings(tmp_path, clean_db, clean_redis)
    asyncio.run(asyncio.wait_for(through_mcp(settings, repo), timeout=45))
    started = time.monotonic()
    with TestClient(create_app(settings)) as client:
        projects = client.get("/admin/projects", headers={"Authorization": f"Bearer {ADMIN}"}).json()
        assert [(p["repo_path"], p["source"], p["status"]) for p in projects] == [("shop", "local", "ok")]
        answer = client.get("/api/v1/index-status", headers={"Authorization": f"Bearer {READER}"}).json()
        assert [(i["repo"], i["source"], i["files"]) for i in answer["results"]] == [("shop", "local", 2)]
        client.headers.update({"Authorization": f"Bearer {ADMIN}"})
        out = io.StringIO()
        args = argparse.Namespace(backfill=None, watch=False)
        assert run_admin_status(args, settings, out, _unclosed(client)) == 0
        assert out.getvalue().splitlines()[0] == "projects: 1 ok; 0 syncs running"
    assert time.monotonic() - started < 60


async def watched(settings: Settings, repo: GitRepo) -> None:
    me = everything("local")
    async with open_service(settings) as deps:
        await deps.store.ensure(await deps.index_model())
        stop = asyncio.Event()
        task = asyncio.create_task(watch(deps, [repo.path], 0.05, stop))
        try:
            await until(lambda: _shows(deps, me, files=1))
            _write_whole(repo.path, SRC + "B.java", service("B"))
            await until(lambda: _shows(deps, me, files=2))
            _write_whole(repo.path, "pom.xml", POM.replace("1.2.3", "2.0.0"))  # a build file alone changes
            await until(lambda: _uses(deps, me, "2.0.0"))
            await until(lambda: _shows(deps, me, files=2))  # its dependencies are recorded before the run ends
            expected = [("local", "compare", "DONE"), ("local", "compare", "DONE"), ("local", "tree", "DONE")]
            project_id = (await status(deps, me))["project_id"]

            async def recorded() -> bool:  # the third run's row is closed after its dependencies are saved
                runs = await deps.db.runs(project_id)
                return sorted((r["trigger"], r["mode"], r["status"]) for r in runs) == sorted(expected)

            await until(recorded)
        finally:
            stop.set()
            await asyncio.wait_for(task, timeout=30)


def _write_whole(root: Path, rel: str, content: str) -> None:
    """Write as an editor saves: the watch (polling every 50 ms) never sees a half-written file, which would
    be a resync of its own and a fourth run (seen on a loaded machine)."""
    staged = root.parent / f"{root.name}.staged"  # beside the checkout, on its file system
    staged.write_text(content)
    staged.replace(root / rel)


async def _uses(deps: ServiceDeps, access: Access, version: str) -> bool:
    used = await call(deps, access, "find_library_usages", library="org.example:widgets")
    return not used.is_error and version in text(used)


async def _shows(deps: ServiceDeps, access: Access, *, files: int) -> bool:
    result = await call(deps, access, "index_status", repo="shop")
    if result.is_error:
        return False
    [item] = data(result)["results"]
    return bool(item["files"] == files and item["state"] == "ok" and not item["behind"])


def test_serve_watch_records_its_first_pass_and_each_resync_as_runs(
    tmp_path: Path, clean_db: str, clean_redis: str
) -> None:
    repo = checkout(tmp_path)
    asyncio.run(asyncio.wait_for(watched(local_settings(tmp_path, clean_db, clean_redis), repo), timeout=50))
