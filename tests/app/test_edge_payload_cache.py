"""Edge's kept payloads (`app.store.edge_shard.PayloadCache`): the same answers as without them, never stale.

A search reads its candidates' whole payloads; the Edge store keeps the decoded payloads between reads and
forgets them at every write to the generation. Each case compares a store that keeps payloads with one that
keeps none, or checks that a write's effect shows at the next read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio

from app.store import filters
from app.store.edge import EdgeStore
from app.store.edge_shard import LiveShard, PayloadCache
from app.store.lexical import query_vector
from app.store.payloads import repo_payload
from app.store.vectors import IndexModel, chunk_point
from pipeline.model import Chunk
from tests.support.java import chunk_java

SMALL = IndexModel(embedding_model="fake-embed", dimension=4)
QUESTION = "owners findById rename"
SERVICE = """\
package demo.core;

public class OwnerService {
    private final OwnerRepository owners;

    OwnerService(OwnerRepository owners) { this.owners = owners; }

    public Owner find(long id) { return owners.findById(id); }

    public void rename(long id, String name) { owners.findById(id).setName(name); }

    public int countPets(long id) { return owners.findById(id).pets().size(); }
}
"""


def chunks() -> list[Chunk]:
    return list(chunk_java(SERVICE, "core/src/main/java/demo/core/OwnerService.java").chunks)


def dense(i: int) -> list[float]:
    return [1.0, float(i), 0.5, 0.0]


async def opened(keep: int) -> EdgeStore:
    store = EdgeStore(":memory:", "java_code", payload_cache=keep)
    await store.ensure(SMALL)
    await store.upsert([chunk_point(c, dense(i), "t1") for i, c in enumerate(chunks())])
    return store


@pytest_asyncio.fixture
async def store() -> AsyncIterator[EdgeStore]:
    kept = await opened(1024)
    try:
        yield kept
    finally:
        await kept.close()


async def searched(store: EdgeStore) -> list[tuple[str, float, dict[str, Any]]]:
    hits = await store.query(lexical=query_vector(QUESTION), dense=dense(2), where=None, limit=5)
    return [(str(h.id), h.score, dict(h.payload or {})) for h in hits]


async def scrolled(store: EdgeStore) -> dict[str, dict[str, Any]]:
    return {str(r.id): dict(r.payload or {}) async for r in store.scroll(filters.everything(), True, page=2)}


@pytest.fixture
def edge_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of points of each payload read that reached Edge."""
    reads: list[int] = []
    original = LiveShard.retrieve

    def counted(self: LiveShard, ids: list[Any], with_payload: Any, with_vector: Any) -> Any:
        reads.append(len(ids))
        return original(self, ids, with_payload, with_vector)

    monkeypatch.setattr(LiveShard, "retrieve", counted)
    return reads


async def test_kept_payloads_answer_as_edge_does_and_spare_the_second_read(
    store: EdgeStore, edge_reads: list[int]
) -> None:
    plain = await opened(0)
    try:
        first = await searched(store)
        read_first = sum(edge_reads)
        again = await searched(store)

        assert first and again == first == await searched(plain)
        assert await scrolled(store) == await scrolled(plain)
    finally:
        await plain.close()
    assert read_first == len(first)  # the first search read its points from Edge
    assert sum(edge_reads) - read_first > 0  # the store without kept payloads read them again, every time
    cached = sum(edge_reads)
    await searched(store)
    assert sum(edge_reads) == cached  # the kept store read nothing more


async def test_a_lookup_scroll_keeps_what_a_search_reads_later(store: EdgeStore, edge_reads: list[int]) -> None:
    everything = await scrolled(store)
    read = sum(edge_reads)

    found = await searched(store)

    assert read == len(everything) and sum(edge_reads) == read  # the search's points were all kept by the scroll
    assert all(payload == everything[point] for point, _, payload in found)


async def test_every_kind_of_write_shows_at_the_next_read(store: EdgeStore) -> None:
    found = chunks()
    before = await searched(store)
    await scrolled(store)
    everyone = filters.all_of(filters.eq("repo_path", found[0].repo_path))

    await store.set_payload_where(everyone, repo_payload("acme/moved"))
    assert {p["repo_path"] for _, _, p in await searched(store)} == {"acme/moved"}
    assert {p["repo_path"] for p in (await scrolled(store)).values()} == {"acme/moved"}

    rewritten = {**(chunk_point(found[0], None, "t2").payload or {})}
    await store.set_payloads({found[0].id: rewritten})
    assert (await scrolled(store))[found[0].id]["indexed_at"] == "t2"

    gone = before[0][0]
    await store.delete_ids([gone])
    assert gone not in {point for point, _, _ in await searched(store)}
    assert gone not in await scrolled(store)

    again = next(c for c in found if c.id == gone)
    await store.upsert([chunk_point(again, dense(0), "t3")])
    assert (await scrolled(store))[gone]["indexed_at"] == "t3"
    assert {p["indexed_at"] for point, _, p in await searched(store) if point == gone} == {"t3"}

    await store.delete_where(filters.all_of(filters.eq("indexed_at", "t3")))
    assert gone not in await scrolled(store)
    assert gone not in {point for point, _, _ in await searched(store)}


async def test_a_new_generation_does_not_answer_the_old_ones_payloads(store: EdgeStore) -> None:
    await searched(store)
    building = await store.create_generation(SMALL)
    moved = [chunk_point(c, dense(i), "t2") for i, c in enumerate(chunks())]
    await store.upsert(moved, collection=building)
    await store.drop_collection(await store.switch_alias(building) or "")

    assert {p["indexed_at"] for _, _, p in await searched(store)} == {"t2"}


@dataclass
class Stored:
    id: str
    payload: dict[str, Any]


class Shard:
    """A stand-in for `LiveShard.retrieve`, counting what it is asked."""

    def __init__(self, points: Sequence[str]) -> None:
        self.points = {p: {"name": p} for p in points}
        self.asked: list[list[str]] = []

    def retrieve(self, ids: list[str], with_payload: Any, with_vector: Any) -> list[Stored]:
        self.asked.append(list(ids))
        return [Stored(i, self.points[i]) for i in ids if i in self.points]


def test_the_least_recently_read_payload_goes_first_and_batches_are_bounded() -> None:
    shard = Shard(["a", "b", "c", "d"])
    cache = PayloadCache(2, read_batch=2)
    live: Any = shard

    assert cache.read(live, ["a", "b", "c", "gone"]) == {p: {"name": p} for p in "abc"}
    assert shard.asked == [["a", "b"], ["c", "gone"]]
    assert len(cache) == 2  # b and c
    assert cache.read(live, ["b", "a"]) == {"b": {"name": "b"}, "a": {"name": "a"}}
    assert shard.asked[-1] == ["a"]  # b was kept, a was not
    cache.read(live, ["c"])
    assert shard.asked[-1] == ["c"]  # reading b then a made c the oldest: it went
    cache.clear()
    assert len(cache) == 0


def test_a_cache_of_no_points_keeps_nothing() -> None:
    shard = Shard(["a"])
    cache = PayloadCache(0, read_batch=64)
    live: Any = shard

    cache.read(live, ["a"])
    cache.read(live, ["a"])

    assert shard.asked == [["a"], ["a"]] and len(cache) == 0


def test_each_read_gets_its_own_payload() -> None:
    shard = Shard(["a"])
    cache = PayloadCache(4, read_batch=64)
    live: Any = shard

    cache.read(live, ["a"])["a"]["name"] = "changed by a reader"

    assert cache.read(live, ["a"]) == {"a": {"name": "a"}} and shard.asked == [["a"]]  # kept, and kept as read
