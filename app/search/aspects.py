"""A question that names several things gets each of them near the top (`surface`).

"How does the gateway combine the customers service and the visits service" names two things; a ranking
that scores each candidate alone can fill the first page with ten variations of the first one. The
question's aspects are the keywords on either side of the words that join things (`JOINERS`: "and", "or",
"both", "versus"); a candidate covers an aspect when its own name or its file's path spells every one of
the aspect's keywords. When an aspect is covered by none of the first `TOP` results but by a candidate
further down the window, that candidate moves up to `INSERT_AT` (the next aspect's after it), so the first
page answers every thing named. A question of one aspect keeps its order.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from app.search.boosts import keywords_of, matches_word, path_parts
from app.store.lexical import tokenize
from pipeline.model import Chunk

JOINERS = frozenset({"and", "or", "both", "versus", "vs"})
TOP = 5
"""How far down an aspect counts as surfaced already."""
INSERT_AT = 2
"""Where the first uncovered aspect's best candidate goes (0-based: third), the next one after it."""
SPAN = 2
"""The keywords next to a joining word that name one thing ("visits service"), both sides."""


def aspects(sequence: Sequence[str]) -> list[tuple[str, ...]]:
    """The things the question joins: the last `SPAN` keywords before each joining word, the first after it.

    "the customers service and the visits service" -> (customer, service), (visit, service). Only a join
    with `SPAN` keywords on both sides names two things; a shorter side joins modifiers or acts.
    """
    runs: list[list[str]] = [[]]
    for word in sequence:
        if word in JOINERS:
            runs.append([])
        elif keywords_of([word]):
            runs[-1].append(word)
    found: list[tuple[str, ...]] = []
    for left, right in pairwise(runs):
        things = (tuple(left[-SPAN:]), tuple(right[:SPAN]))
        if min(map(len, things)) < SPAN:
            continue  # "invalid or expired tokens", "log in and get a JWT": words of one thing, or of acts
        found.extend(thing for thing in things if thing not in found)
    return found


def surface(order: Sequence[int], chunks: Sequence[Chunk], sequence: Sequence[str], window: int) -> list[int]:
    """`order` with a candidate of each aspect that the first `TOP` lack moved up to `INSERT_AT` onwards."""
    named = aspects(sequence)
    if len(named) < 2:
        return list(order)
    out = list(order)
    identity = {i: _identity(chunks[i]) for i in out[:window]}  # moves stay inside the window
    at = INSERT_AT
    for aspect in named:
        names = [identity[i] for i in out[:window]]
        if any(_covers(aspect, words) for words in names[:TOP]):
            continue
        best = next((rank for rank in range(TOP, len(names)) if _covers(aspect, names[rank])), None)
        if best is not None:
            out.insert(min(at, len(out)), out.pop(best))
            at += 1
    return out


def _identity(chunk: Chunk) -> frozenset[str]:
    """The words of the chunk's own name and of its file's path."""
    return path_parts(chunk.file_path) | frozenset(tokenize(chunk.name))


def _covers(aspect: tuple[str, ...], words: frozenset[str]) -> bool:
    return all(any(matches_word(key, word) for word in words) for key in aspect)
