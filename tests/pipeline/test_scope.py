"""Scope globs: `**` spans directories (including none), `*` and `?` stay in one path segment."""

from __future__ import annotations

import pytest

from pipeline.model import ChunkerConfig
from pipeline.scope import Scope, glob_to_regex

DEFAULT = Scope.from_config(ChunkerConfig())


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("*.java", "A.java"),
        ("**/*.java", "A.java"),  # `**/` may match no directory at all
        ("**/*.java", "a/b/c/A.java"),
        ("a/**/b", "a/b"),
        ("a/**/b", "a/x/b"),
        ("a/**/b", "a/x/y/b"),
        ("a/**", "a/x/y"),
        ("**", "x/y/z.java"),
        ("**/x", "x"),
        ("**/x", "a/b/x"),
        ("a?c", "abc"),
        ("src/*/java", "src/main/java"),
    ],
)
def test_glob_matches(pattern: str, path: str) -> None:
    assert glob_to_regex(pattern).match(path)


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("*.java", "a/A.java"),  # `*` does not cross a slash
        ("a?c", "a/c"),  # nor does `?`
        ("a/**/b", "ab"),
        ("**/x", "ax"),  # `**/` stops at a segment boundary
        ("**/x", "a/xy"),
        ("a.b", "axb"),  # a dot is literal
        ("src/*/java", "src/main/sub/java"),
        ("*.java", "A.java.bak"),  # the whole path must match
    ],
)
def test_glob_does_not_match(pattern: str, path: str) -> None:
    assert not glob_to_regex(pattern).match(path)


@pytest.mark.parametrize(
    "path",
    [
        "src/main/java/A.java",
        "src/main/java/com/acme/A.java",
        "shop-core/src/main/java/com/acme/A.java",
        "a/b/c/src/main/java/A.java",
        "/shop-core/src/main/java/A.java",  # a leading slash is ignored
    ],
)
def test_default_scope_includes_main_java_sources(path: str) -> None:
    assert DEFAULT.matches(path)


@pytest.mark.parametrize(
    "path",
    [
        "src/test/java/A.java",
        "m/src/test/java/com/acme/ATest.java",
        "m/target/generated-sources/annotations/src/main/java/A.java",
        "m/build/generated/sources/src/main/java/A.java",
        "m/src/main/java/generated/A.java",
        "out/src/main/java/A.java",
        "m/generated-sources/src/main/java/A.java",
    ],
)
def test_default_scope_excludes_tests_and_build_output(path: str) -> None:
    assert not DEFAULT.matches(path)


@pytest.mark.parametrize(
    "path",
    [
        "src/main/java/A.kt",
        "src/main/java/A.java.orig",
        "src/main/resources/A.java",
        "mysrc/main/java/A.java",
        "src/main/javax/A.java",
        "pom.xml",
        "A.java",
    ],
)
def test_default_scope_ignores_other_files(path: str) -> None:
    assert not DEFAULT.matches(path)


def test_exclude_wins_over_include() -> None:
    scope = Scope.from_config(ChunkerConfig(include=("**/*.java",), exclude=("legacy/**",)))
    assert (scope.matches("app/A.java"), scope.matches("legacy/A.java")) == (True, False)


def test_custom_include_without_excludes() -> None:
    scope = Scope.from_config(ChunkerConfig(include=("**/*.java",), exclude=()))
    assert scope.matches("m/src/main/java/A.java")
    assert not scope.matches("m/src/test/java/ATest.java")  # test code has its own switch (issue 27)
    assert Scope.from_config(ChunkerConfig(include=("**/*.java",), exclude=(), tests=())).matches("m/src/test/A.java")


def test_test_code_is_in_with_its_switch_and_an_exclude_still_wins() -> None:
    scope = Scope.from_config(ChunkerConfig(index_tests=True, exclude=("**/legacy/**",)))
    assert scope.matches("m/src/test/java/ATest.java") and scope.matches("m/src/testFixtures/java/Fixture.java")
    assert not scope.matches("m/src/test/resources/data.json") and not scope.matches("m/src/test/java/legacy/Old.java")


def test_several_includes_are_alternatives() -> None:
    scope = Scope.from_config(ChunkerConfig(include=("app/*.java", "lib/**/*.java"), exclude=()))
    assert [scope.matches(p) for p in ("app/A.java", "lib/x/y/B.java", "app/x/C.java")] == [True, True, False]
