"""The call keys of many methods at once (issue 28, `impact`): `lookups.call_keys` for a whole frontier.

`lookups.call_keys` walks the type hierarchy of one method's owner (a store call per level, then one for
the subtypes that redeclare it). `impact` asks it for every method of a level, a few hundred at 100k chunks,
so here the owners of all the level's qualified methods share one walk (`Hierarchy.walk` over their union,
whose first level reads their declarations and keeps the owners answered here) and one redeclaration lookup,
and each method's keys are read from the shared maps: the same keys `call_keys` gives (its owner, the
owner's supertypes, and the subtypes that inherit the method without redeclaring it). A name that is not
package-qualified (`Type.m`, a type in the default package) goes to `call_keys` itself, and so does a method
whose owner is Kotlin, a record or an annotation, or no indexed type (a Kotlin file's facade): its JVM names
(`app.search.jvm_names`) need its declaration.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from app.search.hierarchy import Declaration, Hierarchy, Walk, inheriting, simple_name
from app.search.jvm_names import COMPONENT_TYPES, KOTLIN
from app.store.filters import any_of
from pipeline.model import TYPE_SYMBOLS

Keys = tuple[list[str], list[str]]
"""A method's `calls_fq` and `calls` keys (`lookups.call_keys`)."""


async def frontier_keys(
    hierarchy: Hierarchy, names: Sequence[str], one: Callable[[str], Awaitable[Keys]]
) -> list[Keys]:
    """The keys of each qualified method name, in order; `one` answers the names that are not package-qualified."""
    split = [_owner_method(name) for name in names]
    owners = {owner for owner, _ in filter(None, split)}
    # The walk's first level reads the owners' declarations: those `_plain` keeps are walked, and answered here.
    walked = await hierarchy.walk(owners, keep=_plain) if owners else Walk({}, {}, ())
    up, down = walked.parents, walked.children
    owners = {d.qualified_name for d in walked.roots}
    split = [parts if parts is not None and parts[0] in owners else None for parts in split]
    below = {owner: _reach(owner, down) - {owner} for owner in owners}
    wanted = sorted({f"{fq}.{method}" for owner, method in filter(None, split) for fq in below[owner]})
    declared = (
        {
            c.qualified_name
            for c in await hierarchy.lookup(any_of("qualified_name", wanted))
            if c.symbol_type not in TYPE_SYMBOLS
        }
        if wanted
        else set()
    )
    out: list[Keys] = []
    for name, parts in zip(names, split, strict=True):
        if parts is None:
            out.append(await one(name))
            continue
        owner, method = parts
        redeclaring = {fq for fq in below[owner] if f"{fq}.{method}" in declared}
        related = {owner} | _above(owner, up) | inheriting({owner}, down, redeclaring)
        out.append(
            (sorted(f"{fq}.{method}" for fq in related), sorted({f"{simple_name(fq)}.{method}" for fq in related}))
        )
    return out


def _plain(declared: Declaration) -> bool:
    """An owner whose method's keys the shared maps give: not Kotlin, a record or an annotation (JVM names)."""
    return declared.language != KOTLIN and declared.symbol_type not in COMPONENT_TYPES


def _owner_method(name: str) -> tuple[str, str] | None:
    """(`com.acme.Base`, `isActive`) of `com.acme.Base.isActive`; None for a name `call_keys` must read itself."""
    owner, _, method = name.rpartition(".")
    return (owner, method) if owner and name[:1].islower() and "(" not in name else None


def _reach(start: str, edges: Mapping[str, set[str]]) -> set[str]:
    seen = {start}
    todo = [start]
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _above(start: str, parents: Mapping[str, tuple[str, ...]]) -> set[str]:
    """Every supertype of `start` the walk named (indexed or not), as `dispatch_owners` counts them."""
    return _reach(start, {fq: set(ps) for fq, ps in parents.items()}) - {start}
