"""The type hierarchy of the indexed code, walked at query time (issue 12).

A file is indexed alone, so a call is recorded under the receiver's declared type (`child.isActive()`
→ `Child.isActive`) and only the query can know that `Child` inherits `isActive` from `Base` in
another file. The walk reads the type chunks' `extends`/`implements` (and their `_fq` forms) one
level at a time: one store call per level, never one per type, at most `MAX_DEPTH` levels.

The rules are pure functions over chunks; `Hierarchy` runs them against a lookup (one filtered
scroll of the store, the caller's access and repository filter already inside it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from app.store.filters import Condition, any_of, either
from pipeline.model import TYPE_SYMBOLS, Chunk, SymbolType

MAX_DEPTH = 8
"""Hierarchy levels followed each way: deeper chains are rare in application code (each level costs a store call)."""

SUPERTYPE_KEYS = ("extends", "implements")
"""The type chunk fields that name supertypes; each has a `_fq` twin."""


@dataclass(frozen=True, slots=True)
class Declaration:
    """The fields of a chunk the walk reads, and nothing else (a lookup reads these, not whole payloads)."""

    qualified_name: str
    name: str
    symbol_type: SymbolType
    enclosing_type: str | None
    extends: tuple[str, ...]
    implements: tuple[str, ...]
    extends_fq: tuple[str, ...]
    implements_fq: tuple[str, ...]
    language: str

    @classmethod
    def of(cls, chunk: Chunk) -> Declaration:
        """These fields of a whole chunk."""
        return cls(*(getattr(chunk, name) for name in DECLARATION_FIELDS))


DECLARATION_FIELDS = tuple(f.name for f in dataclasses.fields(Declaration))
"""The payload fields a hierarchy lookup reads (`Declaration`'s, in its order)."""

Lookup = Callable[[Condition], Awaitable[Sequence[Declaration]]]
"""Chunks matching a condition (within the caller's access and repository scope)."""

Keep = Callable[[Declaration], bool]
"""Which roots a walk follows, by their declaration (`Hierarchy.walk`)."""


def simple_name(fq: str) -> str:
    """`com.acme.Base` → `Base` (a nested `Outer.Inner` → `Inner`)."""
    return fq.rsplit(".", 1)[-1]


def supertypes(chunk: Declaration) -> tuple[str, ...]:
    """The fully qualified supertypes a type chunk names (those its file could resolve)."""
    return (*chunk.extends_fq, *chunk.implements_fq)


def unresolved_supertypes(chunk: Declaration) -> tuple[str, ...]:
    """Simple names of supertypes its file could not resolve (a wildcard import): matched by simple name."""
    resolved = {simple_name(fq) for fq in supertypes(chunk)}
    return tuple(s for s in (*chunk.extends, *chunk.implements) if simple_name(s) not in resolved)


@dataclass(frozen=True, slots=True)
class Candidates:
    """Fully qualified type names, also by simple name (a level of the walk asks every type chunk about them)."""

    fqs: frozenset[str]
    by_simple: Mapping[str, frozenset[str]]

    @classmethod
    def of(cls, fqs: Iterable[str]) -> Candidates:
        """These names, indexed once."""
        wanted = frozenset(fqs)
        by_simple: dict[str, set[str]] = {}
        for fq in wanted:
            by_simple.setdefault(simple_name(fq), set()).add(fq)
        return cls(wanted, {name: frozenset(group) for name, group in by_simple.items()})


def parents_among(chunk: Declaration, candidates: Candidates) -> set[str]:
    """The `candidates` (fully qualified type names) that the type chunk names as direct supertypes."""
    found = set(supertypes(chunk)) & candidates.fqs
    for loose in {simple_name(s) for s in unresolved_supertypes(chunk)}:
        found.update(candidates.by_simple.get(loose, ()))
    return found


def subtype_condition(fqs: Sequence[str]) -> Condition:
    """Type chunks that name any of these types' simple names as a supertype (`parents_among` then decides).

    The simple-name fields alone: every subtype names its supertype's simple name there, resolved or
    not, and half the conditions is half the cost of a scan in local mode, which has no indexes.
    """
    return either(*(any_of(key, sorted(_written(fqs))) for key in SUPERTYPE_KEYS))


def first_level(
    found: Sequence[Declaration], roots: set[str], keep: Keep | None, *, down: bool
) -> tuple[tuple[Declaration, ...], list[Declaration]]:
    """Of a walk's first level: the roots' declarations (those `keep` keeps), and what to walk on from.

    With `keep`, the chunks a first level of the kept roots alone reads (their declarations, and with `down`
    the chunks `subtype_condition` of them matches, told from the chunks' fields): dropped roots leave no trace.
    """
    declared = tuple(c for c in found if c.qualified_name in roots and (keep is None or keep(c)))
    if keep is None:
        return declared, list(found)
    kept = {c.qualified_name for c in declared}
    written = _written(kept) if down else set()
    return declared, [
        c for c in found if c.qualified_name in kept or not written.isdisjoint((*c.extends, *c.implements))
    ]


def _written(fqs: Iterable[str]) -> set[str]:
    return {name for fq in fqs for name in _written_names(fq)}


def _written_names(fq: str) -> list[str]:
    """How a file may name a type in `extends`: `com.acme.Outer.Inner` → `Outer.Inner`, `Inner`."""
    parts = fq.split(".")
    return [".".join(parts[i:]) for i in range(len(parts)) if parts[i][:1].isupper()] or [fq]


def inheriting(roots: Iterable[str], children: Mapping[str, set[str]], redeclaring: set[str]) -> set[str]:
    """Subtypes that inherit a method from `roots`: reachable without passing a type that redeclares it."""
    seen: set[str] = set()
    frontier = [child for root in roots for child in children.get(root, ())]
    while frontier:
        fq = frontier.pop()
        if fq in seen or fq in redeclaring:
            continue
        seen.add(fq)
        frontier.extend(children.get(fq, ()))
    return seen


def in_order(start: str, parents: Mapping[str, tuple[str, ...]]) -> list[str]:
    """`start`'s ancestors nearest first (breadth first, superclass before interfaces as declared)."""
    order: list[str] = []
    seen = {start}
    level = [start]
    while level:
        following: list[str] = []
        for fq in level:
            for parent in parents.get(fq, ()):
                if parent not in seen:
                    seen.add(parent)
                    order.append(parent)
                    following.append(parent)
        level = following
    return order


@dataclass(frozen=True, slots=True)
class Walk:
    """What `Hierarchy.walk` found: supertypes (fq → its supertypes), subtypes (fq → its subtypes), the roots walked.

    `roots`: the declarations of the roots walked that the first level read (a root that is no indexed type has
    none); with `keep`, only those it kept, the roots walked.
    """

    parents: dict[str, tuple[str, ...]]
    children: dict[str, set[str]]
    roots: tuple[Declaration, ...]


@dataclass(frozen=True, slots=True)
class Hierarchy:
    """Walks of the type hierarchy through a lookup: a bounded number of store calls each."""

    lookup: Lookup

    async def types(self, condition: Condition) -> list[Declaration]:
        """The type chunks (skeletons) matching a condition."""
        return [c for c in await self.lookup(condition) if c.symbol_type in TYPE_SYMBOLS]

    async def ancestors(self, starts: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Direct supertypes of `starts` and of their supertypes, transitively: fq → its supertypes' fqs.

        A supertype that is not indexed (a library type) is a leaf: it is named, never looked up past.
        """
        return (await self.walk(starts, down=False)).parents

    async def walk(self, roots: Iterable[str], *, down: bool = True, keep: Keep | None = None) -> Walk:
        """Supertypes (fq → its supertypes) and, with `down`, subtypes (fq → its subtypes) of `roots`, transitively.

        Both directions share one store call per level: the next supertypes by qualified name and
        the types naming the last level's subtypes as a supertype. The first level reads the roots' own
        declarations (`Walk.roots`); with `keep`, a root none of whose declarations it keeps (or that is no
        indexed type) is dropped there, and the walk is the walk of the kept roots alone, in as many calls.
        """
        parents: dict[str, tuple[str, ...]] = {}
        children: dict[str, set[str]] = {}
        upward = sorted(set(roots))
        downward = list(upward) if down else []
        seen = set(upward)
        declared: tuple[Declaration, ...] = ()
        for depth in range(MAX_DEPTH):
            conditions: list[Condition] = [any_of("qualified_name", upward)] if upward else []
            if downward:
                conditions.append(subtype_condition(downward))
            if not conditions:
                break
            found = await self.types(either(*conditions))
            if depth == 0:
                declared, found = first_level(found, seen, keep, down=down)
                if keep is not None:  # the kept roots alone from here
                    seen = {c.qualified_name for c in declared}
                    upward, downward = sorted(seen), sorted(seen) if down else []
            asked_up, asked_down = set(upward), Candidates.of(downward)
            following: set[str] = set()
            for chunk in found:
                fq = chunk.qualified_name
                if fq in asked_up:
                    parents[fq] = supertypes(chunk)
                for parent in parents_among(chunk, asked_down) if asked_down.fqs else ():
                    children.setdefault(parent, set()).add(fq)
                    if fq not in seen:
                        seen.add(fq)
                        following.add(fq)
            for fq in asked_up:
                parents.setdefault(fq, ())
            upward = sorted({p for fq in asked_up for p in parents[fq]} - parents.keys())
            downward = sorted(following)
        return Walk(parents, children, declared)

    async def named_supertypes(self, name: str) -> set[str]:
        """The fully qualified names under which indexed types name `name` as a supertype (one lookup).

        For a type the index does not hold (a library's `JpaRepository`), named as it is written
        (`JpaRepository`, `Outer.Inner`): its subtypes' files resolved it through their imports; an
        unresolved one (a wildcard import) stays as written.
        """
        found: set[str] = set()
        for chunk in await self.types(subtype_condition([name])):
            resolved = supertypes(chunk)
            found.update(fq for fq in resolved if fq == name or fq.endswith("." + name))
            written = {simple_name(s) for s in unresolved_supertypes(chunk)}
            if simple_name(name) in written:
                found.add(name)
        return found

    async def declaring(self, owners: Iterable[str], method: str) -> set[str]:
        """Which of `owners` declare `method` themselves (one lookup)."""
        names = sorted({f"{owner}.{method}" for owner in owners})
        if not names:
            return set()
        return {
            c.enclosing_type or ""
            for c in await self.lookup(any_of("qualified_name", names))
            if c.symbol_type not in TYPE_SYMBOLS
        }

    async def dispatch_owners(self, owners: Iterable[str], method: str) -> set[str]:
        """Types a call of `method` may be recorded under and still run `owners`' declaration of it.

        The owners themselves; their supertypes (a call through `Iface.m` or `Base.m` may dispatch to
        the override); and their subtypes that inherit the method without redeclaring it.
        """
        roots = set(owners)
        if not roots:
            return set()
        walked = await self.walk(roots)
        up, down = walked.parents, walked.children
        below = {fq for kids in down.values() for fq in kids} - roots
        redeclaring = await self.declaring(below, method) if below else set()
        return (
            roots | (up.keys() - roots) | {p for ps in up.values() for p in ps} | inheriting(roots, down, redeclaring)
        )
