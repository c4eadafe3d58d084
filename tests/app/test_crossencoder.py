"""The optional cross-encoder against FakeReranker over real loopback HTTP, alone and inside a search."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from pydantic import SecretStr

from app.auth.access import LOCAL
from app.core.settings import QdrantSettings, RerankSettings, Settings
from app.search.crossencoder import CrossEncoder, build_cross_encoder
from app.sync.local_index import index_directory
from entry.deps import open_deps
from testkit.fake_reranker import FakeReranker, overlap
from tests.support.java_fixtures import SHOP_DIR

DOCS = ["pets and owners", "invoice total price", "the total of an invoice, with its price and tax"]


@pytest.fixture
def fake() -> Iterator[FakeReranker]:
    with FakeReranker() as server:
        yield server


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as http:
        yield http


def encoder(fake: FakeReranker, client: httpx.AsyncClient, **fields: object) -> CrossEncoder:
    settings = RerankSettings.model_validate({"base_url": fake.base_url + "/", **fields})
    built = build_cross_encoder(settings, client)
    assert built is not None
    return built


def test_reranking_is_off_without_a_base_url(client: httpx.AsyncClient) -> None:
    assert build_cross_encoder(RerankSettings(), client) is None


async def test_the_best_candidates_are_reordered_by_score(fake: FakeReranker, client: httpx.AsyncClient) -> None:
    reranker = encoder(fake, client, model="tiny-ce", api_key=SecretStr("k"))

    ordered = await reranker.reordered("invoice total price tax", DOCS, str)

    assert ordered == [DOCS[2], DOCS[1], DOCS[0]]
    body = fake.requests[0]
    assert (body["query"], body["documents"], body["model"], body["top_n"]) == (
        "invoice total price tax",
        DOCS,
        "tiny-ce",
        3,
    )
    assert fake.seen_auth == ["Bearer k"]


async def test_only_the_first_candidates_are_sent_and_cut(fake: FakeReranker, client: httpx.AsyncClient) -> None:
    reranker = encoder(fake, client, candidates=2, max_chars=100)
    items = ["a", "invoice " * 40, "invoice total"]

    ordered = await reranker.reordered("invoice", items, str)

    assert fake.requests[0]["documents"] == ["a", ("invoice " * 40)[:100]]
    assert ordered == [items[1], items[0], items[2]]


async def test_a_tei_answer_is_read_too(client: httpx.AsyncClient) -> None:
    with FakeReranker(tei=True) as tei:
        assert await encoder(tei, client).reordered("invoice total price tax", DOCS, str) == [DOCS[2], DOCS[1], DOCS[0]]


@pytest.mark.parametrize("failure", ["status", "garbage", "timeout"])
async def test_an_outage_keeps_the_fused_order(
    fake: FakeReranker, client: httpx.AsyncClient, failure: str, caplog: pytest.LogCaptureFixture
) -> None:
    if failure == "status":
        fake.status = 503
    elif failure == "garbage":
        fake.garbage = True
    else:
        fake.delay_s = 1.0
    reranker = encoder(fake, client, timeout_s=0.2)

    started = time.perf_counter()
    assert await reranker.reordered("invoice total price tax", DOCS, str) == DOCS
    assert time.perf_counter() - started < 0.9
    assert "keeping the fused order" in caplog.text


async def test_a_search_returns_the_cross_encoders_order(fake: FakeReranker) -> None:
    question = "which owner has pets with visits"
    settings = Settings(qdrant=QdrantSettings(path=":memory:"), rerank=RerankSettings(base_url=fake.base_url))
    async with open_deps(settings) as deps:
        await index_directory(deps, SHOP_DIR, "shop")
        reranked = [h.qualified_name for h in await deps.search.search(LOCAL, question, limit=5)]
        cross_encoder, deps.search.cross_encoder = deps.search.cross_encoder, None
        fused = [h.qualified_name for h in await deps.search.search(LOCAL, question, limit=40)]
        deps.search.cross_encoder = cross_encoder

    (body,) = fake.requests
    documents = body["documents"]
    assert len(documents) == min(20, len(fused)) and all("\n---\n" in d for d in documents)
    # What the embedding model reads (`render.model_text`): the dotted place lines stay with the lexical index.
    assert not any(
        line.startswith(("repository: ", "package: ", "symbol: ")) for d in documents for line in d.split("\n")
    )
    scores = [overlap(question, d) for d in documents]
    expected = sorted(range(len(documents)), key=lambda i: -scores[i])[:5]
    assert reranked == [fused[i] for i in expected]
    assert reranked != fused[:5]  # the question is one whose fused order the fake changes
