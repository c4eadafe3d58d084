"""Lexical (sparse) vectors: BM25 with no model, with IDF applied inside Qdrant.

The collection declares the sparse vector `lexical` with `Modifier.IDF`, so Qdrant computes each term's
inverse document frequency at query time, over the points the query's filter selects (the caller's
readable repositories and the search filters; the whole collection without a filter), so a query ranks
as if the collection held only what it searches (docs/decisions.md, "Term rarity"). A document vector therefore holds
only the BM25 term-frequency part, `tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))`, and a query
vector holds weight 1.0 per distinct term: the score is `sum(idf(t) * doc_weight(t))` over shared terms.

Tokens are code-aware (see `tokenize`): every identifier is kept whole, lowercased, and also split into
its camelCase, PascalCase, acronym, snake_case and digit parts, so `findById` matches both the query
`findById` and the words `find by id`. A dotted name also yields each adjacent pair (`ownerservice.findbyid`),
so `Type.member` references match exactly. Every term also yields its light English stem (`stem`:
"calculated", "calculation" and `calculate` share `calcul`, "payments" and `pay` share `pay`) beside
itself, on both sides, so an inflected question finds the code and the exact form scores higher; the
document length counts tokens, not stems. Term ids are 32-bit blake2b digests of the token.

Header boost: the embedding text is a header, a `---` line, then the code (`pipeline.render`). Tokens on the
header lines that name the chunk itself (`symbol`, `signature`, `annotations`, `http`) count twice, so a
symbol's own name outranks incidental mentions. Other header lines (`repository`, `package`, `kind`,
`calls`, `summary`, `type summary`) count once: `calls` lists other symbols' names, which are exactly the incidental
mentions the boost should not reward. The `words` line (the symbol's identifiers as words, for the dense
model) is skipped, as tokenizing splits them already. Header labels themselves (`symbol:`) are not tokens. The document
length used for BM25 normalisation is the boosted token count (as in BM25F).

Throughput (Python 3.11, CPU time of one core on a busy two-core machine): `document_vector` over the
52,383 chunks of the JDK's `java.base` (1,040 characters, 149 boosted tokens and 49 distinct terms a chunk
on average) takes 6.5 to 9 s, some 6,000 to 8,000 chunks a second; tokenizing alone is about half of it.
Bounded caches (distinct words, term ids and stems, 32,768 entries each, about 25 MB) answer 96% of words.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, pairwise

from pipeline import render

# Words of English prose (Javadoc, comments, summaries) that carry no meaning for code search.
# Deliberately absent: "by", "id", "get", "set", "find", "all", "not", "null", "case", "else", "while":
# they are parts of meaningful names (findById, findAll, isNotEmpty, requireNonNull, ignoreCase, orElse,
# takeWhile), and Qdrant's IDF already discounts the frequent ones.
ENGLISH_STOP_WORDS = frozenset(
    {
        "an", "and", "are", "as", "at", "be", "been", "but", "can", "for", "from", "has", "have", "if", "in", "into",
        "is", "it", "its", "may", "must", "of", "on", "or", "should", "that", "the", "their", "these", "this",
        "those", "to", "was", "were", "which", "will", "with",
    }
)  # fmt: skip
# Java keywords found in nearly every chunk that never name a behaviour. Primitive type names stay:
# the JDK overloads by them (Arrays.sort(long[]) against sort(int[])) and IDF discounts them anyway.
JAVA_STOP_WORDS = frozenset(
    {
        "class", "extends", "false", "final", "implements", "import", "new", "package", "private", "protected",
        "public", "return", "static", "super", "this", "throw", "throws", "true", "var", "void",
    }
)  # fmt: skip
STOP_WORDS = ENGLISH_STOP_WORDS | JAVA_STOP_WORDS

# Header lines that name the chunk itself (labels written by `pipeline.render.embedding_text`).
BOOSTED_LABELS = frozenset({render.SYMBOL, render.SIGNATURE, render.ANNOTATIONS, render.HTTP})
HEADER_LABELS = frozenset(render.LABELS)
SKIPPED_LABELS = render.DENSE_ONLY  # identifiers restated as words: tokenize splits them already
HEADER_BOOST = 2
HEADER_SEPARATOR = render.SEPARATOR

# A run of identifier characters, with its dotted continuation (`com.acme.Owner.findById`).
_WORD = re.compile(r"[\w$]+(?:\.[\w$]+)*")
_PART = render.IDENTIFIER_PART
_DIGITS = re.compile(r"[0-9]+")
_NON_ASCII_PART = re.compile(r"[^\W_]+")
# Scripts written without spaces between words (Han, Hiragana, Katakana; Hangul syllables too, for
# compound nouns): a run of them is one `\w` run, a whole comment sentence. Such a run also yields its
# overlapping character pairs, as Lucene's CJKAnalyzer does, so `商品分类` in a question matches
# `查询商品分类列表` in a comment. The whole run stays a term too: points indexed before the pairs
# existed still match a query on it.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_CACHE_SIZE = 1 << 15
# English suffixes folded by `stem`, tried in order, each with what replaces it: "calculation",
# "calculated", "calculating" and "calculates" all become `calcul`, as `calculate` does.
_SUFFIXES = (("ation", ""), ("ment", ""), ("ion", ""), ("ing", ""), ("ed", ""))
_DOUBLED = frozenset("bcdfghjkmnpqrtvwx")  # a doubled consonant undone after -ing/-ed ("mapping" -> map)
_VOWELS = re.compile(r"[aeiouy]")
_MIN_STEM = 3
STEM_WEIGHT = 0.5
"""The share of a question word's weight its stem carries (see `query_vector`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SparseVector:
    """A sparse vector: `indices` sorted ascending and unique, each `values` item positive."""

    indices: tuple[int, ...]
    values: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.indices) != len(self.values):
            raise ValueError(f"{len(self.indices)} indices but {len(self.values)} values")


def tokenize(text: str) -> list[str]:
    """Split source code or a question into lowercase search terms, in order, with repeats.

    Each identifier yields itself whole (`findbyid`, `max_value`) and, when it has several, its parts
    (`find`, `by`, `id`). A dotted name yields each segment's terms, then each adjacent pair
    (`ownerservice.findbyid`). A segment that starts with a digit is a numeric literal and yields only its
    digit runs (`404` from `404`, `100` from `100L`). Stop words (`STOP_WORDS`) and one-character terms
    are dropped; punctuation, `/`, `{}` and `-` separate words, so HTTP paths and kebab-case names split.
    Non-ASCII identifiers split only at `_` and `$`, as `re` has no upper/lowercase classes for them;
    a run of Chinese, Japanese or Korean characters also yields its character pairs (`_UNSPACED`).

    Args:
        text: Any text: Java code, an embedding text or a query.

    Returns:
        The terms, in the order they occur.
    """
    return list(chain.from_iterable(map(_word_terms, _WORD.findall(text))))


def term_id(token: str) -> int:
    """The stable sparse-vector index of a term: the first 4 bytes of its blake2b digest, big-endian.

    Stable across processes, machines and Python versions (RFC 7693), unlike `hash()`. Two terms can
    share an id: among a million distinct terms about 116 pairs collide, which merges two rare terms'
    postings; acceptable for ranking, and the price of needing no shared vocabulary.

    Args:
        token: A term from `tokenize`.

    Returns:
        An unsigned 32-bit integer.
    """
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest(), "big")


@lru_cache(maxsize=_CACHE_SIZE)
def stem(term: str) -> str:
    """A light English stem of a lowercase term, so inflections of one word share a term.

    Dependency-free and deliberately small (not Porter's full algorithm): a plural `-s`/`-ies`/`-sses`,
    then one of `-ation`, `-ment`, `-ion`, `-ing`, `-ed` (undoubling a final consonant: "mapping" ->
    `map`), then a final `-e` and `-at`, each only while at least three letters with a vowel remain
    ("string", "need" and "status" stay). Terms that are not ASCII letters only, or shorter than four,
    are their own stem.

    Args:
        term: A term from `tokenize`.

    Returns:
        The stem; `term` itself when no rule applies.

    Cached (a pure function of a string): the rerank asks it of the same few words thousands of times a search.
    """
    if len(term) < _MIN_STEM + 1 or not term.isascii() or not term.isalpha():
        return term
    word = singular(term)
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            if _is_stem(base):
                word = base + replacement
                if suffix in ("ing", "ed") and len(word) > _MIN_STEM and word[-1] == word[-2] in _DOUBLED:
                    word = word[:-1]
            break
    for ending in ("e", "at"):
        if word.endswith(ending) and _is_stem(word[: -len(ending)]):
            word = word[: -len(ending)]
    return word


def search_terms(tokens: Iterable[str]) -> Counter[str]:
    """Tokens with their stems added (`stem`), each stem counted as often as the tokens it comes from.

    The token itself stays, so points indexed before stems existed still match and an exact form
    matches two terms where an inflection matches one.
    """
    counts = Counter(tokens)
    stems: Counter[str] = Counter()
    for token, count in counts.items():
        root = stem(token)
        if root != token:
            stems[root] += count
    counts.update(stems)
    return counts


def document_vector(text: str, *, k1: float = 1.2, b: float = 0.75, avg_len: float = 256.0) -> SparseVector:
    """The BM25 document-side weights of an embedding text (header, `---` line, code).

    Each term weighs `tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))`, where `len` is the
    boosted token count: a term repeated ten times weighs well under ten times a single mention, and
    long chunks weigh each mention less. Header tokens of `BOOSTED_LABELS` lines count twice. Terms that
    share an id add their frequencies before weighting.

    Args:
        text: The chunk's embedding text; without a `---` line all of it is code.
        k1: Term-frequency saturation (BM25's k1); 0 makes every present term weigh 1.
        b: Length normalisation, from 0 (none) to 1 (full).
        avg_len: The average boosted token count of a chunk in the collection.

    Returns:
        The vector; empty when the text has no terms.

    Raises:
        ValueError: If `k1` is negative, `b` is outside [0, 1] or `avg_len` is not positive.
    """
    _check_parameters(k1, b, avg_len)
    tokens = _weighted_counts(text)
    length = sum(tokens.values())
    counts = search_terms(tokens.elements())
    norm = k1 * (1.0 - b + b * length / avg_len)
    frequencies: dict[int, int] = {}
    for token, tf in counts.items():
        index = _cached_term_id(token)
        frequencies[index] = frequencies.get(index, 0) + tf
    indices = sorted(frequencies)
    values = tuple(frequencies[i] * (k1 + 1.0) / (frequencies[i] + norm) for i in indices)
    return SparseVector(indices=tuple(indices), values=values)


def query_vector(text: str, related: Mapping[str, float] | None = None) -> SparseVector:
    """The query vector of a question: weight 1.0 per distinct word, as Qdrant's IDF supplies the rest.

    A word with a stem of its own (`stem`) splits its weight: `1 - STEM_WEIGHT` on itself, `STEM_WEIGHT`
    on the stem, so a foldable word counts no more than one that is not, and a chunk with the exact
    form still scores above one with another inflection (the stem's IDF is never above the word's).

    Args:
        text: The question, in words or identifiers.
        related: Words the question implies, each with the weight it gets instead of 1.0 (split with
            its stem likewise); a term the question holds itself keeps its own weight too.

    Returns:
        The vector; empty when the question has no terms.
    """
    weights: dict[int, float] = {}
    weighted = [(token, 1.0) for token in dict.fromkeys(tokenize(text))]
    weighted += [(token, weight) for word, weight in (related or {}).items() for token in tokenize(word)]
    for token, weight in weighted:
        root = stem(token)
        shares = ((token, 1.0),) if root == token else ((token, 1.0 - STEM_WEIGHT), (root, STEM_WEIGHT))
        for term, share in shares:
            index = _cached_term_id(term)
            weights[index] = weights.get(index, 0.0) + share * weight
    indices = tuple(sorted(weights))
    return SparseVector(indices=indices, values=tuple(weights[i] for i in indices))


def split_header(text: str) -> tuple[str, str]:
    """Split an embedding text at its first `---` line into header and code.

    Args:
        text: The embedding text.

    Returns:
        `(header, code)`; the header is empty when there is no `---` line.
    """
    if text.startswith("---\n"):
        return "", text[4:]
    header, separator, code = text.partition(HEADER_SEPARATOR)
    return (header, code) if separator else ("", text)


def _weighted_counts(text: str) -> Counter[str]:
    header, code = split_header(text)
    counts = Counter(tokenize(code))
    for line in header.splitlines():
        label, colon, value = line.partition(": ")
        if not colon or label not in HEADER_LABELS:
            counts.update(tokenize(line))
            continue
        if label in SKIPPED_LABELS:
            continue
        tokens = tokenize(value)
        for _ in range(HEADER_BOOST if label in BOOSTED_LABELS else 1):
            counts.update(tokens)
    return counts


def _check_parameters(k1: float, b: float, avg_len: float) -> None:
    if k1 < 0:
        raise ValueError(f"k1 must not be negative, got {k1}")
    if not 0.0 <= b <= 1.0:
        raise ValueError(f"b must be within [0, 1], got {b}")
    if avg_len <= 0:
        raise ValueError(f"avg_len must be positive, got {avg_len}")


@lru_cache(maxsize=_CACHE_SIZE)
def _word_terms(word: str) -> tuple[str, ...]:
    # Identifiers repeat heavily across a code base (Zipf), so the cache answers most words.
    if "." not in word:
        return _segment_terms(word)
    segments = word.split(".")
    terms = [term for segment in segments for term in _segment_terms(segment)]
    terms.extend(_pairs(segments))
    return tuple(terms)


def _segment_terms(segment: str) -> tuple[str, ...]:
    if not segment:
        return ()
    if segment[0].isdigit():
        return tuple(_keep(_DIGITS.findall(segment)))
    whole = segment.strip("_$").lower()
    parts = _PART.findall(segment) if segment.isascii() else _NON_ASCII_PART.findall(segment)
    lowered = [part.lower() for part in parts]
    terms = [whole] if lowered == [whole] else [whole, *lowered]
    if not segment.isascii():
        terms.extend(pair for run in _UNSPACED.findall(segment) if len(run) > 2 for pair in _char_pairs(run))
    return tuple(_keep(terms))


def _char_pairs(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _pairs(segments: list[str]) -> list[str]:
    lowered = [segment.lower() for segment in segments]
    return [f"{left}.{right}" for left, right in pairwise(lowered) if _is_pair_member(left) and _is_pair_member(right)]


def _is_pair_member(segment: str) -> bool:
    return len(segment) > 1 and not segment[0].isdigit() and segment not in STOP_WORDS


def _keep(terms: Iterable[str]) -> list[str]:
    return [term for term in terms if len(term) > 1 and term not in STOP_WORDS]


def singular(word: str) -> str:
    """A rough English singular: the one plural rule of indexing and of reading questions.

    "entities" → `entity`, "classes" → `class`, "matches" → `match`, "listeners" → `listener`;
    "status", "class" and "analysis" stay.
    """
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _is_stem(base: str) -> bool:
    return len(base) >= _MIN_STEM and _VOWELS.search(base) is not None


_cached_term_id = lru_cache(maxsize=_CACHE_SIZE)(term_id)
