"""A small project written as a git checkout, indexed as `javakb index` indexes it, asked through the MCP tools.

The checkout test modules (tests/mcp_server: Java routes, inferred locals, Kotlin) each build one:
`indexed_checkout` commits the files and indexes them into an in-memory embedded store, `tool_client` serves
those deps to an MCP client as the local user, `checkout_fixtures` makes a module's `deps`/`client` fixture
pair of the two, `call` asks one tool and returns its structured answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from fastmcp import Client
from fastmcp.client.client import CallToolResult

from app.auth.access import LOCAL
from app.core.settings import QdrantSettings, Settings
from app.runtime import Deps
from app.sync.local_index import index_directory
from entry.deps import open_deps
from mcp_server.server import create_server
from testkit.git_repo import GitRepo


@asynccontextmanager
async def indexed_checkout(root: Path, files: Mapping[str, str], repo: str) -> AsyncIterator[Deps]:
    """`files` committed on `main` of a new checkout at `root`, indexed under `repo` into an in-memory store."""
    GitRepo.init(root, "main").commit_files("main", files, f"the files of {repo}", "main")
    async with open_deps(Settings(qdrant=QdrantSettings(path=":memory:"))) as deps:
        await index_directory(deps, root, repo)
        yield deps


@asynccontextmanager
async def tool_client(deps: Deps) -> AsyncIterator[Client[Any]]:
    """An MCP client of a server over `deps`, as the local user."""
    async with Client(create_server(lambda: deps, unauthenticated=LOCAL)) as client:
        yield client


def checkout_fixtures(files: Mapping[str, str], repo: str) -> tuple[object, object]:
    """A module's fixture pair, bound as `deps, client = checkout_fixtures(FILES, REPO)` (pytest finds them by name).

    `deps`: `files` committed and indexed under `repo` once for the module (into a checkout named as the repo's
    last part); `client`: an MCP client over them, one per test. The module's tests run on its event loop
    (`pytestmark = pytest.mark.asyncio(loop_scope="module")`), which module-scoped deps need.
    """
    name = repo.rpartition("/")[2]

    @pytest_asyncio.fixture(scope="module", loop_scope="module")
    async def deps(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Deps]:
        async with indexed_checkout(tmp_path_factory.mktemp(name) / name, files, repo) as opened:
            yield opened

    @pytest_asyncio.fixture(loop_scope="module")
    async def client(deps: Deps) -> AsyncIterator[Client[Any]]:
        async with tool_client(deps) as c:
            yield c

    return deps, client


async def call(client: Client[Any], tool: str, **arguments: Any) -> dict[str, Any]:
    """One tool's structured answer; the call must not be an error."""
    result: CallToolResult = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content
