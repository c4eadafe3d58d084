"""Exact lookups of symbols and their relations: a name, its callers and callees, injectors, implementations.

Each is a few store lookups in file order, filtered by the caller's access inside the query (`Reader`);
calls and types are followed through the hierarchy the caller may read (`app.search.hierarchy`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.auth.access import Access
from app.search.endpoints import annotation_types
from app.search.hierarchy import in_order, simple_name
from app.search.hits import Hit, in_file_order
from app.search.jvm_names import KOTLIN, is_package, jvm_call_keys, jvm_calls, top_level_targets
from app.search.reader import Reader
from app.search.scoping import EVERYWHERE, Filters, Where
from app.store.filters import Condition, Filter, all_of, any_of, either, eq
from pipeline.calls import returned_key
from pipeline.model import TYPE_SYMBOLS
from pipeline.spring import BEAN_ANNOTATIONS, learned_stereotypes


async def outline(reader: Reader, access: Access, repo: str, file_path: str) -> list[Hit]:
    """Every chunk of one file in line order."""
    return await reader.lookup(access, Filters(repo=repo), eq("file_path", file_path.strip("/")))


async def symbol(
    reader: Reader,
    access: Access,
    name: str,
    where: Where = EVERYWHERE,
) -> list[Hit]:
    """A method or type by qualified or simple name (`com.x.A.m`, `A.m`, `m`, `A`, `m(Long)`); all overloads.

    Every lookup takes a `Where` (a repository or group, a folder, e.g. a Maven module, or a file, a
    language); all of it goes into the store query.
    """
    base, params = _split_params(name)
    simple = base.rsplit(".", 1)[-1]
    qualified = base if "." in base and base[:1].islower() else None
    condition = eq("qualified_name", qualified) if qualified else eq("name", simple)
    hits = await reader.lookup(access, where.as_filters(), condition)
    if "." in base and not qualified:
        hits = [h for h in hits if h.qualified_name.endswith("." + base)]
    if params is not None:
        hits = [h for h in hits if _params_match(h.chunk.parameter_types, params)]
    return hits


async def callers(
    reader: Reader,
    access: Access,
    name: str,
    where: Where = EVERYWHERE,
) -> list[Hit]:
    """Chunks whose body calls the named method (matched on `calls_fq`, else on `Type.method`).

    Through the type hierarchy: a call recorded under a subtype that inherits the method, or
    under a supertype whose declaration it overrides (`Iface.m` for `Impl.m`), counts too.
    `where`'s folder and language narrow the callers, not the method: its declaring types are looked up in
    all of `where.repo` (a Kotlin caller of a Java method).
    """
    condition = await callers_condition(reader, access, name, where.in_repo())
    if condition is None:
        return []
    return await reader.lookup(access, where.as_filters(), condition)


async def declaring_types(reader: Reader, access: Access, name: str, repo: str | None = None) -> list[str]:
    """The types declaring a method named bare (`getName`, no type): several mean the name alone is ambiguous."""
    base, _ = _split_params(name)
    if "." in base:
        return []
    targets = await symbol(reader, access, base, Where(repo=repo))
    return sorted({h.chunk.enclosing_type or "" for h in targets if h.symbol_type not in TYPE_SYMBOLS} - {""})


MAX_TYPES = 10
"""Declaring types of a bare method name whose callers one answer looks up (`callers_by_type`); past it, none."""
MAX_TYPE_CALLERS = 200
"""Callers one declaring type shows in such an answer (the first in file order)."""


async def callers_by_type(
    reader: Reader,
    access: Access,
    name: str,
    owners: Sequence[str],
    where: Where = EVERYWHERE,
    limit: int = MAX_TYPE_CALLERS,
) -> list[tuple[str, list[tuple[Hit, bool]]]]:
    """For each declaring type, the callers of its method of that name, each with whether its receiver resolved.

    A caller whose call is recorded under the type's qualified name (`calls_fq`: the receiver's declared type
    resolved through the file's imports) is True; one matched by the type's simple name alone (`calls`: the
    receiver's type has that name, which another type may share) is False (issue 28). More than `MAX_TYPES`
    owners (`get`, `size`) give no groups: a few lookups per type, for hundreds of types, answer nothing useful.
    """
    if len(owners) > MAX_TYPES:
        return []
    method = _split_params(name)[0].rpartition(".")[2]
    answer: list[tuple[str, list[tuple[Hit, bool]]]] = []
    narrowed = where.as_filters()
    for owner in owners:
        keys_fq, keys = await call_keys(reader, access, f"{owner}.{method}", where.in_repo(), returning=True)
        conditions = [any_of(field, found) for field, found in (("calls_fq", keys_fq), ("calls", keys)) if found]
        hits = await reader.lookup(access, narrowed, either(*conditions), limit=limit) if conditions else []
        exact = set(keys_fq)
        answer.append((owner, [(h, not exact.isdisjoint(h.chunk.calls_fq)) for h in hits]))
    return answer


async def callers_condition(reader: Reader, access: Access, name: str, where: Where) -> Condition | None:
    """What a caller of the named method matches (None: nothing can): its call keys, hierarchy included.

    `where` picks which method is meant, as in `call_keys`: a caller that narrows only its callers passes
    `where.in_repo()`.
    """
    keys_fq, keys = await call_keys(reader, access, name, where, returning=True)
    conditions: list[Condition] = []
    if keys_fq:
        conditions.append(any_of("calls_fq", keys_fq))
    if keys:
        conditions.append(any_of("calls", keys))
    return either(*conditions) if conditions else None


async def callees(
    reader: Reader,
    access: Access,
    name: str,
    where: Where = EVERYWHERE,
) -> list[tuple[str, list[Hit]]]:
    """What the named method calls: each call as written, with the indexed symbols it resolves to.

    `where`'s folder and language pick which method is meant; the called symbols are looked up in all of its repo.

    Every call is resolved from a few lookups in all (by qualified name where the caller's imports
    made it exact, else by method name), not one per call: each lookup is a scan in embedded mode.
    A call on a type that inherits the method resolves to the nearest supertype declaring it
    (`child.isActive()` → `Base.isActive`), walked a level per lookup (app.search.hierarchy). A Kotlin call
    that no type declares resolves to the top-level function its `<package>.fn` candidates name.
    """
    # (call as written, its method name or None when it cannot resolve, exact qualified names it may be)
    calls: list[tuple[str, str | None, list[str]]] = []
    packaged: dict[str, set[str]] = {}  # a call's `<package>.fn` candidates (`pipeline.calls.Unqualified`)
    for hit in await symbol(reader, access, name, where):
        fq = set(hit.chunk.calls_fq)
        for call in hit.chunk.calls:
            method = _method_of(call)
            calls.append((call, method, sorted(f for f in fq if f.endswith("." + call)) if method is not None else []))
            if method is not None and hit.chunk.language == KOTLIN:
                found = {f for f in fq if f.endswith("." + method) and is_package(f.rpartition(".")[0])}
                packaged.setdefault(call, set()).update(found)
    exact_names = sorted({f for _, _, exact in calls for f in exact})
    methods = sorted({method for _, method, exact in calls if method is not None and not exact})
    repo = where.repo
    scope = Filters(repo=repo)
    by_fq = await reader.lookup(access, scope, any_of("qualified_name", exact_names)) if exact_names else []
    by_name = await reader.lookup(access, scope, any_of("name", methods)) if methods else []
    resolved: dict[str, list[Hit]] = {}
    for call, method, exact in calls:
        if method is None:
            targets = []
        elif exact:
            targets = [h for h in by_fq if h.qualified_name in exact]
        else:
            targets = [h for h in by_name if h.chunk.name == method and h.qualified_name.endswith("." + call)]
        resolved[call] = targets
    inherited = await inherited_targets(
        reader, access, repo, [(call, method, exact) for call, method, exact in calls if method and not resolved[call]]
    )
    unresolved = {c: p for c, p in packaged.items() if p and not resolved[c] and not inherited.get(c)}
    top = await top_level_targets(reader, access, repo, unresolved)  # a member, inherited too, goes first
    return [(call, resolved[call] or inherited.get(call) or top.get(call, [])) for call, _, _ in calls]


async def inherited_targets(
    reader: Reader, access: Access, repo: str | None, calls: Sequence[tuple[str, str | None, list[str]]]
) -> dict[str, list[Hit]]:
    """Calls that name no declaration resolved to the nearest supertype of their receiver declaring the method."""
    if not calls:
        return {}
    hierarchy = reader.hierarchy(access, repo)
    # The receiver's fully qualified types: from the exact name, else the indexed types of that simple name.
    receivers: dict[str, set[str]] = {}
    loose = sorted({call.rsplit(".", 1)[0] for call, _, exact in calls if not exact})
    by_simple: dict[str, set[str]] = {}
    if loose:
        for chunk in await hierarchy.types(any_of("name", sorted({simple_name(r) for r in loose}))):
            by_simple.setdefault(chunk.name, set()).add(chunk.qualified_name)
    for call, _, exact in calls:
        owner = call.rsplit(".", 1)[0]
        receivers[call] = (
            {e.rsplit(".", 1)[0] for e in exact}
            if exact
            else {fq for fq in by_simple.get(simple_name(owner), ()) if fq.endswith("." + owner) or fq == owner}
        )
    parents = await hierarchy.ancestors({fq for fqs in receivers.values() for fq in fqs})
    wanted = {
        f"{ancestor}.{method}"
        for call, method, _ in calls
        for fq in receivers[call]
        for ancestor in in_order(fq, parents)
    }
    found: dict[str, list[Hit]] = {}
    if wanted:
        for hit in await reader.lookup(access, Filters(repo=repo), any_of("qualified_name", sorted(wanted))):
            if hit.symbol_type not in TYPE_SYMBOLS:
                found.setdefault(hit.qualified_name, []).append(hit)
    out: dict[str, list[Hit]] = {}
    for call, method, _ in calls:
        targets: list[Hit] = []
        for fq in sorted(receivers[call]):
            nearest = next((found[f"{a}.{method}"] for a in in_order(fq, parents) if f"{a}.{method}" in found), [])
            targets.extend(nearest)
        out[call] = targets
    return out


async def call_keys(
    reader: Reader, access: Access, name: str, where: Where = EVERYWHERE, *, returning: bool = False
) -> tuple[list[str], list[str]]:
    """The `calls_fq` and `calls` keys a call of the named method may be recorded under (hierarchy included).

    `where` picks which method is meant: its folder and language narrow the declarations a name not fully
    qualified is looked up by (`isActive`'s declaring types, the types named `Base` of `Base.isActive`, a
    Kotlin facade's functions); a qualified owner (`com.acme.Base.isActive`) is taken as named. The
    hierarchy and the keys' other lookups read all of `where.repo` (the calls may be anywhere in it).

    Under its JVM names too (`jvm_calls`): a Kotlin property `Owner.name` is called as `getName`/`setName`,
    and a Kotlin top-level function by another file of its package as `<package>.fn`. With `returning`, also
    on what a method declares it returns (`_returning_keys`: one more lookup, asked by callers questions, not
    by `impact`'s walk, which asks for keys at every hop).
    """
    base, _ = _split_params(name)
    owner, _, method = base.rpartition(".")
    repo = where.repo
    hierarchy = reader.hierarchy(access, repo)
    if owner and base[:1].islower():  # `com.acme.Base.isActive`: the owner is known
        owners = {owner}
    elif owner:  # `Base.isActive`: the indexed types named Base, declaring the method or inheriting it
        named = await hierarchy.types(all_of(eq("name", simple_name(owner)), *where.narrowing()))
        owners = {
            c.qualified_name for c in named if c.qualified_name == owner or c.qualified_name.endswith("." + owner)
        } or await hierarchy.named_supertypes(owner)  # else a library type that indexed types extend
        if not owners:  # `SchedulesKt.shownName`: a Kotlin file's facade class has no type chunk
            owners = {h.chunk.enclosing_type or "" for h in await _top_level(reader, access, base, where)} - {""}
    else:  # `isActive`: the types that declare it
        targets = await symbol(reader, access, base, where)
        owners = {h.chunk.enclosing_type or "" for h in targets if h.symbol_type not in TYPE_SYMBOLS} - {""}
    if not owners:
        methods = jvm_calls(method, [])[0]
        return [], sorted(f"{owner}.{m}" for m in methods) if owner else []  # a type the index does not know
    methods, packaged = await jvm_call_keys(reader, access, owners, method, repo)
    related = await hierarchy.dispatch_owners(owners, method)
    keys_fq = sorted({f"{fq}.{m}" for fq in related for m in methods} | packaged)
    keys = sorted(
        {f"{simple_name(fq)}.{m}" for fq in related for m in methods}
        | ({base} if owner and not owner[:1].islower() else set())
        | (await _returning_keys(reader, access, related, methods, repo) if returning else set())
    )
    return keys_fq, keys


MAX_RETURNING = 200
"""Chunks calling a method on a call's result that one call-keys lookup reads (`_returning_keys`), at most."""


async def _returning_keys(
    reader: Reader, access: Access, owners: set[str], methods: Sequence[str], repo: str | None
) -> set[str]:
    """`PetRepository.findById().addVisit`: a call on what a method declares it returns, one of the owners.

    A Kotlin local typed by a call (`val pet = pets.findById(id)`) has its calls recorded on that chain, with
    a `returned_key` mark: the caller's file cannot know `findById`'s return type. Two exact lookups: the
    chunks marked for the method, then the declarations of the methods their chains call, whose signature
    (`findById(id: Int): Pet`, both languages' form) names the return type, matched by simple name.
    """
    if not owners or not methods:
        return set()
    marked = await reader.lookup(
        access, Filters(repo=repo), any_of("calls_fq", [returned_key(m) for m in methods]), limit=MAX_RETURNING
    )
    ends = tuple(f"().{m}" for m in methods)
    chains: dict[str, set[tuple[str, str]]] = {}  # the called method's name: (its type as written, the chain)
    for hit in marked:
        for chain in hit.chunk.calls:
            receiver = chain.rpartition(".")[0]
            owner, _, called = receiver[:-2].rpartition(".")
            if chain.endswith(ends) and owner and "(" not in owner:
                chains.setdefault(called, set()).add((owner, chain))
    if not chains:
        return set()
    wanted = {simple_name(fq) for fq in owners}
    keys: set[str] = set()
    for hit in await reader.lookup(access, Filters(repo=repo), any_of("name", sorted(chains))):
        returns = hit.chunk.signature.rpartition("): ")[2].rstrip("?")
        if hit.symbol_type in TYPE_SYMBOLS or returns not in wanted:
            continue
        declaring = (hit.chunk.enclosing_type or "").rsplit(".", 1)[-1]
        keys.update(chain for owner, chain in chains[hit.chunk.name] if owner.rsplit(".", 1)[-1] == declaring)
    return keys


async def _top_level(reader: Reader, access: Access, base: str, where: Where) -> list[Hit]:
    """Kotlin functions and properties named `Facade.fn` (their facade class is no indexed type)."""
    return [
        h
        for h in await symbol(reader, access, base, where)
        if h.chunk.language == KOTLIN and h.symbol_type not in TYPE_SYMBOLS
    ]


async def injectors(
    reader: Reader,
    access: Access,
    type_name: str,
    where: Where = EVERYWHERE,
) -> list[Hit]:
    """Types (and their constructors, setters, @Bean methods) that receive the named type by injection.

    Beans of a stereotype learned from the index (`bean_stereotypes`) count too: their
    constructor's `injects_if_bean`, recorded because the file alone could not tell.
    """
    condition = _type_condition("injects", type_name)
    scope = where.as_filters()
    learned = await bean_stereotypes(reader, access)
    if not learned:
        return await reader.lookup(access, scope, condition)
    if_bean = _type_condition("injects_if_bean", type_name)
    hits = await reader.lookup(
        access, scope, either(condition, all_of(if_bean, any_of("annotation_names", sorted(learned))))
    )
    # A constructor's chunk carries its own annotations, not its class's: found by its class.
    beans = sorted({h.qualified_name for h in hits if h.symbol_type in TYPE_SYMBOLS and h.chunk.injects_if_bean})
    if beans:
        seen = {h.id for h in hits}
        members = await reader.lookup(access, scope, all_of(if_bean, any_of("enclosing_type", beans)))
        hits = in_file_order([*hits, *(h for h in members if h.id not in seen)])
    return hits


async def dependencies(reader: Reader, access: Access, type_name: str, repo: str | None = None) -> list[str]:
    """What the named type receives by injection (the inverse of `injectors`), learned stereotypes included."""
    types = [
        h.chunk for h in await symbol(reader, access, type_name, Where(repo=repo)) if h.symbol_type in TYPE_SYMBOLS
    ]
    learned = await bean_stereotypes(reader, access) if any(c.injects_if_bean for c in types) else frozenset()
    found: dict[str, None] = {}
    for chunk in types:
        found.update(dict.fromkeys(chunk.injects))
        if learned.intersection(chunk.annotation_names):
            found.update(dict.fromkeys(chunk.injects_if_bean))
    return sorted(found)


async def bean_stereotypes(reader: Reader, access: Access) -> frozenset[str]:
    """Annotation types declared anywhere the caller may read that make a class a bean (one lookup).

    Learned across repositories: an organization's `@UseCase` may be declared in a shared library's
    project. The frameworks' own stereotypes are known at index time (`pipeline.spring.STEREOTYPES`).
    """
    declared = await annotation_types(reader, access)
    learned = learned_stereotypes({h.chunk.name: h.chunk.annotation_names for h in declared})
    return learned - BEAN_ANNOTATIONS


INDIRECT_ROOTS = 100
"""The most direct subtypes whose own subtypes `implementations` looks for."""


async def implementations(
    reader: Reader,
    access: Access,
    type_name: str,
    where: Where = EVERYWHERE,
) -> list[Hit]:
    """Types that implement or extend the named type: directly first, then through another indexed type.

    `AuditedMailer extends Mailer implements Notifier` is a `Notifier` too: the types below the direct ones
    come from the hierarchy walk (`Hierarchy.walk`, at most `MAX_DEPTH` levels), nearest level first. A type
    with more than `INDIRECT_ROOTS` direct subtypes (`Serializable`) answers with those alone: the walk would
    read most of the index for a list no one reads through.
    """
    should = [_type_condition(key, type_name) for key in ("implements", "extends")]
    scope = where.as_filters()
    direct = [h for h in await reader.lookup(access, scope, either(*should)) if h.symbol_type in TYPE_SYMBOLS]
    if not direct or len(direct) > INDIRECT_ROOTS:
        return direct
    below = (await reader.hierarchy(access, where.repo).walk({h.qualified_name for h in direct})).children
    seen = {h.qualified_name for h in direct}
    levels = _levels_below([h.qualified_name for h in direct], below, seen)
    if not levels:
        return direct
    found = await reader.lookup(access, scope, any_of("qualified_name", levels))
    by_name = {h.qualified_name: h for h in found if h.symbol_type in TYPE_SYMBOLS}
    return direct + [by_name[fq] for fq in levels if fq in by_name]


def _levels_below(starts: Sequence[str], children: Mapping[str, set[str]], seen: set[str]) -> list[str]:
    """The subtypes of `starts` not in `seen`, level by level, each level sorted."""
    out: list[str] = []
    level = list(starts)
    while level:
        following = sorted({kid for fq in level for kid in children.get(fq, ())} - seen)
        seen.update(following)
        out.extend(following)
        level = following
    return out


def _method_of(call: str) -> str | None:
    """The method of `Type.method`; None for an unqualified or chained call, which resolves to nothing."""
    owner, _, method = call.rpartition(".")
    return None if not owner or "(" in owner else method


def _type_condition(key: str, type_name: str) -> Filter:
    """Match a type by simple name on `key` or by fully qualified name on `key_fq`."""
    base = type_name.strip()
    if "." in base and base[:1].islower():
        return either(eq(f"{key}_fq", base), eq(key, base.rsplit(".", 1)[-1]))
    return either(eq(key, base))


def _split_params(name: str) -> tuple[str, list[str] | None]:
    base, paren, rest = name.strip().partition("(")
    if not paren:
        return base, None
    inner = rest.rstrip(")").strip()
    return base, [p.strip() for p in inner.split(",")] if inner else []


def _params_match(declared: Sequence[str], wanted: Sequence[str]) -> bool:
    if len(declared) != len(wanted):
        return False
    # A parameter may be given with or without type arguments or names: `List<OwnerDto> dtos` ~ `List`.
    return all(
        d.split("<", 1)[0].strip() == w.split(" ", 1)[0].split("<", 1)[0].strip()
        for d, w in zip(declared, wanted, strict=True)
    )
