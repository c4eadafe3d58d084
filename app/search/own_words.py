"""Near-twins told apart by the module the question names: `mall-admin/` against `mall-portal/`.

The same class often exists in two modules of one repository (an admin and a storefront copy of a service,
`account-service/` and `statistics-service/` each with a client of the other), and the two copies share the
body's words and the dense model's reading. A question that names the module ("how are the resources an admin
may access looked up", "where does the account service ask the auth service ...") tells them apart by a word
that only one copy's path holds.

`lifted` adds to each of the first `boosts.DEPTH` candidates' store score `OWN_WEIGHT` x the best score x the
weighted share of the question's keywords that its identity spells (`identity`: the words of its module's folders,
the folders before the source root). A keyword counts when a word of the identity is the same word, a prefix of it
or of its stem, or a verb of the same class (`app.search.synonyms`). Each keyword weighs by how few of the
candidates' identities spell it (`weights`, over the first `boosts.DEPTH` candidates, the pool every search asks
for, so the top does not depend on the limit): a word every candidate's module holds ("service" over piggymetrics'
`*-service/` modules) tells no twin from another, a word only one twin's module holds ("admin", "account") decides
between them. Unlike the file signals of `app.search.boosts`, this one applies to questions about a behaviour too:
it judges a candidate by where it is declared, not its file by its neighbours.

`OWN_NAMES` adds the member's and its type's names to the identity ("which recipients are ready for the backup
email" → `RecipientRepository.findReadyForBackup`): on the real suite natural R@5 0.82 → 0.84-0.85, but it costs
semble's benchmark a query (0.828 → 0.824), so it is off (docs/performance.md, "Near-twins ...").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from functools import lru_cache

from app.search.boosts import DEPTH, enabled, is_symbol_question, keywords, matches_word
from app.search.question import SCAFFOLDING, QueryTerms
from app.search.synonyms import related
from app.store.lexical import singular, stem, tokenize
from pipeline.model import TYPE_SYMBOLS, Chunk

OWN_WEIGHT = 1.0
"""The lift of a candidate whose identity spells every keyword, times the best score (0.5 and 1.0 measured)."""
OWN_NAMES = False
"""Whether the identity holds the member's and its type's names too (measured, not kept: see the module)."""
_SCAFFOLDING = frozenset(singular(w) for w in SCAFFOLDING)
"""The question's scaffolding as `QueryTerms.words` holds it, singular ("does" → `doe`)."""
SOURCE_ROOTS = frozenset({"src", "java", "kotlin"})
"""Folders where a module's path ends and its sources begin (`mall-portal/src/main/java/...`)."""


def lifted(terms: QueryTerms, chunks: Sequence[Chunk], scores: Sequence[float]) -> list[float]:
    """`scores` with each candidate lifted by the weighted share of the question's keywords its identity spells."""
    top = max(scores, default=0.0)
    keys = sorted(k for k in keywords(terms) if k not in _SCAFFOLDING)
    if not enabled("own_words") or top <= 0.0 or not keys or is_symbol_question(terms):
        return list(scores)
    spelled = [spelled_keys(keys, identity(chunk)) for chunk in chunks]
    weight = weights(keys, spelled[:DEPTH])  # the pool every search asks for: the top does not depend on the limit
    total = sum(weight.values())
    if total <= 0.0:
        return list(scores)
    return [
        score + (OWN_WEIGHT * top * sum(weight[k] for k in own) / total if i < DEPTH else 0.0)
        for i, (score, own) in enumerate(zip(scores, spelled, strict=True))
    ]


def identity(chunk: Chunk) -> frozenset[str]:
    """The words of where a chunk is declared: its module's folders; with `OWN_NAMES` its own and its type's names.

    The module is every folder of the path before its source root (`mall-portal/src/main/java/...` → mall,
    portal), so a question naming a module ("admin", "portal", "account service") tells the copies of one
    class in two modules apart. With `OWN_NAMES`, a member adds its name and its enclosing type's simple name,
    a type its name.
    """
    words = _module_words(chunk.file_path)
    if not OWN_NAMES:
        return words
    words |= _name_words(chunk.name)
    if chunk.symbol_type not in TYPE_SYMBOLS and chunk.enclosing_type:
        words |= _name_words(chunk.enclosing_type.rsplit(".", 1)[-1])
    return words


def module_folders(file_path: str) -> tuple[str, ...]:
    """The folders of a path before its first source root folder; none when it has no such folder."""
    folders = file_path.split("/")[:-1]
    end = next((i for i, folder in enumerate(folders) if folder in SOURCE_ROOTS), 0)
    return tuple(folders[:end])


@lru_cache(maxsize=1 << 14)
def _name_words(name: str) -> frozenset[str]:
    """A name's words, singular (`RecipientRepository` → recipient, repository, recipientrepository).

    Cached: a type's name comes with each of its members, a module's with each of its chunks.
    """
    return frozenset(singular(w) for w in tokenize(name) if len(w) > 1)


@lru_cache(maxsize=1 << 14)
def _module_words(file_path: str) -> frozenset[str]:
    return frozenset().union(*map(_name_words, module_folders(file_path)))


def spelled_keys(keys: Iterable[str], words: frozenset[str]) -> frozenset[str]:
    """The keywords a word of `words` spells: the same word, a prefix of it or its stem, or a verb of its class."""
    return frozenset(k for k in keys if any(_spells(k, w) for w in words))


def weights(keys: Sequence[str], spelled: Sequence[frozenset[str]]) -> dict[str, float]:
    """Each keyword's weight: `log((n + 1) / (spelling + 1))` over the `n` candidates, `spelling` of them spell it."""
    n = len(spelled)
    return {k: math.log((n + 1) / (sum(k in own for own in spelled) + 1)) for k in keys}


@lru_cache(maxsize=1 << 14)
def _spells(key: str, word: str) -> bool:
    """The same word or a prefix (`matches_word`); a verb of the key's class only whole or by its stem.

    A prefix of a short verb would spell too much: "dropped" ~ `del` must not spell `delivery`. Cached: the
    candidates of one question share most words, and questions share their keywords.
    """
    return matches_word(key, word) or stem(word) in _verb_stems(key)


@lru_cache(maxsize=1 << 12)
def _verb_stems(key: str) -> frozenset[str]:
    return frozenset(stem(verb) for verb in related(key))
