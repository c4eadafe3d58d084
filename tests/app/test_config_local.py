"""`javakb index` reads Spring configuration files by default (issue 29): a changed one replaces its records, a
deleted one removes them, a broken one is skipped with its reason and the rest indexed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.test_cli_index_search import index, qdrant_path, run, stored

__all__ = ["qdrant_path"]  # the module's autouse fixture: each embedded engine, in a temporary folder

RES = "svc/src/main/resources"
JAVA = "svc/src/main/java/com/acme/Svc.java"


def settings_of(payloads: list[dict[str, object]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for p in payloads:
        if p["symbol_type"] == "config":
            found.setdefault(str(p["file_path"]), []).extend(str(e) for e in p["config"])  # type: ignore[attr-defined]
    return {path: sorted(entries) for path, entries in found.items()}


def test_a_changed_config_file_replaces_its_records_and_a_deleted_one_removes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], qdrant_path: Path
) -> None:
    root = tmp_path / "svc-repo"
    (root / RES).mkdir(parents=True)
    (root / JAVA).parent.mkdir(parents=True)
    (root / JAVA).write_text('package com.acme;\nclass Svc {\n    @Value("${svc.limit:5}")\n    int limit;\n}\n')
    (root / RES / "application.yml").write_text("svc:\n  limit: 10\n  password: hunter2\n")
    (root / RES / "application-dev.properties").write_text("svc.limit=1\n")
    (root / RES / "logback.xml").write_text("<configuration/>\n")

    first = index(capsys, root)
    assert first["files"] == 3
    assert settings_of(stored(qdrant_path)[2]) == {
        f"{RES}/application.yml": ["set\tsvc.limit\t\t2\t10", "set\tsvc.password\t\t3\t<secret>"],
        f"{RES}/application-dev.properties": ["set\tsvc.limit\tdev\t1\t1"],
    }

    (root / RES / "application.yml").write_text("svc:\n  limit: 20\n")
    (root / RES / "application-dev.properties").unlink()
    second = index(capsys, root)

    assert second["removed"] == 1
    payloads = stored(qdrant_path)[2]
    assert settings_of(payloads) == {f"{RES}/application.yml": ["set\tsvc.limit\t\t2\t20"]}
    assert "hunter2" not in repr(payloads)
    assert any(p["file_path"] == JAVA and "svc.limit" in p["config_keys"] for p in payloads)


def test_a_broken_config_file_is_skipped_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], qdrant_path: Path
) -> None:
    root = tmp_path / "svc-repo"
    (root / RES).mkdir(parents=True)
    (root / RES / "application.yml").write_text("svc:\n  limit: [10\n")
    (root / RES / "bootstrap.yml").write_text("spring:\n  application:\n    name: svc\n")

    code, _, err = run(capsys, "index", str(root), "--repo", "acme/shop")

    assert code == 0, err
    assert "1 skipped" in err
    code, out, err = run(capsys, "chunks", str(root))  # the reason, as `javakb index` logs it at INFO
    assert code == 0 and '"reason": "syntax_error", "detail": "broken YAML at line 3, column 1' in out, out + err
    assert {p["file_path"] for p in stored(qdrant_path)[2]} == {f"{RES}/bootstrap.yml"}
