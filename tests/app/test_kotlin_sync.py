"""Service mode indexes Kotlin (issue 29): a GitLab push of `src/main/kotlin` files, then an edit of one.

Fake GitLab over real git, real PostgreSQL/Redis/arq workers, embedded Qdrant (testkit/sync_env.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Final

import pytest_asyncio

from testkit.sync_env import SyncEnv, sync_env
from tests.app.test_sync_scenarios import SRC
from tests.support.sources import repo_service_java as service

KT: Final = "src/main/kotlin/com/acme/Vets.kt"
VETS: Final = """package com.acme

@RestController
class VetController(private val vets: VetRepository) {
    @GetMapping("/vets")
    fun list(): List<Vet> = vets.findAll()
}
"""


@pytest_asyncio.fixture
async def env(tmp_path: Path, clean_db: str, clean_redis: str) -> AsyncIterator[SyncEnv]:
    async with sync_env(tmp_path, clean_db, clean_redis) as e:
        yield e


async def test_a_push_indexes_kotlin_beside_java_and_an_edit_reindexes_only_what_changed(env: SyncEnv) -> None:
    project = env.gitlab.create_project("acme/vets")
    await env.push(project, {SRC + "A.java": service("A"), KT: VETS, "src/test/kotlin/com/acme/VetsTest.kt": VETS})
    await env.work()
    await env.audit(project)
    points = await env.points(project.id)
    kotlin = {p["qualified_name"]: p for p in points.values() if p["language"] == "kotlin"}
    assert set(kotlin) == {
        "com.acme.VetController",
        "com.acme.VetController.VetController",
        "com.acme.VetController.list",
    }
    assert kotlin["com.acme.VetController.list"]["http_path"] == ["/vets"]
    assert {p["file_path"] for p in points.values()} == {SRC + "A.java", KT}
    changed = {"com.acme.VetController", "com.acme.VetController.list"}  # the handler and its type's skeleton
    unchanged = {i: p["content_hash"] for i, p in points.items() if p["qualified_name"] not in changed}
    await env.push(project, {KT: VETS.replace('"/vets"', '"/vets/all"')})
    await env.work()
    await env.audit(project)
    after = await env.points(project.id)
    assert {i: p["content_hash"] for i, p in after.items() if p["qualified_name"] not in changed} == unchanged
    [handler] = [p for p in after.values() if p["name"] == "list"]
    assert handler["http_path"] == ["/vets/all"]
