"""`javakb chunks PATH`: one JSON object per chunk on stdout, then the skipped files and spans."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.sync.localfs import chunk_local_files, iter_sources
from entry.cli import main
from pipeline.model import Chunk, ChunkerConfig, SourceContext
from pipeline.scope import Scope
from tests.support.java_fixtures import SHOP_DIR

CHUNK_FIELDS = set(Chunk.__dataclass_fields__)
SKIPPED_FIELDS = {"skipped", "file_path", "reason", "detail", "line_start", "line_end"}
OWNER_DTO = SHOP_DIR / "shop-core/src/main/java/com/acme/shop/core/dto/OwnerDto.java"


@pytest.fixture(autouse=True)
def default_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI builds Settings from the environment: run it with the defaults."""
    for name in list(os.environ):
        if name.upper().startswith("JAVAKB_"):
            monkeypatch.delenv(name)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]], str]:
    code = main(["chunks", *args])
    captured = capsys.readouterr()
    records = [json.loads(line) for line in captured.out.splitlines()]
    assert all(isinstance(r, dict) for r in records)
    return code, records, captured.err


def chunk_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if not r.get("skipped")]


def test_directory_exits_with_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run(capsys, str(SHOP_DIR))
    assert code == 0


def test_every_stdout_line_is_one_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    main(["chunks", str(SHOP_DIR)])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 214
    assert all(isinstance(json.loads(line), dict) for line in lines)


def test_chunk_lines_carry_every_chunk_field(capsys: pytest.CaptureFixture[str]) -> None:
    _, records, _ = run(capsys, str(SHOP_DIR))
    chunks = chunk_records(records)
    assert len(chunks) == 212
    assert all(set(r) == CHUNK_FIELDS for r in chunks)
    assert {"id", "text", "code", "content_hash"} <= CHUNK_FIELDS


def test_chunk_line_values_are_plain_json(capsys: pytest.CaptureFixture[str]) -> None:
    _, records, _ = run(capsys, str(OWNER_DTO))
    record = next(r for r in records if r["qualified_name"] == "com.acme.shop.core.dto.OwnerDto.OwnerDto")
    assert (record["symbol_type"], record["parameter_types"], record["http_method"]) == (
        "constructor",
        ["Long", "String", "String"],
        [],
    )


def test_skipped_lines_come_after_every_chunk_line(capsys: pytest.CaptureFixture[str]) -> None:
    _, records, _ = run(capsys, str(SHOP_DIR))
    kinds = [bool(r.get("skipped")) for r in records]
    assert kinds == sorted(kinds)  # all False (chunks), then all True (skipped)


def test_skipped_lines_give_file_and_reason(capsys: pytest.CaptureFixture[str]) -> None:
    _, records, _ = run(capsys, str(SHOP_DIR))
    skipped = [r for r in records if r.get("skipped")]
    assert all(set(r) == SKIPPED_FIELDS for r in skipped)
    assert sorted((r["file_path"], r["reason"]) for r in skipped) == [
        ("shop-core/src/main/java/com/acme/shop/legacy/Blob.java", "binary"),
        ("shop-core/src/main/java/com/acme/shop/legacy/Empty.java", "empty"),
    ]


def test_repository_defaults_to_the_directory_name(capsys: pytest.CaptureFixture[str]) -> None:
    _, records, _ = run(capsys, str(SHOP_DIR))
    assert {r["repo_path"] for r in chunk_records(records)} == {"shop"}


def test_repo_option_sets_the_repository(capsys: pytest.CaptureFixture[str]) -> None:
    _, records, _ = run(capsys, str(SHOP_DIR), "--repo", "acme/shop")
    assert {r["repo_path"] for r in chunk_records(records)} == {"acme/shop"}


def test_file_paths_are_relative_to_the_directory(capsys: pytest.CaptureFixture[str]) -> None:
    _, records, _ = run(capsys, str(SHOP_DIR))
    assert all(r["file_path"].startswith(("shop-api/", "shop-core/", "shop-jobs/")) for r in records)


def test_summary_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run(capsys, str(SHOP_DIR))
    assert err.strip().splitlines()[-1] == "javakb chunks: 54 files, 212 chunks, 2 skipped"


def test_single_file_path_prints_that_files_chunks(capsys: pytest.CaptureFixture[str]) -> None:
    code, records, _ = run(capsys, str(OWNER_DTO))
    assert code == 0
    assert [r["qualified_name"] for r in records] == [
        "com.acme.shop.core.dto.OwnerDto",
        "com.acme.shop.core.dto.OwnerDto.OwnerDto",
        "com.acme.shop.core.dto.OwnerDto.of",
        "com.acme.shop.core.dto.OwnerDto.displayName",
    ]
    assert {(r["file_path"], r["repo_path"]) for r in records} == {(OWNER_DTO.as_posix(), "dto")}


def test_single_file_is_chunked_even_out_of_scope(capsys: pytest.CaptureFixture[str]) -> None:
    test_file = SHOP_DIR / "shop-core/src/test/java/com/acme/shop/core/service/OwnerServiceTest.java"
    _, records, _ = run(capsys, str(test_file))
    assert "com.acme.shop.core.service.OwnerServiceTest" in [r["qualified_name"] for r in records]


def test_missing_path_exits_with_two(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    code = main(["chunks", str(missing)])
    captured = capsys.readouterr()
    assert (code, captured.out) == (2, "")
    assert f"{missing}: no such file or directory" in captured.err


def test_empty_directory_prints_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, records, err = run(capsys, str(tmp_path))
    assert (code, records) == (0, [])
    assert "0 files, 0 chunks, 0 skipped" in err


def _javakb() -> str:
    found = shutil.which("javakb", path=str(Path(sys.executable).parent)) or shutil.which("javakb")
    assert found, "the javakb console script is not installed"
    return found


@pytest.mark.integration
def test_console_script_prints_what_main_prints(capsys: pytest.CaptureFixture[str]) -> None:
    main(["chunks", str(SHOP_DIR)])
    expected = capsys.readouterr().out
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("JAVAKB_")}
    done = subprocess.run(
        [_javakb(), "chunks", str(SHOP_DIR)], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert (done.returncode, done.stderr.strip().splitlines()[-1]) == (
        0,
        "javakb chunks: 54 files, 212 chunks, 2 skipped",
    )
    assert done.stdout == expected


def test_parse_processes_give_the_same_results_as_one() -> None:
    config = ChunkerConfig()
    files = list(iter_sources(SHOP_DIR, Scope.from_config(config)))
    context = SourceContext(repo_path="acme/shop")
    serial = list(chunk_local_files(files, context, config, jobs=1))

    assert len(serial) > 2
    assert list(chunk_local_files(files, context, config, jobs=2, files_per_process=1)) == serial


@pytest.mark.integration
def test_jobs_option_gives_the_same_output(capsys: pytest.CaptureFixture[str]) -> None:
    main(["chunks", str(SHOP_DIR)])
    serial = capsys.readouterr().out
    main(["chunks", "--jobs", "2", str(SHOP_DIR)])
    assert capsys.readouterr().out == serial
