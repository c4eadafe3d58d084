"""A `/rerank` endpoint over real loopback HTTP that scores a document by the query words it contains.

Speaks the Jina/Cohere shape (`{"results": [{"index", "relevance_score"}]}`) or, with `tei=True`,
TEI's bare list of `{"index", "score"}`; records every request body; can fail, stall or answer
garbage on demand, for the outage paths of `app.search.crossencoder`.
"""

from __future__ import annotations

import re
import time
from typing import Any

from testkit.loopback import JsonEndpoint


def overlap(query: str, document: str) -> float:
    """How many distinct query words the document contains (case-insensitive)."""
    words = set(re.findall(r"\w+", query.lower()))
    return float(sum(1 for w in words if w in document.lower()))


class FakeReranker(JsonEndpoint):
    """Start with `with FakeReranker() as r:`; point settings at `r.base_url`."""

    route = "/rerank"

    def __init__(self, *, tei: bool = False) -> None:
        super().__init__()
        self.tei = tei
        self.status = 200
        self.delay_s = 0.0
        self.garbage = False

    @property
    def base_url(self) -> str:
        return self.origin

    def answer(self, body: dict[str, Any]) -> tuple[int, object]:
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.status != 200:
            return self.status, {"error": "unavailable"}
        if self.garbage:
            return 200, {"results": [{"index": 0}]}
        scores = [overlap(body["query"], d) for d in body["documents"]]
        if self.tei:
            return 200, [{"index": i, "score": s} for i, s in enumerate(scores)]
        ranked = sorted(range(len(scores)), key=lambda i: -scores[i])
        return 200, {"results": [{"index": i, "relevance_score": scores[i]} for i in ranked]}
