"""NDCG@10 as semble's benchmark scores it, by two protocols, over any ranked list of located results.

Relevance is binary and every target (relevant or secondary) counts one. The ideal list holds
`min(k, targets)` hits, so a query whose targets are not all found in the top k scores below 1.

- chunk protocol (semble's own): the ranked list is the top k chunks; a target is found at the first
  chunk of its file whose lines overlap the target's span (any chunk of the file when it has none).
  Two targets found by the same chunk fill one rank, as in semble.
- file protocol: the ranked list is the first k distinct files, in the order their first chunk comes;
  a target is found at its file's place; targets are counted once per file (the span is ignored).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from tests.quality.semble.annotated import Target

K: Final = 10


@dataclass(frozen=True, slots=True)
class Located:
    """One ranked result: the file (relative to the checkout root, `/`-separated) and its line span."""

    path: str
    start_line: int
    end_line: int


def path_matches(path: str, target: str) -> bool:
    """The same file, or one path a `/`-bounded suffix of the other (semble's rule for path prefixes)."""
    a, b = path.replace("\\", "/"), target.replace("\\", "/")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def covers(result: Located, target: Target) -> bool:
    if not path_matches(result.path, target.path):
        return False
    span = target.span
    return span is None or not (result.end_line < span[0] or result.start_line > span[1])


def dcg(gains: Iterable[int]) -> float:
    return sum(gain / math.log2(position + 2) for position, gain in enumerate(gains))


def ndcg(ranks: Iterable[int], relevant: int, k: int = K) -> float:
    """NDCG@k from the 1-based ranks where targets were found, `relevant` targets in all."""
    if relevant <= 0:
        return 0.0
    hit = {r for r in ranks if 1 <= r <= k}
    return dcg(1 if r in hit else 0 for r in range(1, k + 1)) / dcg([1] * min(k, relevant))


def chunk_rank(results: Sequence[Located], target: Target) -> int | None:
    return next((i for i, result in enumerate(results, 1) if covers(result, target)), None)


def chunk_ndcg(results: Sequence[Located], targets: Sequence[Target], k: int = K) -> float:
    """The chunk protocol over the first k results."""
    top = results[:k]
    ranks = [r for t in targets if (r := chunk_rank(top, t)) is not None]
    return ndcg(ranks, len(targets), k)


def distinct_files(results: Iterable[Located]) -> list[str]:
    files: dict[str, None] = {}
    for result in results:
        files.setdefault(result.path, None)
    return list(files)


def file_ndcg(results: Sequence[Located], targets: Sequence[Target], k: int = K) -> float:
    """The file protocol over the first k distinct files of the results."""
    files = distinct_files(results)[:k]
    paths = list(dict.fromkeys(t.path for t in targets))
    ranks = [r for p in paths if (r := next((i for i, f in enumerate(files, 1) if path_matches(f, p)), None))]
    return ndcg(ranks, len(paths), k)
