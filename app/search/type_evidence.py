"""What a question about a place in the architecture asks for, and the evidence several chunks of one file give.

Two pure rules of the score-level rerank (`app.search.boosts`), kept apart from it (issue 26, helper "i26-arch"):

- `asks_for_type`: whether a question asks for a type, which keeps the file signals on for it. "class",
  "interface", "enum", "record" and "annotation" ask for one wherever they stand ("which class parses
  dates", "the enum of order states"). "type" does only right after "which" or "what" ("which type holds
  ..."): in code about types (generics, reflection, serialization) it is mostly the subject matter ("how
  the mapper resolves a deserializer for a given Java type", "how type adapter factories are registered"),
  and such a question asks how something is done, whose answer is a member.
- `file_evidence`: a file's best candidate is lifted by the scores of the file's next `OTHERS` best
  candidates, over the best score of all: a file whose several members match ("reflection-based field
  serialization" → the reflective adapter factory, whose field-binding methods all rank in the pool) is
  the place asked for, where one chunk that repeats the words is not. It replaces semble's coherence (the
  file's sum over the largest file's sum), under which one file of thirty overloads set the scale for all.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.search.question import QueryTerms
from pipeline.model import TYPE_SYMBOLS, Chunk

TYPE_WORDS = frozenset({str(kind) for kind in TYPE_SYMBOLS})
"""Words asking for a type wherever they stand ("which class", "the enum of")."""
TYPE_NOUN = "type"
ASKING_WORDS = frozenset({"which", "what"})
"""The words after which `TYPE_NOUN` asks for a type ("which type", "what type")."""
OTHERS = 5
"""A file's candidates after its best one that count as its evidence."""


def asks_for_type(terms: QueryTerms) -> bool:
    """Whether the question asks for a type: a type word (`TYPE_WORDS`), or "type" right after which / what."""
    if TYPE_WORDS & terms.words:
        return True
    sequence = terms.sequence
    return any(w == TYPE_NOUN and i > 0 and sequence[i - 1] in ASKING_WORDS for i, w in enumerate(sequence))


def file_evidence(chunks: Sequence[Chunk], scores: Sequence[float]) -> dict[int, float]:
    """Each file's best candidate -> the summed scores of the file's next `OTHERS` best, over the best score."""
    top = max(scores, default=0.0)
    if top <= 0.0:
        return {}
    by_file: dict[str, list[int]] = {}
    for i, chunk in enumerate(chunks):
        by_file.setdefault(chunk.file_path, []).append(i)
    lifts: dict[int, float] = {}
    for members in by_file.values():
        members.sort(key=lambda i: (-scores[i], i))
        lifts[members[0]] = sum(scores[i] for i in members[1 : OTHERS + 1]) / top
    return lifts
