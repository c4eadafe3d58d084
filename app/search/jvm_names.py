"""What a call of a Kotlin declaration is recorded under, seen from the query side (issue 29).

The index records calls under JVM names (`pipeline.kotlin.interop`): a Kotlin property read as its getter,
a call of another file's top-level function as `<package>.fn`. `app.search.lookups` asks here which keys
a call of a named declaration may have (`jvm_call_keys`) and which top-level functions a call's
candidates name (`top_level_targets`); each answer is one or two store lookups, filtered by the caller's
access inside the query (`Reader`).
"""

from __future__ import annotations

from collections.abc import Sequence

from app.auth.access import Access
from app.search.hits import Hit
from app.search.reader import Reader
from app.search.scoping import Filters
from app.store.filters import all_of, any_of, either, eq
from pipeline.kotlin.interop import JVM_NAME, getter_name, is_accessor_name, jvm_names, setter_name
from pipeline.model import LANGUAGES, TYPE_SYMBOLS, SymbolType

KOTLIN = LANGUAGES[1]
COMPONENT_TYPES = frozenset({SymbolType.RECORD, SymbolType.ANNOTATION})
"""Types whose methods without parameters Kotlin reads as properties (`point.x`, `mapping.path`)."""


def jvm_calls(
    method: str, declared: Sequence[Hit], components: frozenset[str] = frozenset()
) -> tuple[list[str], list[tuple[str, str]]]:
    """The method names a call of `method` of these declarations may be recorded under, and Kotlin functions.

    A name that is not an accessor's and that no function declares (a Kotlin property, plain or with a
    chunk; a Java field) is read through its getter and setter (`pipeline.kotlin.interop`), renamed by
    `@get:JvmName`; a Kotlin function by its `@JvmName` too. A Java method without parameters of a type in
    `components` (an annotation's attribute, a record's component) also by its getter: a Kotlin read of it is
    recorded so. Not a class's `ping()`: a Java call of its `getPing()` is another method.
    The Kotlin functions come back as (their enclosing type, name): a top-level one's call from another
    file is recorded as `<package>.name`.
    """
    names = {method: None}
    for hit in declared:  # renamed to `method`: a Kotlin caller calls it by its Kotlin name
        names.update(dict.fromkeys(_renamed_to(method, hit)))
    declared = [h for h in declared if h.chunk.name == method]
    functions = [h for h in declared if not h.chunk.signature.startswith(("val ", "var "))]
    kotlin = [h for h in declared if h.chunk.language == KOTLIN]
    if not functions and not is_accessor_name(method):
        names.update(dict.fromkeys((getter_name(method), setter_name(method))))
    for hit in kotlin:
        chunk = hit.chunk
        is_property = hit not in functions
        names.update(dict.fromkeys(jvm_names(method, is_property=is_property, annotations=chunk.annotations)))
    bare = [
        h
        for h in functions
        if h.chunk.language != KOTLIN and not h.chunk.parameter_types and h.chunk.enclosing_type in components
    ]
    if bare and not is_accessor_name(method):
        names[getter_name(method)] = None
    packaged = [
        (h.chunk.enclosing_type or "", h.chunk.name) for h in kotlin if h in functions and h.chunk.enclosing_type
    ]
    return list(names), packaged


def _renamed_to(method: str, hit: Hit) -> tuple[str, ...]:
    """What Kotlin code's call of a declaration `@JvmName`d `method` is recorded under (`getLabel` for `label`)."""
    chunk = hit.chunk
    if chunk.language != KOTLIN or chunk.name == method:
        return ()
    is_property = chunk.signature.startswith(("val ", "var "))
    renamed = jvm_names(chunk.name, is_property=is_property, annotations=chunk.annotations)
    if method not in renamed:
        return ()
    if not is_property:
        return (chunk.name,)
    return ((getter_name(chunk.name), setter_name(chunk.name))[renamed.index(method)],)


async def jvm_call_keys(
    reader: Reader, access: Access, owners: set[str], method: str, repo: str | None
) -> tuple[list[str], set[str]]:
    """`jvm_calls` of the owners' declarations of `method`, and the `<package>.fn` keys of facades' functions."""
    named = either(eq("name", method), eq("annotation_names", JVM_NAME))  # `@get:JvmName("method")` too
    condition = all_of(any_of("enclosing_type", sorted(owners)), named)
    declared = await reader.lookup(access, Filters(repo=repo), condition)
    hierarchy = reader.hierarchy(access, repo)  # a facade is no type: a type has its chunk
    owning = sorted(owners | {h.chunk.enclosing_type or "" for h in declared} - {""})
    types = await hierarchy.types(any_of("qualified_name", owning)) if declared else []
    components = frozenset(c.qualified_name for c in types if c.symbol_type in COMPONENT_TYPES)
    methods, functions = jvm_calls(method, declared, components)
    if not functions:
        return methods, set()
    typed = {c.qualified_name for c in types}
    return methods, {f"{owner.rpartition('.')[0]}.{fn}" for owner, fn in functions if owner not in typed}


async def top_level_targets(
    reader: Reader, access: Access, repo: str | None, wanted: dict[str, set[str]]
) -> dict[str, list[Hit]]:
    """Kotlin top-level functions named by calls' `<package>.fn` candidates (two lookups for every call)."""
    if not wanted:
        return {}
    names = sorted({key.rpartition(".")[2] for keys in wanted.values() for key in keys})
    condition = all_of(any_of("name", names), eq("language", KOTLIN))
    found = [h for h in await reader.lookup(access, Filters(repo=repo), condition) if h.chunk.enclosing_type]
    owners = sorted({h.chunk.enclosing_type or "" for h in found})
    typed = {c.qualified_name for c in await reader.hierarchy(access, repo).types(any_of("qualified_name", owners))}
    facades = [h for h in found if h.chunk.enclosing_type not in typed and h.symbol_type not in TYPE_SYMBOLS]
    answer: dict[str, list[Hit]] = {}
    for call, keys in wanted.items():
        targets = [h for h in facades if f"{(h.chunk.enclosing_type or '').rpartition('.')[0]}.{h.chunk.name}" in keys]
        if targets:
            answer[call] = targets
    return answer


def is_package(owner: str) -> bool:
    """`com.acme.util`: a package (its last name is lower case), not a type (`com.acme.Owner`)."""
    return owner[:1].islower() and owner.rpartition(".")[2][:1].islower()
