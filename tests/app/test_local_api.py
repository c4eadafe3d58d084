"""`javakb serve`'s local socket (index and search while it holds the store) and `--watch`, on both engines."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import stat
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from app.agents.local_socket import ask
from app.auth.access import LOCAL
from app.core.errors import ServiceError
from app.core.settings import QdrantSettings, Settings
from app.runtime import Deps
from app.search.scoping import Filters
from app.sync.watch import diff, watch
from entry.cli import main
from entry.deps import open_deps
from entry.local_api import AlreadyServingError, claimed, serving, socket_path
from tests.support.engines import EMBEDDED_ENGINES
from tests.support.java_fixtures import SHOP_DIR
from tests.support.shop import CORE_SRC

SERVICE_DIR = f"{CORE_SRC}/core/service"
OWNER_SERVICE = f"{SERVICE_DIR}/OwnerService.java"
FIND = "com.acme.shop.core.service.OwnerService.find"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(SHOP_DIR / SERVICE_DIR, root / SERVICE_DIR)
    return root


@pytest_asyncio.fixture(params=EMBEDDED_ENGINES)
async def deps(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Deps]:
    settings = Settings(qdrant=QdrantSettings(path=str(tmp_path / "kb"), engine=request.param))
    async with open_deps(settings) as opened:
        yield opened


async def names(deps: Deps, query: str) -> list[str]:
    return [h.qualified_name for h in await deps.search.search(LOCAL, query, Filters(), 20)]


async def test_index_and_search_go_through_the_socket_of_the_running_service(deps: Deps, project: Path) -> None:
    path = socket_path(deps.settings.qdrant)
    assert path is not None
    progress: list[tuple[int, int]] = []
    request = {"command": "index", "path": str(project), "repo": "acme/shop", "rebuild": False, "jobs": 1}

    async with serving(deps, path):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600  # only the store's owner may connect
        # The client blocks (it needs only the standard library): off this loop, which serves it.
        result = await asyncio.to_thread(ask, path, request, lambda done, total: progress.append((done, total)))
        found = await asyncio.to_thread(ask, path, {"command": "search", "query": "OwnerService.find", "limit": 3})

    assert result["counts"]["files"] == len(list((project / SERVICE_DIR).glob("*.java")))
    assert result["counts"]["embedded"] > 0
    assert progress and progress[-1][0] == progress[-1][1] == result["counts"]["files"]
    cited = found[0]["citation"]
    assert cited["qualified_name"] == FIND and cited["repo_path"] == "acme/shop"
    assert not path.exists()  # removed when the service stops


async def test_without_a_service_the_cli_opens_the_store_itself(deps: Deps, tmp_path: Path) -> None:
    assert ask(socket_path(deps.settings.qdrant), {"command": "search", "query": "x"}) is None
    assert ask(None, {"command": "search", "query": "x"}) is None
    assert socket_path(QdrantSettings(path=":memory:")) is None


async def test_a_refused_request_comes_back_as_a_service_error(deps: Deps) -> None:
    path = socket_path(deps.settings.qdrant)
    async with serving(deps, path):
        with pytest.raises(ServiceError, match="unknown command 'drop'"):
            await asyncio.to_thread(ask, path, {"command": "drop"})


async def test_a_request_sent_while_the_store_opens_waits_for_it_and_is_answered(deps: Deps) -> None:
    path = socket_path(deps.settings.qdrant)
    assert path is not None
    early = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    async def opening() -> None:
        early.connect(str(path))  # the socket is claimed: the connection waits in its backlog
        early.sendall(json.dumps({"command": "search", "query": "OwnerService", "limit": 1}).encode() + b"\n")
        early.setblocking(False)
        with pytest.raises(BlockingIOError):
            early.recv(1)  # nothing answers while the store is not open
        await deps.store.ensure(await deps.index_model())

    with early:
        async with serving(deps, path, opening=opening):
            early.settimeout(30)
            answer = await asyncio.to_thread(early.makefile("rb").readline)
    assert json.loads(answer) == {"result": []}  # answered once open (nothing indexed yet)


def test_a_second_claim_on_a_socket_someone_listens_on_is_refused_and_leaves_it(tmp_path: Path) -> None:
    path = tmp_path / "javakb.sock"
    with claimed(path):
        bound = path.stat().st_ino
        with pytest.raises(AlreadyServingError, match="already listens"), claimed(path):
            pass
        assert path.stat().st_ino == bound  # neither replaced nor removed
    assert not path.exists()  # removed by the claim that bound it


def test_a_socket_is_removed_on_exit_only_while_it_is_the_one_bound(tmp_path: Path) -> None:
    path = tmp_path / "javakb.sock"
    with claimed(path), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as other:
        path.unlink()
        other.bind(str(path))  # another service's socket took its place
        replaced = path.stat().st_ino
    assert path.stat().st_ino == replaced  # left to the process that bound it


def test_diff_reports_new_modified_and_removed_files() -> None:
    before = {"a.java": (1, 10), "b.java": (1, 10), "c.java": (1, 10)}
    after = {"a.java": (1, 10), "b.java": (2, 10), "d.java": (1, 5)}

    changes = diff(before, after)

    assert changes.changed == ["b.java", "d.java"]
    assert changes.removed == ["c.java"]
    assert not diff(after, dict(after))


async def until(check: object, timeout: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():  # type: ignore[operator]
        assert asyncio.get_running_loop().time() < deadline, "not seen in time"
        await asyncio.sleep(0.05)


async def test_watch_indexes_a_checkout_then_follows_edits_and_removals(deps: Deps, project: Path) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(watch(deps, [project], 0.05, stop))
    try:
        await until(lambda: _has(deps, "OwnerService.find", FIND))
        source = project / OWNER_SERVICE
        text = source.read_text(encoding="utf-8")
        assert "OwnerDto> find(Long id)" in text
        source.write_text(text.replace("OwnerDto> find(Long id)", "OwnerDto> findWatched(Long id)"), encoding="utf-8")
        await until(lambda: _has(deps, "OwnerService.findWatched", f"{FIND}Watched"))
        source.unlink()
        await until(lambda: _gone(deps, "OwnerService"))
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=30)


async def _has(deps: Deps, query: str, name: str) -> bool:
    try:
        return name in await names(deps, query)
    except ServiceError:
        return False  # nothing indexed yet


async def _gone(deps: Deps, query: str) -> bool:
    return not any(n.startswith("com.acme.shop.core.service.OwnerService") for n in await names(deps, query))


def test_the_cli_indexes_and_searches_through_a_running_service(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in list(os.environ):
        if name.upper().startswith("JAVAKB_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("JAVAKB_QDRANT__PATH", str(tmp_path / "kb"))
    monkeypatch.setenv("JAVAKB_QDRANT__ENGINE", "edge")  # a second opener is refused: the CLI must use the socket
    ready, stop = threading.Event(), threading.Event()

    async def service() -> None:
        async with open_deps(Settings()) as held, serving(held, socket_path(held.settings.qdrant)):
            await held.store.ensure(await held.index_model())
            ready.set()
            while not stop.is_set():
                await asyncio.sleep(0.02)

    thread = threading.Thread(target=lambda: asyncio.run(service()))
    thread.start()
    try:
        assert ready.wait(60)
        assert main(["index", str(project), "--repo", "acme/shop"]) == 0
        assert "javakb index: acme/shop: 6 files" in capsys.readouterr().err
        assert main(["search", "OwnerService.find", "--json", "--limit", "1"]) == 0
        records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    finally:
        stop.set()
        thread.join(60)
    assert [r["qualified_name"] for r in records] == [FIND]
