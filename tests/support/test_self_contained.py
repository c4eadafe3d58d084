"""The tests, their testkit and the benchmarks read nothing outside the repository: no `../shared`
samples, no path climbing above the root."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

import pytest

ROOT: Final = Path(__file__).resolve().parents[2]
TESTS: Final = ROOT / "tests"
CHECKED: Final = (TESTS, ROOT / "testkit", ROOT / "bench")
# `Path(__file__).resolve().parents[N]` followed by any `.parent`s, or a plain `.parent.parent...` chain.
PARENTS: Final = re.compile(r"__file__\)(?:\.resolve\(\))?(?:\.parents\[(\d+)\])?((?:\.parent\b)*)")
OUTSIDE: Final = re.compile(r"""["'](?:\.\./|/work/)|/ *["']shared["']""")


def python_files() -> list[Path]:
    """Every Python file of the tests, testkit and benches but this one, whose examples are the very patterns
    it looks for."""
    here = Path(__file__).resolve()
    found = (p for folder in CHECKED for p in folder.rglob("*.py"))
    return sorted(p for p in found if "fixtures" not in p.relative_to(ROOT).parts and p != here)


def levels_up(match: re.Match[str]) -> int:
    """How far above the file's own directory the expression points (`parents[0]` is that directory)."""
    index = match.group(1)
    return (int(index) if index is not None else -1) + match.group(2).count(".parent")


def climbs_above_root(path: Path, source: str) -> list[str]:
    depth = len(path.relative_to(ROOT).parts) - 1  # how far up the root is from the file's directory
    return [m.group(0) for m in PARENTS.finditer(source) if levels_up(m) > depth]


@pytest.mark.parametrize("path", python_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_test_file_reads_outside_the_repository(path: Path) -> None:
    source = path.read_text()
    assert climbs_above_root(path, source) == []
    assert OUTSIDE.findall(source) == []


def test_the_check_catches_the_old_sample_path() -> None:
    old = 'SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "gitlab"'
    assert climbs_above_root(TESTS / "hooks" / "test_events.py", old) != []
    assert OUTSIDE.findall(old) != []


def test_a_path_inside_the_repository_passes() -> None:
    inside = 'Path(__file__).resolve().parents[1] / "fixtures" / "java"'
    assert climbs_above_root(TESTS / "support" / "java_fixtures.py", inside) == []
