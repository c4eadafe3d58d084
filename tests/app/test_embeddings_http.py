"""OpenAIEmbedder against FakeEmbeddingServer over real loopback HTTP."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from pydantic import SecretStr

from app.core.errors import EmbeddingAuthError, EmbeddingModelError
from app.core.settings import EmbeddingSettings
from app.store.embeddings import OpenAIEmbedder
from testkit.fake_embedder import FakeEmbeddingServer, fake_tokens, fake_vector

KEY = "sk-fake"


class Sleeps(list[float]):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def server() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(dim=64, api_key=KEY, model="fake-embed") as srv:
        yield srv


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def settings(server: FakeEmbeddingServer, **overrides: object) -> EmbeddingSettings:
    fields: dict[str, object] = {
        "base_url": server.base_url + "/",
        "api_key": SecretStr(KEY),
        "model": "fake-embed",
        "batch_size": 4,
        **overrides,
    }
    return EmbeddingSettings.model_validate(fields)


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_fake_vectors_are_unit_length_and_share_identifiers() -> None:
    query = fake_vector("findOrderById", 64)
    related = fake_vector("Order findOrderById(long id)", 64)
    unrelated = fake_vector("void sendInvoiceEmail(Customer c)", 64)

    assert math.isclose(cosine(query, query), 1.0)
    assert fake_tokens("getHTTPClient2") == ["gethttpclient2", "get", "http", "client", "2"]
    assert cosine(query, related) > cosine(query, unrelated)
    assert fake_vector("", 4) == [1.0, 0.0, 0.0, 0.0]


async def test_embeds_over_http_in_order(server: FakeEmbeddingServer, client: httpx.AsyncClient) -> None:
    texts = [f"public class Widget{i} {{ int size{i}; }}" for i in range(10)]
    embedder = OpenAIEmbedder(settings(server), client)

    vectors = await embedder.embed(texts)

    assert vectors == [fake_vector(t, 64) for t in texts]
    assert await embedder.dimension() == 64
    assert server.calls == 3
    assert server.inputs_total == 10
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


async def test_requested_dimensions_are_served(server: FakeEmbeddingServer, client: httpx.AsyncClient) -> None:
    vectors = await OpenAIEmbedder(settings(server, dimensions=16), client).embed(["a b"])

    assert len(vectors[0]) == 16


async def test_recovers_from_429_with_retry_after(server: FakeEmbeddingServer, client: httpx.AsyncClient) -> None:
    server.fail_next(2, status=429, retry_after="1")
    sleeps = Sleeps()

    vectors = await OpenAIEmbedder(settings(server), client, sleep=sleeps).embed(["hello world"])

    assert vectors == [fake_vector("hello world", 64)]
    assert sleeps == [1.0, 1.0]
    assert server.calls == 3


async def test_context_length_refusal_over_http(server: FakeEmbeddingServer, client: httpx.AsyncClient) -> None:
    server.max_input_chars = 30
    embedder = OpenAIEmbedder(settings(server), client)

    vectors = await embedder.embed(["x" * 50, "short"])

    assert len(vectors) == 2
    assert server.requests[-1].inputs == ["x" * 25, "short"]
    assert embedder.truncated == 1


async def test_wrong_key_is_an_auth_error(server: FakeEmbeddingServer, client: httpx.AsyncClient) -> None:
    sleeps = Sleeps()
    embedder = OpenAIEmbedder(settings(server, api_key=SecretStr("sk-wrong")), client, sleep=sleeps)

    with pytest.raises(EmbeddingAuthError, match=r"HTTP 401"):
        await embedder.embed(["a"])

    assert server.calls == 1
    assert sleeps == []


async def test_unknown_model_over_http(server: FakeEmbeddingServer, client: httpx.AsyncClient) -> None:
    with pytest.raises(EmbeddingModelError, match="'other'"):
        await OpenAIEmbedder(settings(server, model="other"), client).embed(["a"])


async def test_prefixes_tell_questions_from_documents(server: FakeEmbeddingServer, client: httpx.AsyncClient) -> None:
    embedder = OpenAIEmbedder(settings(server, query_prefix="query: ", document_prefix="passage: "), client)

    documents = await embedder.embed(["Order findOrderById(long id)", ""])
    question = await embedder.embed_query("find an order")

    assert [r.inputs for r in server.requests] == [
        ["passage: Order findOrderById(long id)", "passage: "],
        ["query: find an order"],
    ]
    assert documents[0] == fake_vector("passage: Order findOrderById(long id)", 64)
    assert question == fake_vector("query: find an order", 64)


async def test_without_prefixes_a_question_is_sent_as_it_is(
    server: FakeEmbeddingServer, client: httpx.AsyncClient
) -> None:
    embedder = OpenAIEmbedder(settings(server), client)

    assert await embedder.embed_query("find an order") == fake_vector("find an order", 64)
    assert await embedder.embed([""]) == [fake_vector(" ", 64)]
    assert [r.inputs for r in server.requests] == [["find an order"], [" "]]
