"""No import runs back up: entry points → services → adapters → base (issue 11).

Every module of `app/`, `hooks/` and `mcp_server/` has a level here; a module may import modules of
its own level or below. Entry points may import another entry point only when they compose them
(`app.web` mounts the receiver, REST and MCP; `app.cli` runs the web app and the worker) or within
their own package. A new module without a level fails `test_every_module_has_a_level`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipeline.test_purity import imported_modules

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("app", "hooks", "mcp_server")

BASE = 0
ADAPTER = 1
SERVICE = 2
ENTRY = 3

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
    "app.sync.queue": ADAPTER,
    "app.sync.redis": ADAPTER,
    "app.sync.group_commit": ADAPTER,
    "app.sync.localfs": ADAPTER,
    # Services: indexing, the sync and its sweep, search and ranking, who may read what.
    "app.store.indexing": SERVICE,
    "app.sync": SERVICE,
    "app.libraries": SERVICE,
    "app.libraries.maven": ADAPTER,
    "app.search": SERVICE,
    "app.auth": SERVICE,
    # Entry points and the composition root: app/'s own modules, the webhook receiver, MCP.
    "app.deps": SERVICE,
    "app.supervisor": SERVICE,
    "app.schemas": SERVICE,
    "app.openapi": SERVICE,
    "app.web": ENTRY,
    "app.admin": ENTRY,
    "app.admin_client": SERVICE,
    "app.cli": ENTRY,
    "app.doctor": ENTRY,
    "app.system_hook": SERVICE,
    "app.worker": ENTRY,
    "app.api": ENTRY,
    "app.admin_rebuild": ENTRY,
    "app.rebuild_cli": ENTRY,
    "app.scrape": SERVICE,
    "app.local_api": ENTRY,
    "app.local_socket": ADAPTER,
    "app.agent_hooks": SERVICE,
    "app.agent_install": SERVICE,
    "app.worker_health": ADAPTER,
    "hooks": ENTRY,
    "mcp_server": ENTRY,
}
COMPOSERS = frozenset({"app.web", "app.cli"})


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
    """What `name` imports that sits above it, or is another package's entry point it does not compose."""
    own = level_of(name)
    assert own is not None, name
    wrong = []
    for target in sorted(imports):
        found = level_of(target)
        if found is None:
            continue  # third-party
        _, level = found
        crosses_entry = level == own[1] == ENTRY and name not in COMPOSERS and not _same_package(name, target)
        if level > own[1] or crosses_entry:
            wrong.append(target)
    return wrong


def _same_package(a: str, b: str) -> bool:
    return a.split(".")[0] == b.split(".")[0] and a.split(".")[0] != "app"


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
    assert upward_imports("app.worker", {"hooks.receiver", "app.sync.deliveries"}) == ["hooks.receiver"]
    assert upward_imports("app.api", {"mcp_server.auth"}) == ["mcp_server.auth"]
    assert upward_imports("app.web", {"hooks.receiver", "mcp_server.server"}) == []
    assert upward_imports("mcp_server.server", {"mcp_server.auth", "app.search.service", "httpx"}) == []
