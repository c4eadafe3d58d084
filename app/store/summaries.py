"""Optional natural-language descriptions of chunks, asked of an OpenAI-compatible chat endpoint at index time.

Only chunks the write plan embeds are described (new or changed code): an unchanged chunk keeps its
stored vectors, and the description inside them, as its content hash is taken before the
description is added (`pipeline.render.with_description`). The store is therefore the cache, keyed
by content hash; nothing is described twice while its code stays the same.

Failures never lose or block indexing: a chunk whose request fails (after the client's own timeout)
is indexed without a description, and after `max_failures` failures in a row a write stops asking
for the rest of its chunks. Such a chunk is described when its code next changes or the index is
rebuilt; it is not retried on a timer (the decision is in docs/decisions.md). Requests are bounded
by `concurrency`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace

import httpx

from app.core.settings import SummarySettings
from app.store.model_http import bearer, endpoint_url, post_json
from pipeline.model import Chunk
from pipeline.render import with_description

logger = logging.getLogger(__name__)

PROMPT = (
    "You describe Java code for a search index. In one plain sentence of at most 30 words, say what the "
    "code does in the words of the business domain (what a user or a product owner would call it), not "
    "how. Write English even when the comments are in another language. Answer with the sentence only."
)
_MAX_DESCRIPTION_CHARS = 300


class Summarizer:
    """Describes chunks at `{base_url}/chat/completions` over an injected `httpx.AsyncClient`."""

    def __init__(self, settings: SummarySettings, client: httpx.AsyncClient) -> None:
        if not settings.base_url:
            raise ValueError("Summarizer needs settings.base_url; use build_summarizer, which returns None")
        self.settings = settings
        self.url = endpoint_url(settings.base_url, "/chat/completions")
        self._headers = bearer(settings.api_key)
        self._client = client

    async def described(self, chunks: Sequence[Chunk]) -> list[Chunk]:
        """The chunks, each with a `description` line in its text when the endpoint gave one."""
        semaphore = asyncio.Semaphore(self.settings.concurrency)
        failures = 0

        async def one(chunk: Chunk) -> Chunk:
            nonlocal failures
            async with semaphore:
                if failures >= self.settings.max_failures:
                    return chunk
                try:
                    description = await self.describe(chunk.text)
                except SummaryFailedError as exc:
                    failures += 1
                    logger.warning("no description for %s (%s)", chunk.qualified_name, exc)
                    return chunk
                failures = 0
                return replace(chunk, text=with_description(chunk.text, description)) if description else chunk

        out = await asyncio.gather(*(one(c) for c in chunks))
        if failures >= self.settings.max_failures:
            logger.warning("chat endpoint %s failed %d times in a row: the rest go undescribed", self.url, failures)
        return list(out)

    async def describe(self, text: str) -> str:
        """One sentence for one embedding text ("" when the model answered nothing usable).

        Raises:
            SummaryFailedError: The endpoint timed out, refused or answered in another shape.
        """
        body = {
            "model": self.settings.model,
            "messages": [
                {"role": "system", "content": PROMPT},
                {"role": "user", "content": text[: self.settings.max_input_chars]},
            ],
            "max_tokens": self.settings.max_tokens,
            "temperature": 0,
        }
        response = await post_json(
            self._client, self.url, body, self._headers, timeout_s=self.settings.timeout_s, error=SummaryFailedError
        )
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise SummaryFailedError(f"malformed answer ({exc}): {response.text[:200]!r}") from exc
        return " ".join(str(content or "").split())[:_MAX_DESCRIPTION_CHARS]


class SummaryFailedError(Exception):
    """No description this time (kept inside this module: the chunk is indexed without one)."""


def build_summarizer(settings: SummarySettings, client: httpx.AsyncClient) -> Summarizer | None:
    """The summarizer of `settings`, or None when descriptions are off (no `base_url`)."""
    return Summarizer(settings, client) if settings.enabled else None
