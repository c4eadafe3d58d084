"""`javakb` imports only what a command needs: no web stack for `search`, nothing heavy for `token` (issue 12).

Each check runs a fresh interpreter (an import, once done, cannot be undone in this one) and reads its
`sys.modules` after the command ran.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

from app.store.indexing import RunCounts
from entry.cli import index_summary

ROOT: Final = Path(__file__).resolve().parents[2]
WEB_STACK: Final = frozenset({"starlette", "fastmcp", "uvicorn", "mcp", "sse_starlette", "authlib"})
CLIENTS: Final = frozenset({"qdrant_client", "httpx", "arq", "redis", "asyncpg", "psycopg", "gitlab", "yoyo"})


def modules_after(code: str, tmp_path: Path) -> set[str]:
    """The top-level packages imported by a fresh interpreter that ran `code`."""
    script = code + "\nimport json, sys\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    env = {**os.environ, "JAVAKB_QDRANT__PATH": str(tmp_path / "qdrant")}
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    loaded: list[str] = json.loads(run.stdout.strip().splitlines()[-1])
    return set(loaded)


def test_importing_the_cli_imports_no_web_stack_and_no_client(tmp_path: Path) -> None:
    loaded = modules_after("import entry.cli", tmp_path)
    assert not loaded & (WEB_STACK | CLIENTS)
    assert "app" in loaded  # the check does see our own imports


def test_a_token_is_made_without_the_web_stack_or_a_client(tmp_path: Path) -> None:
    loaded = modules_after("from entry.cli import main; main(['token', '--name', 'n', '--repos', 'acme/'])", tmp_path)
    assert not loaded & (WEB_STACK | CLIENTS)


def test_search_opens_the_store_but_not_the_web_stack(tmp_path: Path) -> None:
    loaded = modules_after("from entry.cli import main; main(['search', 'owner'])", tmp_path)
    assert "qdrant_client" in loaded
    assert not loaded & WEB_STACK
    assert not loaded & {"arq", "asyncpg", "psycopg", "gitlab", "yoyo"}


@pytest.mark.parametrize(
    ("model", "said"),
    [
        (None, "12 chunks indexed (lexical only: embedding provider none)"),
        ("bge-small", "12 chunks embedded with bge-small and indexed"),
    ],
)
def test_the_index_summary_says_what_was_done(model: str | None, said: str) -> None:
    counts = dataclasses.asdict(RunCounts(files=3, embedded=12, reused=1))  # as the socket sends them
    assert index_summary("acme/shop", counts, 0, model) == (
        f"javakb index: acme/shop: 3 files, {said}, 1 reused, 0 deleted, 0 skipped, 0 vanished files removed"
    )
