"""Words that Java code and questions use for the same operation: the verbs of method names.

A question says "fetch", "look up" or "retrieve" where the code says `get`, `find`, `load` or
`query`; "remove" where it says `delete` or `del`; "run" where it says `execute`. Each class below
groups the verbs Java method names commonly start with for one kind of operation (CRUD, checks,
execution, messaging, lifecycle). A question word of a class also asks, at a small weight
(`SYNONYM_WEIGHT`), for the other verbs of its class, so the words the question chose score highest and
a chunk that uses another verb of the class still scores. The classes hold only general programming
verbs, never a domain's nouns; a word belongs to at most one class.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from app.store.lexical import stem

SYNONYM_WEIGHT = 0.25
"""The weight a question word's class-mates get, against 1.0 for the word itself."""

VERB_CLASSES = (
    ("get", "fetch", "retrieve", "load", "find", "query", "lookup", "look", "read", "obtain"),
    ("create", "add", "insert", "put", "save", "register", "generate"),
    ("delete", "remove", "del", "drop", "erase", "purge", "clear"),
    ("update", "modify", "edit", "change", "alter"),
    ("list", "search", "browse"),
    ("check", "verify", "validate", "validated", "verification", "ensure"),
    ("run", "execute", "execution", "invoke", "trigger", "launch"),
    ("send", "notify", "publish", "emit", "dispatch"),
    ("start", "begin", "init", "initialize"),
    ("stop", "close", "shutdown", "terminate", "cancel"),
    ("pause", "suspend"),
    ("resume", "restart"),
    ("login", "signin", "authenticate", "logon"),
    ("logout", "signout", "logoff"),
    ("convert", "transform", "format", "parse"),
    ("count", "sum", "compute", "calculate"),
    ("grant", "assign", "allocate", "alloc"),
    ("export", "download"),
)


def _classes() -> Mapping[str, tuple[str, ...]]:
    """Each verb's stem -> its class (by stem, so "fetched" and "deleting" find theirs)."""
    by_stem: dict[str, tuple[str, ...]] = {}
    for verbs in VERB_CLASSES:
        for verb in verbs:
            if by_stem.get(stem(verb), verbs) is not verbs:
                raise ValueError(f"{verb!r} is in two verb classes")
            by_stem[stem(verb)] = verbs
    return by_stem


_BY_STEM = _classes()


def related(word: str) -> tuple[str, ...]:
    """The other verbs of the class of `word` or of its inflection ("fetched"), or () when it is in none."""
    own = stem(word.lower())
    return tuple(v for v in _BY_STEM.get(own, ()) if stem(v) != own)


def synonyms(words: Iterable[str]) -> dict[str, float]:
    """The class-mates of a question's words that it does not use itself, each at `SYNONYM_WEIGHT`."""
    used = {stem(w.lower()) for w in words}
    return {v: SYNONYM_WEIGHT for w in words for v in related(w) if stem(v) not in used}
