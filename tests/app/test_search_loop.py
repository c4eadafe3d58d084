"""A search's CPU work runs off the event loop: `/healthz` answers while a search's payload reading is stalled.

The store is real (Qdrant Edge in memory); it is seen through `around`, whose records carry payloads that wait
on a gate when read. The search reads them (decoding hits, the hierarchy's declarations) wherever it does its
CPU work: on the event loop, `/healthz` (uvicorn on loopback, served by that loop) could not answer until the
gate opens. A thread asks for `/healthz` once the gate is reached, then opens it; the answer must have come.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any, Final, TypeVar

import httpx
import pytest
import pytest_asyncio
import uvicorn
from qdrant_client import models as qm
from starlette.applications import Starlette
from starlette.routing import Route

from app.auth.access import LOCAL
from app.search.service import SearchService
from app.store.engines import Store
from app.store.vectors import IndexModel
from entry.web import healthz
from testkit.standins import Method, around
from tests.support.engines import memory_store, write_sources

pytestmark = pytest.mark.asyncio(loop_scope="module")

P = TypeVar("P", qm.Record, qm.ScoredPoint)

REPO: Final = "team/app"
PATIENCE_S: Final = 60.0  # the longest any wait here lasts; every one ends as soon as its condition holds
SOURCE: Final = """\
package demo.shop;

public class Basket {{
    private final Prices prices{i};

    Basket(Prices prices) {{ this.prices{i} = prices; }}

    /** The total of the basket, with every price looked up. */
    public long total{i}(String item) {{
        return prices{i}.priceOf(item) + prices{i}.tax(item);
    }}
}}
"""
QUESTION: Final = "who calls Prices.priceOf to compute the total of the basket"


class Gate:
    """Holds whoever reads a gated payload until opened; says when the first reader arrived."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.opened = threading.Event()

    def wait(self) -> None:
        self.reached.set()
        self.opened.wait(PATIENCE_S)


class GatedPayload(dict[str, Any]):
    """A payload whose reads wait at the gate."""

    def __init__(self, payload: dict[str, Any], gate: Gate) -> None:
        super().__init__(payload)
        self.gate = gate

    def get(self, key: str, default: Any = None) -> Any:
        self.gate.wait()
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.gate.wait()
        return super().__getitem__(key)


def gated(store: Store, gate: Gate) -> Store:
    """`store` whose answers' payloads (scrolled records, scored points) wait at `gate` when read."""

    def with_gate(point: P) -> P:
        return point.model_copy(update={"payload": GatedPayload(point.payload, gate)}) if point.payload else point

    def scroll(original: Method) -> Method:
        async def gated_scroll(*args: Any, **kwargs: Any) -> AsyncIterator[qm.Record]:
            async for record in original(*args, **kwargs):
                yield with_gate(record)

        return gated_scroll

    def query(original: Method) -> Method:
        async def gated_query(*args: Any, **kwargs: Any) -> list[qm.ScoredPoint]:
            return [with_gate(point) for point in await original(*args, **kwargs)]

        return gated_query

    return around(store, scroll=scroll, query=query)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def store() -> AsyncIterator[Store]:
    edge = memory_store("edge")
    await edge.ensure(IndexModel(embedding_model=None, dimension=None))
    files = [
        (f"src/main/java/demo/shop/Basket{i}.java", SOURCE.format(i=i).replace("Basket", f"Basket{i}"))
        for i in range(20)
    ]
    await write_sources(edge, REPO, files)
    try:
        yield edge
    finally:
        await edge.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def health_url() -> AsyncIterator[str]:
    """`/healthz` of the service, served by uvicorn on this test's event loop."""
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=[Route("/healthz", healthz)]), port=0, log_level="warning"))
    serving = asyncio.create_task(server.serve())
    async with asyncio.timeout(PATIENCE_S):
        while not server.started:
            await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/healthz"
    finally:
        server.should_exit = True
        await serving


def probe_when_reached(gate: Gate, url: str, answers: list[int]) -> Iterator[threading.Thread]:
    """A thread that, once the gate is reached, asks `url` once (its status into `answers`), then opens the gate."""

    def probe() -> None:
        try:
            if gate.reached.wait(PATIENCE_S):
                answers.append(httpx.get(url, timeout=10).status_code)
        except httpx.TransportError:
            answers.append(0)
        finally:
            gate.opened.set()

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    yield thread
    thread.join(PATIENCE_S)


async def test_healthz_answers_while_a_search_reads_its_payloads(store: Store, health_url: str) -> None:
    expected = await SearchService(store, None).search(LOCAL, QUESTION, limit=10)
    gate, answers = Gate(), list[int]()
    search = SearchService(gated(store, gate), None)

    for _ in probe_when_reached(gate, health_url, answers):
        found = await search.search(LOCAL, QUESTION, limit=10)

    assert answers == [200]
    assert len(found) == 10
    assert [(h.id, h.score) for h in found] == [(h.id, h.score) for h in expected]


async def test_exact_lookups_read_their_payloads_off_the_loop_too(store: Store, health_url: str) -> None:
    expected = await SearchService(store, None).callers(LOCAL, "Prices.priceOf")
    gate, answers = Gate(), list[int]()
    search = SearchService(gated(store, gate), None)

    for _ in probe_when_reached(gate, health_url, answers):
        found = await search.callers(LOCAL, "Prices.priceOf")

    assert answers == [200]
    assert len(expected) == 20
    assert [h.id for h in found] == [h.id for h in expected]


async def test_searches_beyond_the_bound_wait_for_their_turn(store: Store) -> None:
    """With `max_concurrent=1` a second search starts its store reads only once the first has finished."""
    held, in_query, most = asyncio.Event(), [0], [0]

    def query(original: Method) -> Method:
        async def counted(*args: Any, **kwargs: Any) -> list[qm.ScoredPoint]:
            in_query[0] += 1
            most[0] = max(most[0], in_query[0])
            try:
                await held.wait()
                return list(await original(*args, **kwargs))
            finally:
                in_query[0] -= 1

        return counted

    search = SearchService(around(store, query=query), None, max_concurrent=1)
    both = asyncio.gather(*(search.search(LOCAL, QUESTION, limit=5) for _ in range(2)))
    async with asyncio.timeout(PATIENCE_S):
        while in_query[0] == 0:  # the first search is held in its query
            await asyncio.sleep(0.01)
    with pytest.raises(TimeoutError):  # the second would join it here within the second: it waits its turn instead
        async with asyncio.timeout(1.0):
            while in_query[0] < 2:
                await asyncio.sleep(0.01)
    held.set()
    first, second = await both

    assert most[0] == 1
    assert [h.id for h in first] == [h.id for h in second]
