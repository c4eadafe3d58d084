"""Issue 27: `javakb index DIR` inside a checkout's `src/main/java`, a folder the scope leaves out, and what
`serve --watch` says during its first pass (progress, skipped files with their reasons)."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from app.core.env_names import SCOPE_SETTING
from app.core.settings import ChunkingSettings, QdrantSettings, Settings
from app.runtime import Deps
from app.sync.localfs import iter_sources, scope_prefix
from app.sync.watch import watch
from entry.cli import main
from entry.deps import open_deps
from pipeline.model import ChunkerConfig
from pipeline.scope import Scope

CLASS = "package com.acme;\n\npublic class {name} {{\n    public int size() {{\n        return {n};\n    }}\n}}\n"
FILES = re.compile(r"javakb index: \S+: (\d+) files")


@pytest.fixture(autouse=True)
def store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Default settings, except that the embedded store lives in a temporary folder and nothing is embedded."""
    for name in list(os.environ):
        if name.upper().startswith("JAVAKB_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("JAVAKB_QDRANT__PATH", str(tmp_path / "qdrant"))
    monkeypatch.setenv("JAVAKB_EMBEDDING__PROVIDER", "none")


def write_class(folder: Path, name: str, n: int = 1) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.java").write_text(CLASS.format(name=name, n=n), encoding="utf-8")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git repository with a module: two main classes, one test class."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    write_class(root / "module/src/main/java/com/acme", "Cart", 1)
    write_class(root / "module/src/main/java/com/acme", "Order", 2)
    write_class(root / "module/src/test/java/com/acme", "CartTest", 3)
    return root


def index(capsys: pytest.CaptureFixture[str], root: Path) -> tuple[int, str]:
    assert main(["index", str(root), "--repo", "acme/repo", "--no-optimize"]) == 0
    err = capsys.readouterr().err
    found = FILES.search(err)
    assert found is not None, err
    return int(found.group(1)), err


def test_a_folder_inside_src_main_java_of_a_git_repository_is_indexed(
    checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files, err = index(capsys, checkout / "module/src/main/java/com/acme")

    assert files == 2, err
    assert "no file in scope" not in err


def test_the_repository_root_walks_what_it_did_before() -> None:
    """At a checkout's root the repository prefix is empty: the scope is matched as before, path for path."""
    config = ChunkerConfig()
    shop = Path(__file__).resolve().parents[1] / "fixtures"
    roots = [p for p in shop.iterdir() if p.is_dir()]
    assert roots
    for root in roots:
        plain = Scope.from_config(config)
        walked = list(iter_sources(root, plain))
        expected = sorted(
            (p.relative_to(root).as_posix(), p)
            for p in root.rglob("*")
            if p.is_file() and plain.matches(p.relative_to(root).as_posix()) and ".git" not in p.parts
        )
        assert walked == expected, root


def test_the_prefix_is_the_path_from_the_git_root_or_from_above_src_main_java(checkout: Path, tmp_path: Path) -> None:
    assert scope_prefix(checkout) == ""
    assert scope_prefix(checkout / "module/src/main/java/com/acme") == "module/src/main/java/com/acme/"
    loose = tmp_path / "plain/app/src/main/java/org/x"
    loose.mkdir(parents=True)
    assert scope_prefix(loose) == "src/main/java/org/x/"
    assert scope_prefix(tmp_path / "plain") == ""


def test_a_folder_the_scope_leaves_out_is_warned_about_with_its_count_and_the_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    loose = tmp_path / "loose"
    write_class(loose, "Alpha")
    write_class(loose / "sub", "Beta")
    (loose / "notes.txt").write_text("not java", encoding="utf-8")
    caplog.set_level(logging.WARNING)

    files, err = index(capsys, loose)

    assert files == 0
    assert f"no file in scope, 2 .java files left out (see {SCOPE_SETTING})" in err
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("2 .java files left out" in m and "JAVAKB_CHUNKING__INCLUDE" in m for m in warnings), warnings


def test_the_named_setting_brings_the_left_out_files_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    loose = tmp_path / "loose"
    write_class(loose, "Alpha")
    write_class(loose / "sub", "Beta")
    monkeypatch.setenv(SCOPE_SETTING, '["**/*.java"]')

    files, err = index(capsys, loose)

    assert files == 2, err
    assert "left out" not in err


def test_a_folder_with_files_in_scope_says_nothing_of_the_scope(
    checkout: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    files, err = index(capsys, checkout)
    assert files == 2
    assert "left out" not in err
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and "left out" in r.getMessage()]


@pytest_asyncio.fixture
async def deps(tmp_path: Path) -> AsyncIterator[Deps]:
    chunking = ChunkingSettings(max_file_bytes=400)
    settings = Settings(qdrant=QdrantSettings(path=str(tmp_path / "kb")), chunking=chunking)
    async with open_deps(settings) as opened:
        yield opened


async def test_watch_logs_its_first_pass_progress_and_each_skipped_file_with_its_reason(
    deps: Deps, checkout: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = checkout / "module/src/main/java/com/acme"
    (folder / "Huge.java").write_text(CLASS.format(name="Huge", n=0) + "// padding\n" * 60, encoding="utf-8")
    (folder / "Broken.java").write_text("package com.acme;\n\n}}} not java at all (((\n", encoding="utf-8")
    caplog.set_level(logging.INFO)
    stop = asyncio.Event()
    task = asyncio.create_task(watch(deps, [checkout], 0.05, stop))
    try:
        deadline = asyncio.get_running_loop().time() + 30
        while not any("watch: indexed" in r.getMessage() for r in caplog.records):
            assert asyncio.get_running_loop().time() < deadline, "the first pass did not end in time"
            await asyncio.sleep(0.05)
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=30)
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert f"watch: indexing {checkout}: 4/4 files" in messages, messages
    skipped = sorted(m for m in messages if m.startswith("skipped: "))
    assert len(skipped) == 2, messages
    broken, huge = skipped
    assert "module/src/main/java/com/acme/Broken.java" in broken
    assert '"reason": "syntax_error"' in broken and '"line_start": 1' in broken, broken
    assert "module/src/main/java/com/acme/Huge.java" in huge
    assert '"reason": "too_large"' in huge, huge
