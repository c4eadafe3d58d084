"""Score-level signals of the rerank: what the candidates' scores and files say beyond one chunk's text.

The store's candidates come with scores (BM25's, or the fused one). Before the rank-level steps of
`app.search.ranking`, the fused candidates are re-ordered by a blended score, each signal a small pure
function, each measured on and off (docs/performance.md, issue 26):

- `path_words` (questions in words): a candidate whose file stem or folder spells the question's keywords
  gains `PATH_WEIGHT` x the best score x the share of keywords matched. A file is named for what it is
  ("streaming JSON reader" → `stream/JsonReader.java`); its words are the type's purpose in two or three
  words, which a long body or a comment full of the same words must not outweigh.
- `file_coherence`: a file with several good candidates lifts its best one by `COHERENCE_WEIGHT` x the best
  score x its share of the largest file sum: "which class does X" is answered by the file whose chunks
  all speak of X, not by one chunk that repeats X. With `file_evidence` (the default) the lift is
  `EVIDENCE_WEIGHT` x the scores of the file's next best candidates (`app.search.type_evidence`).
- `file_saturation`: past `SATURATION` chunks of one file, each further chunk's score is multiplied by
  `DECAY` once more: ten chunks of one file would leave no room for the second-best file.
- `types_first` (`app.search.ranking.types_first`): of the exact matches of a name, the type before its
  constructors, which share its name.
- `name_phrase`: a file whose stem's words (two or more) the question writes in order, next to each
  other ("array utility operations" → `ArrayUtils.java`, "the toString builder" → `ToStringBuilder.java`),
  gains `NAME_WEIGHT` x the best score: the question names that type, where path words only count the
  words a path shares with it (`TypeUtils` shares as many with "array utility ... type conversion").
- `compounds`: adjacent words of a question in words also ask, in the lexical query, for the identifier
  they spell ("JSON object" → `jsonobject`), which names the type when its words alone are everywhere.

The weights are semble's (MinishLab/semble `ranking/boosting.py`, `ranking/penalties.py`), which blends
min-max normalised scores; ours divide by the best score (BM25 and RRF scores start at 0).
Query intent decides the mix: a question that is one identifier (`TypeAdapter`, `Gson.toJson`) gets no
path words (its exact matches are evidence of `app.search.ranking` already); a question about a behaviour
("how is the cart emptied", `asks_behaviour`) gets none of them, as its answer is a method
(on the real suite the three cost natural R@5 0.77 -> 0.73 when applied to those questions too); a
phrase naming a thing ("streaming JSON reader and token parsing", "which class holds ...") gets all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import PurePosixPath

from app.search import type_evidence
from app.search.question import SCAFFOLDING, Kind, QueryTerms, Question
from app.search.type_evidence import asks_for_type, file_evidence
from app.store.lexical import STOP_WORDS, singular, stem, tokenize
from pipeline.model import Chunk
from pipeline.render import IDENTIFIER_PART

SIGNALS = (
    "path_words",
    "file_coherence",
    "file_saturation",
    "name_phrase",
    "types_first",
    "compounds",
    "aspects",
    "own_words",
    "file_evidence",
    "asks_type",
    "names_only_dense",
    "annotation_set",
    "fold",
)
"""The signals, by name (`types_first` is `app.search.ranking`'s, on the exact name matches; `compounds`
adds terms to the lexical query: `compounds`; `aspects` is `app.search.aspects.surface`, after the rank-level steps;
`own_words` is `app.search.own_words.lifted`, the module a question names, before these; `file_evidence` is the
form `file_coherence` takes and `asks_type` the reading of "type" in `asks_behaviour`, both
`app.search.type_evidence`'s: switched off, semble's coherence and any "type" asking for a type; `names_only_dense`
is `app.search.intent.dense_weight`, the dense list's weight in the store's fusion for a question of names only;
`annotation_set` is `app.search.ranking.names_member_annotation`, which leaves the file signals out; `fold` is
`app.search.fold`: a bodiless declaration and its implementation, both ranked, shown once as the implementation)."""
FILE_SIGNALS = frozenset(SIGNALS[:4])
"""The signals that speak of files: a question about a behaviour gets none of them (`reordered`)."""
DISABLED: set[str] = set()
"""Signals switched off, by name (benchmarks measure each on and off; empty in production)."""
PATH_WEIGHT = 1.0
NAME_WEIGHT = 1.0
COHERENCE_WEIGHT = 0.2
EVIDENCE_WEIGHT = 0.5
"""`file_coherence` with `file_evidence`: this x the file's next best candidates' scores (docs/performance.md)."""
SATURATION = 2
DECAY = 0.5
MIN_PREFIX = 3
"""A keyword, or its stem, and a path part match when one starts with the other and the shorter has at least
this many letters ("dependency" ~ `Dependencies`; "serialization", stem `serializ`, ~ `Serializer`)."""
MIN_SHARE = 0.1
TYPE_WORDS = type_evidence.TYPE_WORDS | {type_evidence.TYPE_NOUN}
"""Words asking for a type ("which class", "the enum of"); "type" anywhere too when `asks_type` is off."""
QUESTION_WORDS = frozenset({"how", "where", "when", "what", "which", "why", "who"})
DEPTH = 60
"""The candidates a search asks the store for at least (`app.search.pool`): the file signals judge a file by
its candidates, so more of them see more of each file. Semble lexical mean, every signal on (before stems
in path words): 0.742 at 40, 0.758 at 60, 0.763 at 100, at query p50 4.9, 6.4 and 11.5 ms (4.4 ms at 40
with none; the real suite the same at all; docs/performance.md). The rank-level steps still look at `ranking.WINDOW`."""
PATHS_CACHED = 1 << 15
"""File paths whose words `path_parts` and `file_stem_parts` keep (pure functions of the path, asked for each
candidate of every search: a search's candidates come from a few files, and the same files come back)."""


def enabled(signal: str, off: frozenset[str] = frozenset()) -> bool:
    """Whether `signal` applies: not switched off (`DISABLED`) nor left out for this question (`off`)."""
    return signal not in DISABLED and signal not in off


def blended(
    terms: QueryTerms, chunks: Sequence[Chunk], scores: Sequence[float], off: frozenset[str] = frozenset()
) -> list[float]:
    """The candidates' scores with the enabled signals applied (saturation is applied by `reordered`)."""
    top = max(scores, default=0.0)
    if top <= 0.0:
        return list(scores)
    out = list(scores)
    if enabled("path_words", off) and not is_symbol_question(terms):
        keys = keywords(terms)
        shares = {path: path_share(keys, path_parts(path)) for path in {chunk.file_path for chunk in chunks}}
        for i, chunk in enumerate(chunks):
            out[i] += PATH_WEIGHT * top * shares[chunk.file_path]
    if enabled("name_phrase", off) and not is_symbol_question(terms):
        named = named_files(terms.sequence, {chunk.file_path for chunk in chunks})
        for i, chunk in enumerate(chunks):
            if chunk.file_path in named:
                out[i] += NAME_WEIGHT * top
    if enabled("file_coherence", off):
        evidence = enabled("file_evidence")
        weight = EVIDENCE_WEIGHT if evidence else COHERENCE_WEIGHT
        for i, lift in (file_evidence(chunks, scores) if evidence else coherence(chunks, scores)).items():
            out[i] += weight * top * lift
    return out


def reordered(
    terms: QueryTerms, chunks: Sequence[Chunk], scores: Sequence[float], *, members: bool = False
) -> list[int]:
    """Indexes of the candidates by blended score, file saturation applied; ties keep the store's order.

    A question about how something is done (`asks_behaviour`) wants a member, and so does one its caller
    found asking for a set of members (`members`): no signal that speaks of files applies to either, and
    the store's order stays.
    """
    off = FILE_SIGNALS if members or asks_behaviour(terms) else frozenset()
    score = blended(terms, chunks, scores, off)
    order = sorted(range(len(chunks)), key=lambda i: (-score[i], i))
    if enabled("file_saturation", off):
        return saturated(order, [chunks[i].file_path for i in order], [score[i] for i in order])
    return order


COMPOUND_WEIGHT = 1.0
"""The weight of a compound in the lexical query, as much as a word the question holds."""
COMPOUND_PARTS = 3
"""The most adjacent words joined into one compound."""


def asks_behaviour(terms: QueryTerms) -> bool:
    """A question about how something is done (a question word, no word asking for a type): its answer is a member."""
    asks_type = asks_for_type(terms) if enabled("asks_type") else bool(TYPE_WORDS & terms.words)
    return bool(QUESTION_WORDS & terms.words) and not asks_type


def compounds(question: Question) -> dict[str, float]:
    """The names the question spells as separate words, each at `COMPOUND_WEIGHT`, for the lexical query.

    Adjacent plain words (no stop word or scaffolding between them) joined as one identifier, the last
    singular: "JSON object with named fields" → `jsonobject`, `namedfield`; "type adapter factories" →
    `typeadapter`, `adapterfactory`, `typeadapterfactory`. A type is named for what it is, and the index
    keeps every identifier whole (`app.store.lexical.tokenize`): the compound finds the type, and code
    that uses it, when its words alone are too common to rank it ("json", "object"). Not for a question
    about a behaviour (`asks_behaviour`): "how is a bank account updated" names the type whose methods
    hold the answer, and the compound ranks the type's getters first (real suite natural R@5 0.78 -> 0.77).
    """
    if not enabled("compounds") or asks_behaviour(question.terms):
        return {}
    runs: list[list[str]] = [[]]
    for token in question.tokens:
        word = token.text.lower()
        if (
            token.kind is Kind.WORD
            and len(word) > 1
            and word.isalpha()
            and word not in STOP_WORDS
            and word not in SCAFFOLDING
        ):
            runs[-1].append(word)
        elif runs[-1]:
            runs.append([])
    found: dict[str, float] = {}
    for run in runs:
        for size in range(2, COMPOUND_PARTS + 1):
            for start in range(len(run) - size + 1):
                parts = run[start : start + size]
                found["".join([*parts[:-1], singular(parts[-1])])] = COMPOUND_WEIGHT
    return found


def is_symbol_question(terms: QueryTerms) -> bool:
    """A question that is only identifiers (`TypeAdapter`, `Gson.toJson`): no word besides their own."""
    if not terms.identifiers:
        return False
    own = {w for i in terms.identifiers for w in tokenize(i)}
    return all(w in own or singular(w) in own for w in terms.words)


def keywords(terms: QueryTerms) -> frozenset[str]:
    """The question's words that can name a file: no scaffolding, no stop word, more than two letters."""
    return keywords_of(terms.words)


def keywords_of(words: Iterable[str]) -> frozenset[str]:
    """The `words` that can name a file or a member (see `keywords`)."""
    return frozenset(w for w in words if len(w) > 2 and w not in SCAFFOLDING and w not in STOP_WORDS)


@lru_cache(maxsize=PATHS_CACHED)
def path_parts(file_path: str) -> frozenset[str]:
    """The words of a file's stem and its folder: `gson/stream/JsonReader.java` → json, reader, stream (cached)."""
    path = PurePosixPath(file_path)
    return frozenset(singular(w) for w in _words(path.stem, path.parent.name) if len(w) > 1)


def path_share(keys: frozenset[str], parts: frozenset[str]) -> float:
    """The share of `keys` that a path part spells: equal, or a prefix of at least `MIN_PREFIX` letters.

    The key's stem counts too: with it, lexical semble mean 0.758 -> 0.783, embedded 0.722 -> 0.721, the
    real suite unchanged.
    """
    if not keys or not parts:
        return 0.0
    matched = sum(any(_prefixed(k, p) or _prefixed(stem(k), p) for p in parts) for k in keys)
    share = matched / len(keys)
    return share if share >= MIN_SHARE else 0.0


def named_files(sequence: Sequence[str], paths: Iterable[str]) -> frozenset[str]:
    """The paths whose file stem the question names: its words (two or more) written in order, adjacent."""
    return frozenset(p for p in paths if names_stem(sequence, file_stem_parts(p)))


@lru_cache(maxsize=PATHS_CACHED)
def file_stem_parts(file_path: str) -> tuple[str, ...]:
    """`stem_parts` of a file's stem: `src/ArrayUtils.java` → array, util (cached)."""
    return stem_parts(PurePosixPath(file_path).stem)


def stem_parts(name: str) -> tuple[str, ...]:
    """A file stem's words in order, lowercase, the last singular: `ArrayUtils` → array, util."""
    parts = [part.lower() for part in IDENTIFIER_PART.findall(name)]
    return (*parts[:-1], singular(parts[-1])) if parts else ()


def names_stem(sequence: Sequence[str], parts: Sequence[str]) -> bool:
    """Whether adjacent words of `sequence` spell `parts` in order, a word spelling one or more parts."""
    if len(parts) < 2:
        return False
    return any(_spells(sequence, start, parts) for start in range(len(sequence)))


def _spells(sequence: Sequence[str], start: int, parts: Sequence[str]) -> bool:
    at = 0
    for word in sequence[start:]:
        if at == len(parts):
            return True
        taken = next((n for n in range(1, len(parts) - at + 1) if matches_word(word, "".join(parts[at : at + n]))), 0)
        if not taken:
            return False
        at += taken
    return at == len(parts)


def matches_word(word: str, part: str) -> bool:
    """A question word and a name's part are the same word: equal, a prefix, or the word's stem a prefix."""
    return _prefixed(word, part) or _prefixed(stem(word), part)


def coherence(chunks: Sequence[Chunk], scores: Sequence[float]) -> dict[int, float]:
    """Each file's best candidate -> the file's summed score over the largest file's sum (0 to 1]."""
    total: dict[str, float] = {}
    best: dict[str, int] = {}
    for i, chunk in enumerate(chunks):
        path = chunk.file_path
        total[path] = total.get(path, 0.0) + scores[i]
        if path not in best or scores[i] > scores[best[path]]:
            best[path] = i
    most = max(total.values(), default=0.0)
    return {i: total[p] / most for p, i in best.items()} if most > 0 else {}


def saturated(order: Sequence[int], files: Sequence[str], scores: Sequence[float]) -> list[int]:
    """`order` (best first, `files` and `scores` aligned with it) re-sorted after the file-saturation decay."""
    seen: dict[str, int] = {}
    decayed: list[tuple[float, int, int]] = []
    for position, (index, path) in enumerate(zip(order, files, strict=True)):
        count = seen.get(path, 0)
        seen[path] = count + 1
        excess = count - SATURATION + 1
        decayed.append((scores[position] * DECAY ** max(excess, 0), position, index))
    return [index for _, _, index in sorted(decayed, key=lambda t: (-t[0], t[1]))]


def _prefixed(a: str, b: str) -> bool:
    short, long = (a, b) if len(a) <= len(b) else (b, a)  # no `sorted`: this runs thousands of times a search
    return a == b or (len(short) >= MIN_PREFIX and long.startswith(short))


def _words(*names: str) -> Iterable[str]:
    for name in names:
        yield from tokenize(name)
