"""The embedded store builds its dense index in the background (`app.store.edge_index`) on a real Edge shard.

The build's process is held at a gate file until the test has searched and written during it, so
"during the build" is certain without timing; every wait polls with a deadline.
"""

from __future__ import annotations

import asyncio
import math
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from qdrant_client import models as qm

from app.core.settings import QdrantSettings
from app.store import filters
from app.store.edge import EdgeStore
from app.store.edge_index import BUILDING, OLD, BuildPolicy, recover
from app.store.engines import open_store
from app.store.lexical import query_vector
from app.store.vectors import DENSE, LEXICAL, IndexModel

MODEL = IndexModel(embedding_model="fake-embed", dimension=4)
ALIAS = "java_code"
DEADLINE_S = 120.0
GATED = (
    "import sys, time, pathlib\n"
    "gate = pathlib.Path(sys.argv[1])\n"
    "deadline = time.monotonic() + 120\n"
    "while not gate.exists() and time.monotonic() < deadline:\n"
    "    time.sleep(0.05)\n"
    "from app.store.edge_optimize import main\n"
    "raise SystemExit(main(sys.argv[2:]))\n"
)


def vector(i: int) -> list[float]:
    """Distinct directions, so a point's own vector finds it first (cosine)."""
    angle = i * 0.7
    return [math.cos(angle), math.sin(angle), math.cos(angle * 0.31), 1.0 + (i % 13) / 7]


def key(i: int) -> str:
    return str(uuid.UUID(int=i + 1))


def point(i: int) -> qm.PointStruct:
    word = f"word{i}"
    sparse = query_vector(word)
    return qm.PointStruct(
        id=key(i),
        vector={DENSE: vector(i), LEXICAL: qm.SparseVector(indices=list(sparse.indices), values=list(sparse.values))},
        payload={"text": word, "n": i},
    )


async def eventually(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        await asyncio.sleep(0.05)


async def nearest(store: EdgeStore, i: int) -> str:
    found = await store.query(lexical=None, dense=vector(i), where=None, limit=3)
    return str(found[0].id)


def gated(store: EdgeStore, gate: Path) -> None:
    store.builds.optimizer = [sys.executable, "-c", GATED, str(gate)]


async def test_writes_past_the_threshold_build_the_index_in_the_background_and_keep_writes_made_meanwhile(
    tmp_path: Path,
) -> None:
    store = EdgeStore(
        str(tmp_path), ALIAS, indexing_threshold_kb=1, builds=BuildPolicy(threshold=100, journal_max=10_000)
    )
    gate = tmp_path / "gate"
    gated(store, gate)
    try:
        await store.ensure(MODEL)
        await store.upsert([point(i) for i in range(300)])  # batches of 64: the build starts after 128
        await eventually(lambda: store.builds.journaling, "the build copied the shard")
        name = store.builds.state.running
        assert name == await store.target()

        # During the build: searches answer from the live shard, and writes go on.
        assert await nearest(store, 42) == key(42)
        hits = await store.query(lexical=query_vector("word7"), dense=None, where=None, limit=3)
        assert str(hits[0].id) == key(7)
        assert await store.count() == 300
        await store.upsert([point(1000)])
        await store.delete_ids([key(5)])
        await store.set_payloads({key(6): {"text": "renamed", "n": 6}})
        assert await nearest(store, 1000) == key(1000)
        assert store.builds.state.completed == 0  # the gate still holds the build

        gate.touch()
        await eventually(lambda: store.builds.state.completed == 1, "the build completed")
        await store.builds.wait()

        assert store.builds.state.running is None and store.builds.state.failed == 0
        assert (await store._shard()).info().indexed_vectors_count > 300  # dense vectors indexed, not only lexical
        assert await store.count() == 300  # 300 + 1 written - 1 deleted during the build
        assert await nearest(store, 1000) == key(1000)
        assert await nearest(store, 42) == key(42)
        assert await store.retrieve([key(5)], ["text"]) == []
        assert [r.payload for r in await store.retrieve([key(6)], ["text", "n"])] == [{"text": "renamed", "n": 6}]
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(ALIAS)) == [
            f"{name}",
            f"{name}.model.json",
        ]
    finally:
        gate.touch()
        await store.close()

    reopened = EdgeStore(str(tmp_path), ALIAS)  # the swapped-in folder is what the alias opens
    try:
        assert await reopened.count() == 300
        assert await nearest(reopened, 1000) == key(1000)
        assert [r.payload for r in await reopened.retrieve([key(6)], ["text", "n"])] == [{"text": "renamed", "n": 6}]
    finally:
        await reopened.close()


async def test_a_build_outrun_by_writes_is_given_up_and_the_writes_stay(tmp_path: Path) -> None:
    store = EdgeStore(str(tmp_path), ALIAS, indexing_threshold_kb=1, builds=BuildPolicy(threshold=100, journal_max=10))
    gate = tmp_path / "gate"
    gated(store, gate)
    try:
        await store.ensure(MODEL)
        await store.upsert([point(i) for i in range(200)])
        await eventually(lambda: store.builds.journaling, "the build copied the shard")
        name = store.builds.state.running
        await store.upsert([point(i) for i in range(1000, 1020)])  # 20 points: past the journal's 10

        await eventually(lambda: store.builds.state.abandoned == 1, "the build was given up")
        await store.builds.wait()
        assert store.builds.state.completed == 0
        assert not (tmp_path / f"{name}{BUILDING}").exists()
        assert await store.count() == 220
        assert await nearest(store, 1019) == key(1019)
        assert (await store.count(filters.everything())) == 220
    finally:
        gate.touch()
        await store.close()


async def test_a_shard_without_its_index_gets_one_when_the_serving_store_opens_it(tmp_path: Path) -> None:
    writer = EdgeStore(str(tmp_path), ALIAS, indexing_threshold_kb=1)  # as `javakb index --no-optimize` leaves it
    try:
        await writer.ensure(MODEL)
        await writer.upsert([point(i) for i in range(200)])
    finally:
        await writer.close()
    store = EdgeStore(str(tmp_path), ALIAS, builds=BuildPolicy(threshold=100, journal_max=10_000))
    try:
        await store.ensure(MODEL)
        await eventually(lambda: store.builds.state.completed == 1, "the build completed")
        await store.builds.wait()
        assert (await store._shard()).info().indexed_vectors_count > 200
        assert await nearest(store, 3) == key(3)
    finally:
        await store.close()


def test_recover_puts_back_the_shard_a_stopped_swap_left(tmp_path: Path) -> None:
    (tmp_path / f"{ALIAS}_1").mkdir()
    (tmp_path / f"{ALIAS}_1" / "half").write_text("the copy, journal not applied")
    (tmp_path / f"{ALIAS}_1{OLD}").mkdir()
    (tmp_path / f"{ALIAS}_1{OLD}" / "whole").write_text("the shard as of the swap")
    (tmp_path / f"{ALIAS}_1{BUILDING}").mkdir()

    recover(tmp_path, f"{ALIAS}_1")

    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{ALIAS}_1"]
    assert [p.name for p in (tmp_path / f"{ALIAS}_1").iterdir()] == ["whole"]


async def test_closing_the_store_during_a_build_stops_it_and_keeps_the_shard_whole(tmp_path: Path) -> None:
    store = EdgeStore(
        str(tmp_path), ALIAS, indexing_threshold_kb=1, builds=BuildPolicy(threshold=100, journal_max=10_000)
    )
    gate = tmp_path / "gate"  # never opened: the build is still waiting when the store closes
    gated(store, gate)
    try:
        await store.ensure(MODEL)
        await store.upsert([point(i) for i in range(200)])
        await eventually(lambda: store.builds.journaling, "the build copied the shard")
        await store.upsert([point(500)])
    finally:
        await store.close()

    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(BUILDING)] == []
    reopened = EdgeStore(str(tmp_path), ALIAS)
    try:
        assert await reopened.count() == 201
        assert await nearest(reopened, 500) == key(500)
    finally:
        await reopened.close()


async def test_only_the_serving_store_builds_in_the_background(tmp_path: Path) -> None:
    settings = QdrantSettings(path=str(tmp_path), engine="edge", collection=ALIAS)
    serving, command = open_store(settings, serving=True), open_store(settings)
    try:
        assert isinstance(serving, EdgeStore) and isinstance(command, EdgeStore)
        assert serving.builds.policy.threshold == settings.index_build.threshold > 0
        assert command.builds.policy.threshold == 0  # `javakb index` ends with its own optimize()
    finally:
        await serving.close()
        await command.close()
