"""`javakb index DIR` finds Kotlin sources as it finds Java ones (issue 29): the default scope and its root."""

from __future__ import annotations

from pathlib import Path

from app.sync.localfs import iter_sources, scope_prefix
from pipeline.model import ChunkerConfig
from pipeline.scope import Scope


def test_a_folder_inside_src_main_kotlin_is_walked_like_its_checkout(tmp_path: Path) -> None:
    inner = tmp_path / "svc" / "src" / "main" / "kotlin" / "com" / "acme"
    inner.mkdir(parents=True)
    (inner / "Owners.kt").write_text("package com.acme\n\nclass Owners\n")
    (inner / "Owner.java").write_text("package com.acme; class Owner {}\n")
    assert scope_prefix(inner) == "src/main/kotlin/com/acme/"
    assert [rel for rel, _ in iter_sources(inner, Scope.from_config(ChunkerConfig()))] == ["Owners.kt"]


def test_a_checkout_yields_both_languages_and_no_test_or_script(tmp_path: Path) -> None:
    for rel in ("src/main/java/A.java", "src/main/kotlin/B.kt", "src/test/kotlin/BTest.kt", "build.gradle.kts"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("class X\n")
    (tmp_path / ".git").mkdir()
    found = [rel for rel, _ in iter_sources(tmp_path, Scope.from_config(ChunkerConfig()))]
    assert found == ["src/main/java/A.java", "src/main/kotlin/B.kt"]
