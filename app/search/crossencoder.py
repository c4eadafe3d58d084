"""An optional cross-encoder that re-scores the best fused results, over the common `/rerank` API.

TEI, Jina and Cohere (and vLLM, Infinity, LocalAI) accept `POST {base_url}/rerank` with
`{"model", "query", "documents": [...], "top_n"}`; Jina and Cohere answer
`{"results": [{"index", "relevance_score"}]}`, TEI a bare list of `{"index", "score"}` (it also
reads `texts`, which is sent too). Only the first `candidates` results of the fused and name-ranked
order are re-scored; the rest keep their places after them.

A reranker is an improvement, never a dependency: a timeout, an error status or a malformed answer
is logged and the search returns the order it had (`reordered`), so an outage costs at most
`timeout_s` per search and never an error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import httpx

from app.core.settings import RerankSettings
from app.store.model_http import bearer, endpoint_url, post_json

logger = logging.getLogger(__name__)

T = TypeVar("T")


class RerankFailedError(Exception):
    """The endpoint could not re-score this time (kept inside this module: the search goes on)."""


class CrossEncoder:
    """Re-scores (query, document) pairs at a `/rerank` endpoint over an injected `httpx.AsyncClient`."""

    def __init__(self, settings: RerankSettings, client: httpx.AsyncClient) -> None:
        if not settings.base_url:
            raise ValueError("CrossEncoder needs settings.base_url; use build_cross_encoder, which returns None")
        self.settings = settings
        self._client = client
        self._url = endpoint_url(settings.base_url, "/rerank")
        self._headers = bearer(settings.api_key)

    async def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        """One relevance score per document, in input order (higher is more relevant).

        Raises:
            RerankFailedError: The endpoint timed out, refused or answered something unreadable.
        """
        body: dict[str, Any] = {
            "query": query,
            "documents": list(documents),
            "texts": list(documents),
            "top_n": len(documents),
            "return_documents": False,
        }
        if self.settings.model:
            body["model"] = self.settings.model
        response = await post_json(
            self._client, self._url, body, self._headers, timeout_s=self.settings.timeout_s, error=RerankFailedError
        )
        return parse_scores(response, len(documents))

    async def reordered(self, query: str, items: Sequence[T], text: Callable[[T], str]) -> list[T]:
        """`items` with the first `candidates` sorted by score (ties keep their order), or as they were on failure."""
        head, tail = list(items[: self.settings.candidates]), list(items[self.settings.candidates :])
        if len(head) < 2:
            return list(items)
        try:
            scores = await self.scores(query, [text(item)[: self.settings.max_chars] for item in head])
        except RerankFailedError as exc:
            logger.warning("reranker at %s failed (%s); keeping the fused order", self._url, exc)
            return list(items)
        order = sorted(range(len(head)), key=lambda i: -scores[i])
        return [head[i] for i in order] + tail


def parse_scores(response: httpx.Response, expected: int) -> list[float]:
    """Scores by input index from a Jina/Cohere (`results`, `relevance_score`) or TEI (list, `score`) answer.

    Raises:
        RerankFailedError: The answer is not one of those shapes or does not score every document once.
    """
    try:
        body = response.json()
        items = body["results"] if isinstance(body, dict) else body
        pairs = [(int(i["index"]), float(i.get("relevance_score", i.get("score")))) for i in items]
    except (ValueError, KeyError, TypeError) as exc:
        raise RerankFailedError(f"malformed answer ({exc}): {response.text[:200]!r}") from exc
    scores = dict(pairs)
    if sorted(scores) != list(range(expected)) or len(pairs) != expected:
        raise RerankFailedError(f"the answer scored indices {sorted(scores)[:10]}, not 0..{expected - 1} once each")
    return [scores[i] for i in range(expected)]


def build_cross_encoder(settings: RerankSettings, client: httpx.AsyncClient) -> CrossEncoder | None:
    """The cross-encoder of `settings`, or None when reranking is off (no `base_url`)."""
    return CrossEncoder(settings, client) if settings.enabled else None
