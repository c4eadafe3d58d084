"""`pipeline/` is pure: no I/O clients, no web or queue frameworks, nothing from the service packages.

In the spirit of httpx's `test_exported_members.py`: the imports of every module are read with `ast`
(top level, inside functions, and `importlib.import_module("...")` / `__import__("...")` with a literal).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PIPELINE = Path(__file__).resolve().parents[2] / "pipeline"
FORBIDDEN = frozenset(
    {
        "asyncpg",
        "redis",
        "arq",
        "qdrant_client",
        "httpx",
        "starlette",
        "fastmcp",
        "gitlab",
        "entry",
        "app",
        "hooks",
        "mcp_server",
    }
)
MODULES = sorted(PIPELINE.glob("**/*.py"))


def imported_modules(path: Path) -> set[str]:
    """Absolute module names a source file imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Call) and _is_dynamic_import(node.func) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.add(first.value)
    return found


def _is_dynamic_import(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in ("__import__", "import_module")
    return isinstance(func, ast.Attribute) and func.attr == "import_module"


def test_pipeline_has_modules() -> None:
    assert len(MODULES) > 10


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PIPELINE)) for p in MODULES])
def test_pipeline_module_imports_nothing_impure(path: Path) -> None:
    roots = {name.split(".")[0] for name in imported_modules(path)}
    assert sorted(roots & FORBIDDEN) == []


def test_the_import_walker_sees_every_kind_of_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import httpx\n"
        "from app.core.settings import Settings\n"
        "from . import sibling\n"
        "def f():\n"
        "    import redis.asyncio\n"
        "    importlib.import_module('qdrant_client')\n"
        "    __import__('arq')\n",
        encoding="utf-8",
    )
    assert imported_modules(sample) == {"httpx", "app.core.settings", "redis.asyncio", "qdrant_client", "arq"}
