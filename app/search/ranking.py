"""Pure parts of search: the rerank of the candidate pool, from what the question names and asks for.

The pool is the store's fused candidates (dense and lexical, `app.store.fusion`) plus the exact matches the
structural indexes found for the question (`Evidence`: handlers of a route it names, symbols it names,
the answers of a relation it asks). The order is built in two bounded steps:

0. Qdrant's candidates are re-ordered by their scores and the file-level signals of `app.search.boosts`
   (a file named for the question, a file with several good candidates, no third chunk of one file before
   another file's first; none for a question about a behaviour, nor for one naming an annotation of members).
1. Reciprocal rank fusion of ranked lists of the pool: Qdrant's order (weight 1) and each evidence list
   (weight `EXACT_WEIGHT`), with Qdrant's own constant `RRF_K`: `score = sum(w / (RRF_K + rank))`. An
   exact match ranked first in its list outranks Qdrant's first candidate unless that one is exact too,
   and a long evidence list (every overload of `save`) decays as any ranked list does instead of filling
   the page.
2. Word boosts (`signals`: the question names the chunk's annotation, Spring role, HTTP verb or
   enclosing type: "scheduled jobs", "entities", "DELETE handlers") move a candidate up past at most
   `PLACES_PER_SIGNAL` unboosted candidates per signal, `MAX_PLACES` in all (`promote`), and none of
   the fused top `PROTECTED` (3) ends lower than `KEPT` (5): a boost never pushes a strong match out of
   the top results (tests/app/test_ranking.py checks both bounds), yet a boosted 9th can reach 5th.
   An exact match moves as far as the most boosted candidate, so word boosts do not pass it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from app.search import boosts, own_words
from app.search.aspects import surface
from app.search.boosts import asks_behaviour, enabled
from app.search.question import HTTP_VERBS, QueryTerms
from app.search.type_evidence import asks_for_type
from app.store.fusion import RRF_K
from app.store.lexical import singular
from app.store.routes import route_matches
from pipeline.model import TYPE_SYMBOLS, Chunk
from pipeline.spring import ANY_METHOD

EXACT_WEIGHT = 2.0
PLACES_PER_SIGNAL = 4  # a boosted candidate passes at most this many unboosted ones per signal ...
MAX_PLACES = 8  # ... and never more than this
PROTECTED = 3  # a candidate ranked this high by fusion ...
KEPT = 5  # ... stays this high whatever is boosted
TYPE_DROP = 3
"""How far a type that follows one of its own members moves down (`below_members`): 3 lifted natural R@5
on the real suite 0.74 -> 0.77 and left the fixture's R@5 as it was; 6 and 12 did the same on the real
suite and cost the fixture 0.94 -> 0.92 (docs/performance.md)."""
WINDOW = 40
"""The fused candidates a search always asks for (`SearchService.search`), and how far the rules that
move one candidate after another look: the top of a search is the same whatever its limit or page."""
MEMBER_WORDS = frozenset({"method", "function", "handler", "endpoint", "constructor"})
WEB_WORDS = frozenset({"handler", "endpoint", "controller", "route", "request", "api", "http", "url", "rest"})
LABELS_CACHED = 4096  # distinct annotation names and Spring roles whose words `_label_parts` keeps
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    """Pool positions the structural indexes matched exactly, each list best first."""

    routes: Sequence[int] = ()
    symbols: Sequence[int] = ()
    relation: Sequence[int] = ()

    def lists(self) -> tuple[Sequence[int], ...]:
        """The ranked lists, in the order they are fused."""
        return (self.routes, self.symbols, self.relation)


def rerank(
    terms: QueryTerms,
    chunks: Sequence[Chunk],
    evidence: Evidence = Evidence(),
    fused: int | None = None,
    scores: Sequence[float] | None = None,
) -> list[int]:
    """Indexes of `chunks` in reranked order.

    Args:
        terms: The question, read.
        chunks: The pool: Qdrant's candidates in its order, then the exact matches it lacked.
        evidence: The exact matches, as indexes into `chunks`.
        fused: How many of `chunks` Qdrant returned (all of them by default).
        scores: The store's scores of those, best first: then their order is `boosts.reordered`'s.
    """
    count = len(chunks) if fused is None else fused
    store_order: Sequence[int] = range(count)
    if scores is not None:
        lifted = own_words.lifted(terms, chunks[:count], scores[:count])
        members = enabled("annotation_set") and names_member_annotation(terms, chunks[:count])
        store_order = boosts.reordered(terms, chunks[:count], lifted, members=members)
    if enabled("types_first"):
        evidence = replace(evidence, symbols=types_first(evidence.symbols, chunks))
    ranked = [(1.0, store_order), *((EXACT_WEIGHT, lst) for lst in evidence.lists())]
    order = fuse(len(chunks), ranked)
    exact = {i for lst in evidence.lists() for i in lst}
    order = promote(order, [MAX_PLACES if i in exact else places(signals(terms, chunks[i])) for i in order])
    if asks_behaviour(terms):
        head, tail = order[:WINDOW], order[WINDOW:]
        head = below_members(members_first(head, chunks, exact), chunks, exact)
        order = (head if WEB_WORDS & terms.words else callees_first(head, chunks, exact)) + tail
    return surface(order, chunks, terms.sequence, WINDOW) if enabled("aspects") else order


def types_first(symbols: Sequence[int], chunks: Sequence[Chunk]) -> list[int]:
    """The exact name matches with the types first, each group in its order.

    A type's name is its constructors' name too: a question naming `ObjectMapper` asks for the class
    (its declaration and Javadoc), which its constructors, shorter chunks, would otherwise outrank.
    """
    return sorted(symbols, key=lambda i: chunks[i].symbol_type not in TYPE_SYMBOLS)


def members_first(order: Sequence[int], chunks: Sequence[Chunk], exact: set[int]) -> list[int]:
    """`order` with each type moved to just after the first of its own members that ranks below it.

    A type's chunk holds the words of all its members, so a question about one behaviour ("how is the
    cart emptied") often ranks the whole class above the method that has it; when both are candidates,
    the member is the answer and the type its context. `rerank` asks this only of questions (a question
    word, and no word asking for a type); a type the structural indexes matched exactly keeps its place.
    """
    first_member = _first_members(order, chunks)
    moved: dict[int, list[int]] = {}
    kept: list[int] = []
    for rank, index in enumerate(order):
        chunk = chunks[index]
        after = first_member.get(chunk.qualified_name, -1) if chunk.symbol_type in TYPE_SYMBOLS else -1
        if after > rank and index not in exact:
            moved.setdefault(order[after], []).append(index)
        else:
            kept.append(index)
    out: list[int] = []

    def emit(index: int) -> None:
        out.append(index)
        for follower in moved.get(index, ()):
            emit(follower)  # a nested type moved after its member, its outer type after it

    for index in kept:
        emit(index)
    return out


def below_members(order: Sequence[int], chunks: Sequence[Chunk], exact: set[int]) -> list[int]:
    """`order` with each type that ranks after one of its own members moved `TYPE_DROP` places further down.

    After `members_first` a type follows its member, and there it adds little: its chunk restates the
    member's signature among all the others, and takes a place the next behaviour could have (on the
    real suite two types of one service often held two of the first five places). A type the
    structural indexes matched exactly keeps its place.
    """
    first_member = _first_members(order, chunks)

    def place(rank: int, index: int) -> float:
        chunk = chunks[index]
        member = first_member.get(chunk.qualified_name) if chunk.symbol_type in TYPE_SYMBOLS else None
        if member is None or member > rank or index in exact:
            return rank
        return rank + TYPE_DROP + 0.5  # after the candidate TYPE_DROP places below it

    return [index for _, index in sorted((place(r, i), i) for r, i in enumerate(order))]


def _first_members(order: Sequence[int], chunks: Sequence[Chunk]) -> dict[str, int]:
    """Each enclosing type's qualified name -> the rank of its first member in `order`."""
    first: dict[str, int] = {}
    for rank, index in enumerate(order):
        enclosing = chunks[index].enclosing_type
        if enclosing is not None:
            first.setdefault(enclosing, rank)
    return first


def fuse(size: int, ranked: Sequence[tuple[float, Sequence[int]]]) -> list[int]:
    """Reciprocal rank fusion of weighted ranked lists of `range(size)`; ties keep the index order."""
    score = [0.0] * size
    for weight, items in ranked:
        for rank, index in enumerate(items, start=1):
            score[index] += weight / (RRF_K + rank)
    return sorted(range(size), key=lambda i: (-score[i], i))


def promote(order: Sequence[int], places: Sequence[int]) -> list[int]:
    """`order` with each item moved up past at most `places[p]` unboosted items, the head kept near the top.

    An item at fused position p sorts by `p - places[p]` (ties: more places first, then p), except that
    each of the first `PROTECTED` items is placed no later than `KEPT - PROTECTED` positions below its own.
    """
    slack = KEPT - PROTECTED
    queue = iter(sorted(range(len(order)), key=lambda p: (p - places[p], -places[p], p)))
    heads = list(range(min(PROTECTED, len(order))))
    out: list[int] = []
    placed: set[int] = set()
    while len(out) < len(order):
        if heads and heads[0] + slack <= len(out):
            pick = heads.pop(0)  # a head item due at this place
        else:
            pick = next(p for p in queue if p not in placed)
            if pick in heads:
                heads.remove(pick)
        placed.add(pick)
        out.append(pick)
    return [order[p] for p in out]


def callees_first(order: Sequence[int], chunks: Sequence[Chunk], exact: set[int]) -> list[int]:
    """`order` with the best candidate an HTTP handler calls moved to just before that handler.

    Handlers delegate: "how are all error logs deleted" ranks the controller method, whose annotation
    says it in words, above the service method it calls, which does it. A question about behaviour
    that names no web concept (`rerank`) wants the callee first and the handler as its entry point.
    A callee is a candidate whose qualified name the handler's resolved calls hold, or a method of
    the same name in a type named after the called one (`SysLogServiceImpl` for `SysLogService`),
    declared in another type: a handler delegates to collaborators, and a helper of its own class
    (`updateIfPresent` of a partial update) is a part of the handler, not the one that does the work.
    Exact matches of the structural indexes keep their places.
    """
    out = list(order)
    moved: set[int] = set()
    for index in list(out):
        handler = chunks[index]
        if not handler.http_path or index in exact or not handler.calls_fq:
            continue
        at = out.index(index)
        callee = next((i for i in out[at + 1 :] if i not in moved and _is_callee(handler, chunks[i])), None)
        if callee is not None and callee not in exact:
            out.remove(callee)
            out.insert(at, callee)
            moved.add(callee)
    return out


def _is_callee(handler: Chunk, chunk: Chunk) -> bool:
    if chunk.http_path or chunk.symbol_type in TYPE_SYMBOLS or chunk.enclosing_type == handler.enclosing_type:
        return False
    if chunk.qualified_name in handler.calls_fq:
        return True
    owner = (chunk.enclosing_type or "").rsplit(".", 1)[-1]
    for called in handler.calls_fq:
        called_type, _, called_name = called.rpartition(".")
        if called_type and called_name == chunk.name and owner.startswith(called_type.rsplit(".", 1)[-1]):
            return True
    return False


def signals(terms: QueryTerms, chunk: Chunk) -> int:
    """How many things the question names about the chunk.

    Each of its annotations and its Spring role whose words the question spells out (two labels with the
    same words, `@Service` and the role `service`, count once), its enclosing type, its HTTP verb.

    "Which methods are audited" asks for members: a type carrying the same words gets none.
    """
    if chunk.symbol_type in TYPE_SYMBOLS and MEMBER_WORDS & terms.words:
        return 0
    labels = (*chunk.annotation_names, chunk.stereotype or "")
    explained = {words for words in (_label_words(terms, label) for label in labels) if words}
    explained |= {frozenset({a.lower()}) for a in set(terms.annotations) & set(chunk.annotation_names)}
    return len(explained) + _names_enclosing(terms, chunk) + bool(set(terms.http_methods) & set(chunk.http_method))


def names_member_annotation(terms: QueryTerms, chunks: Sequence[Chunk]) -> bool:
    """Whether the question names an annotation that members among the candidates carry, and asks for no type.

    "transactional owner methods" names `@Transactional` and a noun: it asks for a set of members (the
    annotated ones about owners), wherever they are, and the file signals, which lift the one file with the
    most matching members, would answer with the busiest file's best member instead. An annotation only
    types carry (`@Service`, `@Entity`) names types, which the file signals serve; so does a question
    asking for a type ("which class is transactional", `asks_for_type`). JAX-RS's verbs (`@GET`) are the
    HTTP methods a route question names, which the route evidence serves: they name no set.
    """
    if asks_for_type(terms):
        return False
    named = set(terms.annotations)
    for chunk in chunks:
        if chunk.symbol_type in TYPE_SYMBOLS:
            continue
        labels = [a for a in chunk.annotation_names if a.upper() not in HTTP_VERBS]
        if named & set(labels) or any(_label_words(terms, a) for a in labels):
            return True
    return False


def places(count: int) -> int:
    """How many unboosted candidates a candidate with `count` signals may pass."""
    return min(PLACES_PER_SIGNAL * count, MAX_PLACES)


def names_symbol(identifier: str, chunk: Chunk) -> bool:
    """Whether `identifier` (`m`, `Type`, `Type.m`, `com.acme.Type.m`) names the chunk."""
    return spells(identifier, chunk.qualified_name, chunk.name)


def spells(identifier: str, qualified: str, name: str) -> bool:
    """Whether `identifier` names the symbol of this qualified name and name (`names_symbol` of its fields)."""
    return identifier in (qualified, name) or qualified.endswith("." + identifier)


def serves(terms: QueryTerms, route: str, chunk: Chunk) -> bool:
    """Whether the chunk handles `route` with one of the question's HTTP verbs (any verb when it names none)."""
    return handles(terms.http_methods, chunk) and any(route_matches(pattern, route) for pattern in chunk.http_path)


def handles(verbs: Iterable[str], chunk: Chunk) -> bool:
    """Whether the chunk handles one of `verbs` (upper case): any verb when none is given, all when it maps `ANY`."""
    wanted, served = set(verbs), set(chunk.http_method)
    return not wanted or ANY_METHOD in served or bool(wanted & served)


def _label_words(terms: QueryTerms, label: str) -> frozenset[str]:
    """The question's words that spell out a label (`KafkaListener` ~ "kafka listeners"); none unless all parts do."""
    parts = _label_parts(label)
    matched = [{w for w in terms.words if _same_stem(p, w)} for p in parts]
    return frozenset().union(*matched) if parts and all(matched) else frozenset()


@lru_cache(maxsize=LABELS_CACHED)
def _label_parts(label: str) -> tuple[str, ...]:
    """A label's words, lowercase, singular (`KafkaListeners` → kafka, listener; cached: asked of each candidate)."""
    return tuple(singular(p.lower()) for p in _camel_parts(label))


def _camel_parts(label: str) -> list[str]:
    """`RestController` and `rest_controller` → `Rest`, `Controller`."""
    words = label if any(c.isupper() for c in label) else label.replace("_", " ").title().replace(" ", "")
    return _CAMEL_PART.findall(words)


def _same_stem(part: str, word: str) -> bool:
    """`transactional` ~ `transaction`, `scheduled` ~ `schedule`: equal, or one extends the other by a suffix."""
    if part == word:
        return True
    short, long = (part, word) if len(part) <= len(word) else (word, part)
    return len(short) >= 5 and long.startswith(short) and len(long) - len(short) <= 3


def _names_enclosing(terms: QueryTerms, chunk: Chunk) -> bool:
    enclosing = chunk.enclosing_type or ""
    return bool(enclosing) and any(enclosing == i or enclosing.endswith("." + i) for i in terms.identifiers)
