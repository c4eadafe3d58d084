"""What `bench.index_jdk` and `bench.mcp_latency` ask of an indexed JDK: its catalog of methods,
search questions made from their names, lookup names, and the in-process stub embedder.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from bench.common import STUB_MODEL

_QUESTIONS: Final = (
    "how does {type} {words}",
    "where does {type} {words}",
    "what does {dotted} do",
    "how is {words} done in {type}",
    "{words} in {type}",
    "who calls {dotted}",
)


LOCAL_MODE_THRESHOLD: Final = 20_000


CATALOG_PAGE: Final = 1_000_000


# Method names too generic to make a question about.
_DULL_NAMES: Final = frozenset(
    {"toString", "equals", "hashCode", "get", "set", "run", "apply", "accept", "test", "call", "close", "clone"}
)


_CAMEL: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


class InProcessStub:
    """An `Embedder` computing `fake_vector` in this process; records the time spent in it."""

    def __init__(self, dim: int) -> None:
        self.model = STUB_MODEL
        self.dim = dim
        self.seconds = 0.0
        self.inputs = 0

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        from testkit.fake_embedder import fake_vector

        t0 = time.perf_counter()
        vectors = [fake_vector(t, self.dim) for t in texts]
        self.seconds += time.perf_counter() - t0
        self.inputs += len(texts)
        return vectors

    async def embed_query(self, text: str) -> list[float]:
        return (await self.embed([text]))[0]

    async def dimension(self) -> int:
        return self.dim


@dataclass(frozen=True, slots=True)
class Query:
    kind: str  # question | identifier | filtered
    text: str
    symbol_type: str | None = None
    path_prefix: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass(frozen=True, slots=True, order=True)
class Method:
    type_name: str  # the enclosing type's simple name: HashMap, Node
    name: str
    file_path: str

    @property
    def dotted(self) -> str:
        return f"{self.type_name}.{self.name}"

    @property
    def words(self) -> str:
        return " ".join(part.lower() for part in _CAMEL.findall(self.name))


def methods_of(catalog: Sequence[dict[str, Any]]) -> list[Method]:
    """Distinct (type, method) pairs of the index with a name worth asking about, sorted."""
    found: set[Method] = set()
    for payload in catalog:
        name, enclosing = str(payload.get("name") or ""), str(payload.get("enclosing_type") or "")
        if payload.get("symbol_type") != "method" or not enclosing or len(name) < 4 or name in _DULL_NAMES:
            continue
        if name.startswith("lambda$") or not name[:1].isalpha():
            continue
        found.add(Method(enclosing.rsplit(".", 1)[-1], name, str(payload.get("file_path") or "")))
    return sorted(found)


def make_queries(methods: Sequence[Method], total: int, seed: int) -> list[Query]:
    """Half natural questions, a quarter `Type.method` identifiers, a quarter questions with a filter."""
    rng = random.Random(seed)
    n_questions, n_identifiers = total // 2, total // 4
    n_filtered = total - n_questions - n_identifiers
    picked = rng.sample(list(methods), min(total, len(methods)))
    while len(picked) < total:  # a tiny index: reuse
        picked.append(rng.choice(list(methods)))
    queries: list[Query] = []
    for i, m in enumerate(picked):
        template = _QUESTIONS[rng.randrange(len(_QUESTIONS))]
        question = template.format(type=m.type_name, words=m.words, dotted=m.dotted)
        if i < n_questions:
            queries.append(Query("question", question))
        elif i < n_questions + n_identifiers:
            queries.append(Query("identifier", m.dotted))
        elif (i - n_questions - n_identifiers) % 2 == 0:
            queries.append(Query("filtered", question.replace("who calls", "what does"), symbol_type="method"))
        else:
            folder = m.file_path.rsplit("/", 1)[0] + "/" if "/" in m.file_path else m.file_path
            queries.append(Query("filtered", f"{m.words} {m.type_name}", path_prefix=folder))
    assert len(queries) == n_questions + n_identifiers + n_filtered
    return queries


def make_lookup_names(methods: Sequence[Method], count: int, seed: int) -> list[str]:
    rng = random.Random(seed + 1)
    return [m.dotted for m in rng.sample(list(methods), min(count, len(methods)))]


def digest(items: Sequence[Any]) -> str:
    return hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest()[:16]


async def load_catalog(deps: Any) -> list[dict[str, Any]]:
    from qdrant_client import models as qm

    fields = ["name", "symbol_type", "enclosing_type", "file_path"]
    # One page: local mode sorts every id and filters every point again for each page of a scroll.
    return [dict(r.payload or {}) async for r in deps.store.scroll(qm.Filter(), fields, page=CATALOG_PAGE)]
