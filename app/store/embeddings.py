"""Dense vectors from an OpenAI-compatible `POST {base_url}/embeddings` endpoint.

OpenAI, Azure-style gateways, Ollama, vLLM, TEI and LM Studio all serve the same request
(`{"model", "input": [...], "dimensions"?, "encoding_format": "float"}`) and answer
`{"data": [{"index", "embedding"}], ...}`. Inputs are cut into batches by count and by an estimate
of their tokens, sent with bounded concurrency and retried on transient failures; every other
failure becomes one of the `EmbeddingError` subclasses of `app.core.errors`.

Token counts are *estimated* as `len(text) // 3 + 1`: no tokenizer is shared by every server, and
three characters per token is on the safe side for Java source. When a server still finds an input
too long, the longest inputs of that batch are halved and the batch is sent once more.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Executor
from datetime import UTC
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Protocol

import httpx

from app.core import metrics
from app.core.embedded import CODE_TOKENS_MODEL
from app.core.errors import (
    EmbeddingAuthError,
    EmbeddingDimensionError,
    EmbeddingError,
    EmbeddingModelError,
    EmbeddingUnavailableError,
)
from app.core.settings import EmbeddingSettings

logger = logging.getLogger(__name__)

CHARS_PER_TOKEN = 3
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, *range(520, 531)})  # 520-530: Cloudflare's origin errors
_RETRY_EXCEPTIONS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
_BASE_BACKOFF_S = 0.5
_PROBE_TEXT = "dimension"
# OpenAI/vLLM: "maximum context length is 8192 tokens"; TEI (HTTP 413): "`inputs` must have less than 512 tokens";
# Ollama: "input length exceeds the context length"; llama.cpp: "tokens exceed n_ctx_per_seq".
_TOO_LONG = re.compile(
    r"context[ _](length|window)|must have less than|too long|n_ctx|tokens per request|input length", re.IGNORECASE
)
_TOO_LONG_STATUSES = frozenset({400, 413, 422})


class Embedder(Protocol):
    """Turns texts into vectors of one fixed size."""

    model: str

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text (chunk texts), in input order."""
        ...

    async def embed_query(self, text: str) -> list[float]:
        """The vector of a question (asymmetric models embed questions differently from documents)."""
        ...

    async def dimension(self) -> int:
        """The size of every vector this embedder returns."""
        ...


class _ContextLengthError(EmbeddingError):
    """The server found an input of the batch longer than the model's context."""


def estimate_tokens(text: str) -> int:
    """A cheap, tokenizer-free upper estimate: three characters per token, plus one."""
    return len(text) // CHARS_PER_TOKEN + 1


def plan_batches(tokens: Sequence[int], *, batch_size: int, max_batch_tokens: int) -> list[range]:
    """Consecutive index ranges holding at most `batch_size` items and `max_batch_tokens` estimated tokens.

    An item that alone exceeds `max_batch_tokens` gets a batch of its own.
    """
    batches: list[range] = []
    start, total = 0, 0
    for i, count in enumerate(tokens):
        if i > start and (i - start >= batch_size or total + count > max_batch_tokens):
            batches.append(range(start, i))
            start, total = i, 0
        total += count
    if start < len(tokens):
        batches.append(range(start, len(tokens)))
    return batches


def halve_longest(texts: Sequence[str]) -> list[str]:
    """Cut every text longer than half the longest one down to that half."""
    limit = max(1, max(len(t) for t in texts) // 2)
    return [t[:limit] for t in texts]


def retry_after_s(value: str | None, now: float) -> float | None:
    """Seconds to wait from a `Retry-After` header: delay-seconds or an HTTP-date (RFC 9110 §10.2.3)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # "-0000": UTC, but parsed as naive
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - now)


def backoff_s(attempt: int, *, cap: float, jitter: float) -> float:
    """Exponential backoff for the `attempt`-th retry (from 1), capped, scaled by `jitter` in [0, 1) to 50-100 %."""
    return min(cap, _BASE_BACKOFF_S * 2.0 ** (attempt - 1)) * (0.5 + jitter / 2)


def embeddings_url(base_url: str) -> httpx.URL:
    """`{base_url}/embeddings`, keeping a query such as Azure's `?api-version=`."""
    url = httpx.URL(base_url)
    return url.copy_with(path=url.path.rstrip("/") + "/embeddings")


def error_detail(response: httpx.Response) -> str:
    """The server's error message, whichever of the usual shapes it has, shortened for logs."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    if isinstance(body, dict):
        for key in ("error", "message", "detail"):
            value = body.get(key)
            if isinstance(value, dict):
                value = value.get("message", value)
            if value:
                return str(value)[:300]
    return response.text[:300]


class OpenAIEmbedder:
    """An `Embedder` speaking the OpenAI embeddings API over an injected `httpx.AsyncClient`.

    Attributes:
        model: The model asked for.
        truncated: How many inputs were cut (before sending, or after a context-length refusal) so far.
    """

    def __init__(
        self,
        settings: EmbeddingSettings,
        client: httpx.AsyncClient,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not settings.base_url:
            raise ValueError("OpenAIEmbedder needs settings.base_url; use build_embedder for the other providers")
        self.model = settings.model
        self.truncated = 0
        self._settings = settings
        self._client = client
        self._sleep = sleep
        self._jitter = jitter
        self._clock = clock
        self._url = embeddings_url(settings.base_url)
        self._headers = _auth_headers(settings)
        self._semaphore = asyncio.Semaphore(settings.concurrency)
        self._dim: int | None = settings.dimensions

    async def dimension(self) -> int:
        """The configured `dimensions`, or the size of one probe vector (asked for once, then cached)."""
        if self._dim is None:
            await self.embed([_PROBE_TEXT])
        assert self._dim is not None  # set by the first successful batch
        return self._dim

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed `texts` in batches, at most `concurrency` requests at once.

        Args:
            texts: The inputs, each sent after `document_prefix`; an empty one (with no prefix) is
                sent as a single space, which every server accepts.

        Returns:
            One vector per text, in input order.

        Raises:
            EmbeddingError: Or a subclass, when the endpoint refuses or stays unavailable.
        """
        prefix = self._settings.document_prefix
        prepared = [self._clip(prefix + t if prefix else t or " ") for t in texts]
        batches = plan_batches(
            [estimate_tokens(t) for t in prepared],
            batch_size=self._settings.batch_size,
            max_batch_tokens=self._settings.max_batch_tokens,
        )
        tasks = [asyncio.ensure_future(self._embed_batch([prepared[i] for i in r])) for r in batches]
        try:
            results = await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:  # one batch failed: stop sending the others
                task.cancel()
            raise
        return [vector for batch in results for vector in batch]

    async def embed_query(self, text: str) -> list[float]:
        """The vector of a question: `query_prefix` + `text`, never cut.

        Raises:
            EmbeddingError: Or a subclass, when the endpoint refuses or stays unavailable.
        """
        return (await self._embed_batch([self._settings.query_prefix + text or " "]))[0]

    def _clip(self, text: str) -> str:
        limit = self._settings.max_input_tokens * CHARS_PER_TOKEN
        if len(text) <= limit:
            return text
        self.truncated += 1
        return text[:limit]

    async def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        async with self._semaphore:
            try:
                return await self._post(texts)
            except _ContextLengthError as exc:
                return await self._post_shorter(texts, exc)

    async def _post_shorter(self, texts: list[str], refusal: _ContextLengthError) -> list[list[float]]:
        shorter = halve_longest(texts)
        self.truncated += sum(a != b for a, b in zip(texts, shorter, strict=True))
        logger.warning("embedding batch of %d too long for the model (%s); halving the longest", len(texts), refusal)
        try:
            return await self._post(shorter)
        except _ContextLengthError as exc:
            raise EmbeddingError(f"embedding inputs still too long after halving them: {exc}") from exc

    async def _post(self, texts: list[str]) -> list[list[float]]:
        body: dict[str, object] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self._settings.dimensions is not None:
            body["dimensions"] = self._settings.dimensions
        attempt = 0
        metrics.EMBED_INPUTS.inc(len(texts))
        while True:
            attempt += 1
            wait: float | None = None
            started = time.monotonic()
            try:
                response = await self._client.post(
                    self._url, json=body, headers=self._headers, timeout=self._settings.timeout_s
                )
            except _RETRY_EXCEPTIONS as exc:
                failure = f"{type(exc).__name__}: {exc}"
                metrics.EMBED_ERRORS.labels(kind=type(exc).__name__).inc()
            else:
                metrics.EMBED_SECONDS.observe(time.monotonic() - started)
                if response.status_code not in RETRY_STATUSES:
                    return self._observed(response, texts)
                failure = f"HTTP {response.status_code}: {error_detail(response)}"
                metrics.EMBED_ERRORS.labels(kind=str(response.status_code)).inc()
                wait = retry_after_s(response.headers.get("retry-after"), self._clock())
            if attempt > self._settings.max_retries:
                metrics.EMBED_REQUESTS.labels(outcome="failed").inc()
                raise EmbeddingUnavailableError(
                    f"embedding endpoint {self._url} still failing after {attempt} attempts; last: {failure}"
                )
            metrics.EMBED_REQUESTS.labels(outcome="retried").inc()
            await self._back_off(attempt, wait, failure)

    def _observed(self, response: httpx.Response, texts: list[str]) -> list[list[float]]:
        """`_vectors`, counted: a refusal is a failed request; an answer adds its inputs' estimated tokens."""
        try:
            vectors = self._vectors(response, len(texts))
        except EmbeddingError:
            metrics.EMBED_REQUESTS.labels(outcome="failed").inc()
            metrics.EMBED_ERRORS.labels(kind=str(response.status_code)).inc()
            raise
        metrics.EMBED_REQUESTS.labels(outcome="ok").inc()
        metrics.EMBED_TOKENS.inc(sum(estimate_tokens(t) for t in texts))
        return vectors

    async def _back_off(self, attempt: int, retry_after: float | None, failure: str) -> None:
        # A server's Retry-After wins over our own schedule, but never beyond max_backoff_s: a worker
        # parked for an hour is worse than one more 429.
        cap = self._settings.max_backoff_s
        delay = min(cap, retry_after) if retry_after is not None else backoff_s(attempt, cap=cap, jitter=self._jitter())
        if failure.startswith("HTTP 429"):
            metrics.RATE_LIMIT_WAITS.labels(upstream="embedding").inc()
            metrics.RATE_LIMIT_SECONDS.labels(upstream="embedding").inc(delay)
        logger.warning("embedding request failed (%s); retry %d in %.2fs", failure, attempt, delay)
        await self._sleep(delay)

    def _vectors(self, response: httpx.Response, expected: int) -> list[list[float]]:
        if response.is_error:
            raise self._status_error(response)
        vectors = _parse_vectors(response, expected)
        for vector in vectors:
            self._check_dimension(len(vector))
        return vectors

    def _status_error(self, response: httpx.Response) -> EmbeddingError:
        status, detail = response.status_code, error_detail(response)
        if status in (401, 403):
            hint = "check" if self._headers else "no API key is configured; set"
            return EmbeddingAuthError(
                f"embedding endpoint refused the API key (HTTP {status}) at {self._url}: {detail}; "
                f"{hint} JAVAKB_EMBEDDING__API_KEY"
            )
        if status in _TOO_LONG_STATUSES and _TOO_LONG.search(detail):
            return _ContextLengthError(f"HTTP {status}: {detail}")
        if status == 404 or (status == 400 and "model" in detail.lower()):
            return EmbeddingModelError(
                f"embedding endpoint {self._url} does not serve model {self.model!r} (HTTP {status}): {detail}; "
                "check JAVAKB_EMBEDDING__MODEL and that base_url ends with /v1"
            )
        return EmbeddingError(f"embedding endpoint {self._url} answered HTTP {status}: {detail}")

    def _check_dimension(self, actual: int) -> None:
        if self._dim is None:
            self._dim = actual
        elif actual != self._dim:
            source = "configured" if self._settings.dimensions is not None else "earlier vectors had"
            raise EmbeddingDimensionError(
                f"model {self.model!r} returned a vector of {actual} dimensions, expected {self._dim} ({source})"
            )


def _auth_headers(settings: EmbeddingSettings) -> dict[str, str]:
    if settings.api_key is None or not settings.api_key.get_secret_value():
        return {}
    key = settings.api_key.get_secret_value()
    # OpenAI and most servers read the bearer token; Azure-style gateways read `api-key`.
    return {"Authorization": f"Bearer {key}", "api-key": key}


def _parse_vectors(response: httpx.Response, expected: int) -> list[list[float]]:
    try:
        data = response.json()["data"]
        if all("index" in item for item in data):
            data = sorted(data, key=lambda item: item["index"])
            if [item["index"] for item in data] != list(range(len(data))):
                raise ValueError("indices are not 0..n-1")
        vectors = [[float(x) for x in item["embedding"]] for item in data]
    except (ValueError, KeyError, TypeError) as exc:
        raise EmbeddingError(f"embedding endpoint sent a malformed response ({exc}): {response.text[:200]!r}") from exc
    if len(vectors) != expected:
        raise EmbeddingError(f"embedding endpoint returned {len(vectors)} vectors for {expected} inputs")
    return vectors


def build_embedder(
    settings: EmbeddingSettings, client: httpx.AsyncClient, executor: Executor | None = None
) -> Embedder | None:
    """The embedder `settings.source` names, or None in lexical-only mode.

    Args:
        settings: Which provider, and the endpoint's settings.
        client: The HTTP client an endpoint is asked through.
        executor: Where the embedded model computes batches (None: the event loop's default thread pool).
    """
    if settings.source == "embedded" and settings.embedded_model == CODE_TOKENS_MODEL:
        from app.store.static_embedder import StaticEmbedder  # numpy and the table only when chosen

        return StaticEmbedder(executor)
    if settings.source == "embedded":
        from app.store.distilled import distilled_embedder  # numpy and the tokenizer only when chosen

        return distilled_embedder(settings.embedded_model, Path(settings.model_cache).expanduser(), executor)
    if settings.source == "endpoint":
        return OpenAIEmbedder(settings, client)
    return None
