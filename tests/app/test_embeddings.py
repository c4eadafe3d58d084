from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator, Callable
from email.utils import formatdate
from typing import Any

import httpx
import pytest
import respx
from pydantic import SecretStr

from app.core.embedded import CODE_TOKENS_MODEL
from app.core.errors import (
    EmbeddingAuthError,
    EmbeddingDimensionError,
    EmbeddingError,
    EmbeddingModelError,
    EmbeddingUnavailableError,
)
from app.core.settings import EmbeddingSettings
from app.store.distilled import DistilledEmbedder
from app.store.embeddings import (
    OpenAIEmbedder,
    backoff_s,
    build_embedder,
    embeddings_url,
    estimate_tokens,
    plan_batches,
    retry_after_s,
)
from app.store.static_embedder import StaticEmbedder
from testkit.fake_embedder import fake_vector

BASE = "http://embed.test/v1"
URL = f"{BASE}/embeddings"
NOW = 1_700_000_000.0
DIM = 8


class Sleeps(list[float]):
    """The injected sleep: records each requested delay instead of waiting."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def inputs_of(request: httpx.Request) -> list[str]:
    body = json.loads(request.content)
    assert isinstance(body, dict)
    return list(body["input"])


def ok(request: httpx.Request, dim: int = DIM) -> httpx.Response:
    """An OpenAI-style answer, listed in reverse order to prove the client sorts by `index`."""
    data = [
        {"object": "embedding", "index": i, "embedding": fake_vector(t, dim)} for i, t in enumerate(inputs_of(request))
    ]
    return httpx.Response(200, json={"object": "list", "data": data[::-1], "model": "m", "usage": {}})


def ok_with(dim: int) -> Callable[[httpx.Request], httpx.Response]:
    return lambda request: ok(request, dim=dim)


Step = httpx.Response | type[httpx.RequestError] | Callable[[httpx.Request], httpx.Response]


def replies(*steps: Step) -> Callable[[httpx.Request], httpx.Response]:
    """A side effect answering successive requests with `steps`: a response, an exception to raise, or a handler."""
    queue = deque(steps)

    def reply(request: httpx.Request) -> httpx.Response:
        step = queue.popleft()
        if isinstance(step, httpx.Response):
            return step
        if isinstance(step, type):
            raise step("mocked failure", request=request)
        return step(request)

    return reply


def error(status: int, message: str, **headers: str) -> httpx.Response:
    return httpx.Response(status, json={"error": {"message": message, "type": "x", "code": None}}, headers=headers)


@pytest.fixture
def router() -> respx.Router:
    return respx.Router(assert_all_called=False)


@pytest.fixture
async def client(router: respx.Router) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.MockTransport(router.async_handler)) as client:
        yield client


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def make(client: httpx.AsyncClient, sleeps: Sleeps) -> Callable[..., OpenAIEmbedder]:
    def _make(**overrides: Any) -> OpenAIEmbedder:
        fields: dict[str, Any] = {"base_url": BASE, "api_key": SecretStr("sk-test"), "model": "m", **overrides}
        return OpenAIEmbedder(EmbeddingSettings(**fields), client, sleep=sleeps, jitter=lambda: 0.0, clock=lambda: NOW)

    return _make


# Pure decisions


def test_estimate_tokens_is_three_chars_per_token_plus_one() -> None:
    assert [estimate_tokens(""), estimate_tokens("ab"), estimate_tokens("abcdef")] == [1, 1, 3]


def batches(tokens: list[int], *, batch_size: int, max_batch_tokens: int) -> list[list[int]]:
    return [list(r) for r in plan_batches(tokens, batch_size=batch_size, max_batch_tokens=max_batch_tokens)]


def test_plan_batches_by_count_and_tokens() -> None:
    assert batches([1] * 5, batch_size=2, max_batch_tokens=100) == [[0, 1], [2, 3], [4]]
    assert batches([4, 4, 4, 9, 1], batch_size=10, max_batch_tokens=8) == [[0, 1], [2], [3], [4]]
    assert batches([], batch_size=2, max_batch_tokens=8) == []


def test_retry_after_accepts_seconds_and_http_dates() -> None:
    assert retry_after_s("3", NOW) == 3.0
    assert retry_after_s(formatdate(NOW + 7, usegmt=True), NOW) == 7.0
    assert retry_after_s(formatdate(NOW - 7, usegmt=True), NOW) == 0.0
    assert retry_after_s("soon", NOW) is None
    assert retry_after_s(None, NOW) is None


def test_backoff_grows_exponentially_up_to_the_cap_with_jitter() -> None:
    assert [backoff_s(n, cap=3.0, jitter=0.0) for n in (1, 2, 3, 4, 5)] == [0.25, 0.5, 1.0, 1.5, 1.5]
    assert backoff_s(1, cap=30, jitter=0.999) < 0.5


def test_embeddings_url_handles_trailing_slash_and_azure_query() -> None:
    assert str(embeddings_url("http://h/v1/")) == "http://h/v1/embeddings"
    assert str(embeddings_url("https://a.example/openai/deployments/d?api-version=2024-02-01")) == (
        "https://a.example/openai/deployments/d/embeddings?api-version=2024-02-01"
    )


# The client against respx


async def test_vectors_come_back_in_input_order_across_batches(
    router: respx.Router, make: Callable[..., OpenAIEmbedder]
) -> None:
    route = router.post(URL).mock(side_effect=ok)
    texts = [f"class Item{i} extends Base{i % 3}" for i in range(10)]

    vectors = await make(batch_size=3).embed(texts)

    assert vectors == [fake_vector(t, DIM) for t in texts]
    assert sorted(len(inputs_of(call.request)) for call in route.calls) == [1, 3, 3, 3]


async def test_request_carries_model_auth_and_dimensions(
    router: respx.Router, make: Callable[..., OpenAIEmbedder]
) -> None:
    route = router.post(URL).mock(side_effect=ok)

    await make(dimensions=DIM).embed(["a"])

    request = route.calls.last.request
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["api-key"] == "sk-test"
    assert json.loads(request.content) == {"model": "m", "input": ["a"], "encoding_format": "float", "dimensions": DIM}


async def test_batches_are_split_by_estimated_tokens(router: respx.Router, make: Callable[..., OpenAIEmbedder]) -> None:
    route = router.post(URL).mock(side_effect=ok)
    texts = ["x" * 30] * 5  # 11 estimated tokens each: two fit in 25

    await make(batch_size=100, max_batch_tokens=25).embed(texts)

    assert sorted(len(inputs_of(call.request)) for call in route.calls) == [1, 2, 2]


async def test_oversized_input_is_truncated_before_sending(
    router: respx.Router, make: Callable[..., OpenAIEmbedder]
) -> None:
    route = router.post(URL).mock(side_effect=ok)
    embedder = make(max_input_tokens=16)

    await embedder.embed(["short", "y" * 100])

    assert inputs_of(route.calls.last.request) == ["short", "y" * 48]
    assert embedder.truncated == 1


async def test_context_length_refusal_halves_the_longest_and_retries_once(
    router: respx.Router, make: Callable[..., OpenAIEmbedder]
) -> None:
    too_long = error(400, "This model's maximum context length is 8192 tokens, however you requested 9000 tokens")
    route = router.post(URL).mock(side_effect=replies(too_long, ok))
    embedder = make()

    vectors = await embedder.embed(["a" * 40, "b" * 10])

    assert inputs_of(route.calls.last.request) == ["a" * 20, "b" * 10]
    assert len(vectors) == 2
    assert embedder.truncated == 1


async def test_context_length_refused_twice_is_an_error(
    router: respx.Router, make: Callable[..., OpenAIEmbedder]
) -> None:
    router.post(URL).mock(return_value=error(413, "Input validation error: `inputs` must have less than 512 tokens"))

    with pytest.raises(EmbeddingError, match="still too long"):
        await make().embed(["a" * 40])


async def test_429_honours_retry_after_seconds_and_dates(
    router: respx.Router, make: Callable[..., OpenAIEmbedder], sleeps: Sleeps
) -> None:
    router.post(URL).mock(
        side_effect=replies(
            error(429, "slow down", **{"Retry-After": "3"}),
            error(429, "slow down", **{"Retry-After": formatdate(NOW + 7, usegmt=True)}),
            ok,
        )
    )

    vectors = await make().embed(["a"])

    assert vectors == [fake_vector("a", DIM)]
    assert sleeps == [3.0, 7.0]


async def test_retry_after_is_capped_by_max_backoff(
    router: respx.Router, make: Callable[..., OpenAIEmbedder], sleeps: Sleeps
) -> None:
    router.post(URL).mock(side_effect=replies(error(429, "later", **{"Retry-After": "3600"}), ok))

    await make(max_backoff_s=30).embed(["a"])

    assert sleeps == [30.0]


async def test_server_errors_back_off_exponentially_then_succeed(
    router: respx.Router, make: Callable[..., OpenAIEmbedder], sleeps: Sleeps
) -> None:
    router.post(URL).mock(
        side_effect=replies(error(500, "oops"), error(502, "bad gateway"), error(524, "cloudflare"), ok)
    )

    vectors = await make().embed(["a"])

    assert vectors == [fake_vector("a", DIM)]
    assert sleeps == [0.25, 0.5, 1.0]


@pytest.mark.parametrize("failure", [httpx.ReadTimeout, httpx.ConnectTimeout, httpx.ConnectError])
async def test_timeouts_and_connection_errors_are_retried(
    router: respx.Router, make: Callable[..., OpenAIEmbedder], sleeps: Sleeps, failure: type[httpx.RequestError]
) -> None:
    route = router.post(URL).mock(side_effect=replies(failure, ok))

    vectors = await make().embed(["a"])

    assert vectors == [fake_vector("a", DIM)]
    assert route.call_count == 2
    assert sleeps == [0.25]


async def test_retries_exhausted_raise_unavailable(
    router: respx.Router, make: Callable[..., OpenAIEmbedder], sleeps: Sleeps
) -> None:
    route = router.post(URL).mock(return_value=error(503, "overloaded"))

    with pytest.raises(EmbeddingUnavailableError, match=r"after 3 attempts; last: HTTP 503: overloaded"):
        await make(max_retries=2).embed(["a"])

    assert route.call_count == 3
    assert len(sleeps) == 2


@pytest.mark.parametrize("status", [401, 403])
async def test_refused_key_is_an_auth_error_without_retry(
    router: respx.Router, make: Callable[..., OpenAIEmbedder], sleeps: Sleeps, status: int
) -> None:
    route = router.post(URL).mock(return_value=error(status, "Incorrect API key provided"))

    with pytest.raises(EmbeddingAuthError, match=rf"refused the API key \(HTTP {status}\)"):
        await make().embed(["a"])

    assert route.call_count == 1
    assert sleeps == []


@pytest.mark.parametrize(
    "response",
    [
        error(404, "The model `nope` does not exist or you do not have access to it."),
        error(400, "model 'nope' not found, try pulling it first"),
    ],
)
async def test_unknown_model_is_a_model_error(
    router: respx.Router, make: Callable[..., OpenAIEmbedder], response: httpx.Response
) -> None:
    route = router.post(URL).mock(return_value=response)

    with pytest.raises(EmbeddingModelError, match="'nope'"):
        await make(model="nope").embed(["a"])

    assert route.call_count == 1


async def test_other_client_errors_are_not_retried(router: respx.Router, make: Callable[..., OpenAIEmbedder]) -> None:
    route = router.post(URL).mock(return_value=error(422, "input must be a list"))

    with pytest.raises(EmbeddingError, match="HTTP 422: input must be a list"):
        await make().embed(["a"])

    assert route.call_count == 1


async def test_vectors_of_another_size_than_configured(
    router: respx.Router, make: Callable[..., OpenAIEmbedder]
) -> None:
    router.post(URL).mock(side_effect=ok_with(4))

    with pytest.raises(EmbeddingDimensionError, match=r"4 dimensions, expected 8"):
        await make(dimensions=8).embed(["a"])


async def test_vectors_of_another_size_than_earlier_batches(
    router: respx.Router, make: Callable[..., OpenAIEmbedder]
) -> None:
    router.post(URL).mock(side_effect=replies(ok_with(4), ok_with(5)))

    with pytest.raises(EmbeddingDimensionError, match=r"5 dimensions, expected 4"):
        await make(batch_size=1, concurrency=1).embed(["a", "b"])


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (httpx.Response(200, text="<html>proxy</html>"), "malformed"),
        (httpx.Response(200, json={"data": [{"index": 0}]}), "malformed"),
        (httpx.Response(200, json={"data": []}), "0 vectors for 1 inputs"),
    ],
)
async def test_malformed_answers_are_embedding_errors(
    router: respx.Router, make: Callable[..., OpenAIEmbedder], response: httpx.Response, message: str
) -> None:
    router.post(URL).mock(return_value=response)

    with pytest.raises(EmbeddingError, match=message):
        await make().embed(["a"])


async def test_concurrency_bounds_requests_in_flight(router: respx.Router, make: Callable[..., OpenAIEmbedder]) -> None:
    in_flight, peak = 0, 0

    async def slow_ok(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        for _ in range(5):  # let every other pending batch try to start
            await asyncio.sleep(0)
        in_flight -= 1
        return ok(request)

    route = router.post(URL).mock(side_effect=slow_ok)

    vectors = await make(batch_size=1, concurrency=2).embed([f"t{i}" for i in range(8)])

    assert len(vectors) == 8
    assert route.call_count == 8
    assert peak == 2


async def test_dimension_is_configured_or_probed_once(
    router: respx.Router, make: Callable[..., OpenAIEmbedder]
) -> None:
    route = router.post(URL).mock(side_effect=ok)

    assert await make(dimensions=DIM).dimension() == DIM
    assert route.call_count == 0

    embedder = make()
    assert await embedder.dimension() == DIM
    assert await embedder.dimension() == DIM
    assert route.call_count == 1


async def test_empty_input_sends_nothing(router: respx.Router, make: Callable[..., OpenAIEmbedder]) -> None:
    route = router.post(URL).mock(side_effect=ok)

    assert await make().embed([]) == []
    assert route.call_count == 0


async def test_the_provider_decides_the_embedder_and_only_none_is_lexical_only(client: httpx.AsyncClient) -> None:
    assert isinstance(build_embedder(EmbeddingSettings(), client), DistilledEmbedder)  # the default
    assert isinstance(build_embedder(EmbeddingSettings(base_url=BASE), client), OpenAIEmbedder)
    embedded = EmbeddingSettings(base_url=BASE, provider="embedded")
    assert isinstance(build_embedder(embedded, client), DistilledEmbedder)
    code_tokens = EmbeddingSettings(provider="embedded", embedded_model=CODE_TOKENS_MODEL)
    assert isinstance(build_embedder(code_tokens, client), StaticEmbedder)
    assert build_embedder(EmbeddingSettings(provider="none"), client) is None
    assert build_embedder(EmbeddingSettings(provider="none", base_url=BASE), client) is None
    with pytest.raises(ValueError, match="base_url"):
        OpenAIEmbedder(EmbeddingSettings(), client)
    with pytest.raises(ValueError, match="needs base_url"):
        EmbeddingSettings(provider="endpoint")
