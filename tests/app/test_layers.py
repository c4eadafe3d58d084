"""No import runs back up: entry → interfaces → services → adapters → base (issues 11 and 25).

Every module of `entry/`, `app/`, `hooks/` and `mcp_server/` has a level here; a module may import
modules of its own level or below. Above the services each package stands alone: the receiver
(`hooks/`) and MCP (`mcp_server/`) never import each other, and only `entry/` (the entry points and
the composition root, the top level) imports them. Folders are held to the same order: the arrows
between folders form no circle. A new module without a level fails `test_every_module_has_a_level`.
No module outside `tests/` (the service, `testkit/`, `bench/`, `scripts/`) is part of a circle of
imports either, counting those only a type checker runs (`if TYPE_CHECKING:`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.pipeline.test_purity import imported_modules

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("entry", "app", "hooks", "mcp_server", "pipeline")

BASE = 0
ADAPTER = 1
SERVICE = 2
INTERFACE = 3
ENTRY = 4

LEVELS: dict[str, int] = {
    # Base: values, errors and settings everyone reads; the pure pipeline; pure store rules.
    "app.core": BASE,
    "pipeline": BASE,
    "app.store.lexical": BASE,
    "app.store.routes": BASE,
    "app.store.filters": BASE,
    # Adapters: PostgreSQL, Qdrant, embeddings, GitLab, the queue, the file system.
    "app.db": ADAPTER,
    "app.store": ADAPTER,
    "app.gitlab": ADAPTER,
    "app.jobs.redis": ADAPTER,
    "app.sync.group_commit": ADAPTER,
    "app.sync.localfs": ADAPTER,
    # Services: indexing, the sync and its sweep, search and ranking, who may read what.
    "app.store.indexing": SERVICE,
    "app.sync": SERVICE,
    "app.libraries": SERVICE,
    "app.libraries.maven": ADAPTER,
    "app.search": SERVICE,
    "app.auth": SERVICE,
    "app.jobs": SERVICE,  # `targets`: where a job writes
    "app.jobs.queue": ADAPTER,  # the arq queue's job names and ids
    "app.runtime": SERVICE,  # `Deps`, which every service reads
    "app.rest": SERVICE,  # REST's models, its OpenAPI document, the rebuild report
    "app.agents": SERVICE,  # the agent hooks and their installer
    "app.agents.local_socket": ADAPTER,
    "app.console": SERVICE,  # the operator's page: its model and its HTML
    "app.ops": SERVICE,  # the worker's supervisor, /metrics, the system hook, the admin client
    "app.ops.worker_health": ADAPTER,
    # Interfaces over the services: the webhook receiver, MCP.
    "hooks": INTERFACE,
    "mcp_server": INTERFACE,
    # Entry points and the composition root.
    "entry": ENTRY,
}


def module_name(path: Path) -> str:
    """The dotted name of a source file under the repository root."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def level_of(name: str) -> tuple[str, int] | None:
    """The most specific entry of `LEVELS` that names `name` (itself or a parent package)."""
    if name in EXACT:
        return name, EXACT[name]
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        key = ".".join(parts[:i])
        if key in LEVELS:
            return key, LEVELS[key]
    return None


def upward_imports(name: str, imports: set[str]) -> list[str]:
    """What `name` imports that sits above it, or another package of its level above the services."""
    own = level_of(name)
    assert own is not None, name
    wrong = []
    for target in sorted(imports):
        found = level_of(target)
        if found is None:
            continue  # third-party
        _, level = found
        crosses = level == own[1] >= INTERFACE and _top(name) != _top(target)
        if level > own[1] or crosses:
            wrong.append(target)
    return wrong


def _top(name: str) -> str:
    return name.split(".")[0]


MODULES = sorted(p for package in PACKAGES for p in (ROOT / package).glob("**/*.py"))
# An empty package (`app`, `app.store`, ...) is only a folder: importing it imports nothing, and
# its modules each need a level of their own.
EXACT = {module_name(p): BASE for p in MODULES if p.name == "__init__.py" and not p.read_text().strip()}


def test_every_module_has_a_level() -> None:
    assert [module_name(p) for p in MODULES if level_of(module_name(p)) is None] == []
    assert len(MODULES) > 30


@pytest.mark.parametrize("path", MODULES, ids=[module_name(p) for p in MODULES])
def test_no_import_runs_back_up(path: Path) -> None:
    assert upward_imports(module_name(path), imported_modules(path)) == []


def test_the_rule_catches_the_arrows_issue_11_named() -> None:
    # The two arrows that ran back up before this layering: an adapter reading the receiver's
    # event type, and the worker building the receiver to replay deliveries.
    assert upward_imports("app.db", {"hooks.events", "app.core.errors"}) == ["hooks.events"]
    assert upward_imports("app.sync.deliveries", {"hooks.receiver", "app.db"}) == ["hooks.receiver"]
    assert upward_imports("mcp_server.auth", {"hooks.auth"}) == ["hooks.auth"]
    assert upward_imports("entry.web", {"hooks.receiver", "mcp_server.server", "entry.api"}) == []
    assert upward_imports("mcp_server.server", {"mcp_server.auth", "app.search.service", "httpx"}) == []


def test_the_rule_catches_the_arrows_issue_25_named() -> None:
    # The web app and the CLI compose the receiver and MCP from the top, with no exemption by name:
    # the same imports from a module of `app/` run back up.
    assert upward_imports("app.runtime", {"hooks.receiver", "mcp_server.server"}) == [
        "hooks.receiver",
        "mcp_server.server",
    ]
    assert upward_imports("app.ops.scrape", {"entry.deps"}) == ["entry.deps"]
    assert circles({"app.sync": {"app.libraries"}, "app.libraries": {"app.sync", "app.db"}}) == [
        ["app.libraries", "app.sync"]
    ]


def folder_of(name: str) -> str:
    """The folder (package) a module name lives in; a package is its own folder."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:i])
        if base.is_dir():
            return ".".join(parts[:i])
        if base.with_suffix(".py").is_file():
            return ".".join(parts[: i - 1])
    return ""


def folder_arrows() -> dict[str, set[str]]:
    """Each folder of ours and the other folders of ours its modules import."""
    arrows: dict[str, set[str]] = {}
    for path in MODULES:
        own = folder_of(module_name(path))
        found = {folder_of(t) for t in imported_modules(path) if level_of(t) is not None}
        arrows.setdefault(own, set()).update(f for f in found if f and f != own)
    return arrows


def circles(arrows: dict[str, set[str]]) -> list[list[str]]:
    """The circles (strongly connected sets of more than one node) of a graph of folders or modules, each sorted."""
    reach = {start: _reachable(arrows, start) for start in arrows}
    circles = {tuple(sorted(f for f in reach if start in reach[f] and f in reach[start])) for start in reach}
    return sorted(list(c) for c in circles if len(c) > 1)


def _reachable(arrows: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(arrows.get(start, ()))
    while todo:
        folder = todo.pop()
        if folder not in seen:
            seen.add(folder)
            todo.extend(arrows.get(folder, ()))
    return seen


def test_no_circle_between_folders() -> None:
    arrows = folder_arrows()
    assert {"entry", "app.sync", "app.libraries", "app.rest", "hooks", "mcp_server"} <= set(arrows)
    assert circles(arrows) == []


# Every module outside `tests/`: the service's packages and the code the tests and benchmarks share.
CODE = sorted(p for folder in (*PACKAGES, "testkit", "bench", "scripts") for p in (ROOT / folder).glob("**/*.py"))


def module_imports(path: Path) -> set[str]:
    """What a source file imports, with `pkg.x` for each `from pkg import x` (x may be a module)."""
    found = imported_modules(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def module_arrows(paths: list[Path]) -> dict[str, set[str]]:
    """Each module of `paths` and the other modules of `paths` it imports."""
    ours = {module_name(p): p for p in paths}
    return {name: {t for t in module_imports(path) if t in ours and t != name} for name, path in ours.items()}


def test_no_circle_between_modules() -> None:
    arrows = module_arrows(CODE)
    assert {"testkit.fake_gitlab_api", "testkit.fake_gitlab_http", "testkit.fake_gitlab_model"} <= arrows[
        "testkit.fake_gitlab"
    ]
    assert {"app.sync.syncer", "testkit.sync_env", "bench.rebuild"} <= set(arrows)
    assert circles(arrows) == []


def test_the_rule_catches_the_circle_issue_25_named(tmp_path: Path) -> None:
    # The fake GitLab's modules imported each other, the API its facade only for the type checker.
    source = tmp_path / "fake_gitlab_api.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from testkit import fake_gitlab\n")
    assert "testkit.fake_gitlab" in module_imports(source)
    facade, api, wire = "testkit.fake_gitlab", "testkit.fake_gitlab_api", "testkit.fake_gitlab_wire"
    assert circles({facade: {api}, api: {facade, wire}, wire: set()}) == [[facade, api]]
