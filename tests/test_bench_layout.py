"""`bench/` stands on the service and `testkit/` alone, in small files, timing through injection.

The benchmarks share `bench/common.py` and the fakes of `testkit/` with the tests; they import nothing
from `tests/`, patch no attribute of our modules (`setattr`), and reach no store's qdrant-client
(`store.client`): what they time is injected (`open_deps(wrap=...)`, `testkit.standins.around`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Final

import pytest

ROOT: Final = Path(__file__).resolve().parents[1]
BENCH: Final = ROOT / "bench"
MAX_BENCH_LINES: Final = 500
SERVICE: Final = ("entry", "app", "hooks", "mcp_server", "pipeline")
STORE_CLIENT: Final = re.compile(r"\bstore\.client\b")


def modules(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def imported(source: str) -> set[str]:
    """The top-level package of every module a source imports (at any depth of the file)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def setattr_calls(source: str) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
    ]


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", modules(BENCH) + modules(ROOT / "testkit"), ids=rel)
def test_benches_and_the_testkit_import_nothing_from_tests(path: Path) -> None:
    assert "tests" not in imported(path.read_text())


@pytest.mark.parametrize("path", modules(BENCH), ids=rel)
def test_no_bench_file_grows_over_the_cap(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= MAX_BENCH_LINES


@pytest.mark.parametrize("path", modules(BENCH), ids=rel)
def test_benches_inject_what_they_time(path: Path) -> None:
    source = path.read_text()
    assert setattr_calls(source) == []
    assert STORE_CLIENT.findall(source) == []


@pytest.mark.parametrize("package", SERVICE)
def test_the_service_never_imports_the_benches_or_the_testkit(package: str) -> None:
    for path in modules(ROOT / package):
        assert not imported(path.read_text()) & {"bench", "testkit", "tests"}, rel(path)


def test_the_checks_catch_what_they_forbid() -> None:
    assert "tests" in imported("def f():\n    from tests.support.shop import SHOP\n")
    assert "tests" in imported("import tests.support.fake_gitlab as fg\n")
    assert "tests" not in imported("from testkit.fake_gitlab import FakeGitLab\n")
    assert setattr_calls('setattr(app.sync.local_index, "iter_sources", timed)\n') == [1]
    assert STORE_CLIENT.findall("await deps.store.client.scroll(alias)") != []
