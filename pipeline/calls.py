"""Method calls inside a body, with the receiver resolved to its declared type where the file says it.

The file's outline (pipeline.outline) lists every invocation, method reference and local
declaration with its row; each method then takes the slice on its rows. A receiver is resolved from
locals and parameters declared in that method, fields of the enclosing types, `this`, `super`, or a
capitalized name taken as a class (static call). Anything else keeps its text: `a.b().c` stays raw.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import field

from pipeline._values import value
from pipeline.outline import Call, LocalDecl, Receiver
from pipeline.types import Imports

_MAX_RAW = 80
_IDENTIFIER = Receiver.IDENTIFIER
_PROPERTY = Receiver.PROPERTY
_NAMED = frozenset({_IDENTIFIER, _PROPERTY})

CallList = tuple[tuple[str, ...], tuple[str, ...]]


@value
class Unqualified:
    """How a Kotlin file's unqualified call resolves when the enclosing type does not declare it.

    A function the file declares at top level is its facade class's (`facade`, qualified `facade_fq`);
    one imported by name is the import's (`import com.x.Names.shown`: `Names.shown`, an object's or a
    facade's member); any other stays the enclosing type's (an inherited member, as Java's), plus the
    candidate `<package>.fn` for each package a top-level function of another file may come from (the
    file's own, its star imports). The query side matches a top-level function's `<package>.fn` to it
    (`app.search.lookups.call_keys`): which file of the package declares it is not knowable here.
    """

    members: frozenset[str]  # functions the enclosing type declares (empty for the facade: `top_level` are)
    top_level: frozenset[str]
    facade: str
    facade_fq: str
    packages: tuple[str, ...]

    def of(self, name: str, scope: CallScope) -> tuple[str, tuple[str, ...]]:
        """`(receiver, fully qualified names)` an unqualified call of `name` is recorded under."""
        if name in self.top_level:
            return self.facade, (f"{self.facade_fq}.{name}",)
        imported = scope.imports.explicit.get(name)
        if imported is not None:
            owner = imported.rsplit(".", 2)
            return (owner[1] if len(owner) == 3 and owner[1][:1].isupper() else scope.type_name), (imported,)
        own = scope.imports.resolve(scope.type_name) if scope.type_name != self.facade else None
        return scope.type_name, (*((f"{own}.{name}",) if own else ()), *(f"{p}.{name}" for p in self.packages))


@value
class CallScope:
    """What a method body can see: its type, the type's superclass and fields, and the file's imports."""

    type_name: str
    superclass: str | None
    fields: Mapping[str, str]
    imports: Imports
    known_fq: Mapping[str, str] = field(default_factory=dict)  # e.g. Lombok's generated `log` type
    unqualified: Unqualified | None = None  # Kotlin's top-level functions


class FileCalls:
    """Calls and declarations of one file, indexed by position."""

    def __init__(self, calls: list[Call], decls: list[LocalDecl]) -> None:
        self._calls = calls  # ordered by row
        self._call_starts = [c.row for c in calls]
        self._decls = decls  # ordered by row
        self._decl_starts = [d.row for d in decls]
        self._resolved: dict[str, str | None] = {}

    def calls_in(self, rows: tuple[int, int], body_rows: tuple[int, int], scope: CallScope) -> CallList:
        """Calls on rows `rows` (inclusive) as `Receiver.method`, and their fully qualified forms.

        Local variables are looked up among the declarations on `body_rows`, the whole method,
        so a part of a split method still knows the locals declared in the parts before it.
        """
        starts = self._call_starts
        lo, hi = bisect_left(starts, rows[0]), bisect_left(starts, rows[1] + 1)
        if lo == hi:
            return (), ()
        locals_ = _Locals(self._decls, bisect_left(self._decl_starts, body_rows[0]), body_rows[1])
        type_of, fields, known_fq, imports = locals_.type_of, scope.fields, scope.known_fq, scope.imports
        calls: dict[str, None] = {}
        fq: dict[str, None] = {}
        resolve = self._resolve
        top = scope.unqualified
        for call in self._calls[lo:hi]:
            name, kind = call.name, call.receiver
            if kind in _NAMED and _by_call(call, type_of, fields, (calls, fq)):
                continue  # on a Kotlin local typed by a call (`val pet = pets.findById(id)`): its chain
            if kind == _PROPERTY:  # `owner.name` as `Owner.getName`, only where the file types `owner`
                known = type_of(call.text) or fields.get(call.text)
                if known:
                    calls[f"{known}.{name}"] = None
                    if target := known_fq.get(known) or resolve(known, imports):
                        fq[f"{target}.{name}"] = None
                continue
            if kind == Receiver.NONE and top is not None and name not in top.members:
                receiver, targets = top.of(name, scope)
                calls[f"{receiver}.{imports.aliases.get(name, name)}"] = None  # `import x.shown as s`: `shown`
                fq.update(dict.fromkeys(targets))
                continue
            if kind == _IDENTIFIER:  # `repo.save(x)`, two receivers in three: `_variable`, inlined
                receiver = call.text
                known = type_of(receiver) or fields.get(receiver)
                resolved = True if known else receiver[:1].isupper()
                receiver = known or receiver
            else:
                explicit = _qualified_receiver(call, locals_, scope)
                if explicit is not None:
                    receiver, target = explicit
                    calls[f"{receiver}.{name}"] = None
                    if target:
                        fq[f"{target}.{name}"] = None
                    continue
                receiver, resolved = _receiver(call, locals_, scope)
            calls[f"{receiver}.{name}"] = None
            if resolved and (target := known_fq.get(receiver) or resolve(receiver, imports)):
                fq[f"{target}.{name}"] = None
        return _shown(calls, imports), tuple(fq)

    def _resolve(self, name: str, imports: Imports) -> str | None:
        # Every method of a file resolves against the file's one `Imports`, and receivers repeat
        # (a field or a type is called dozens of times), so answers are kept for the file.
        try:
            return self._resolved[name]
        except KeyError:
            target = self._resolved[name] = imports.resolve(name)
            return target


class _Locals:
    """The local declarations of one method, indexed by name on the first lookup.

    A method whose calls are all unqualified or on `this` or `super` never looks a local up, so
    the name index is only built when a receiver is a plain identifier.
    """

    __slots__ = ("_decls", "_index", "_last_row", "_lo")

    def __init__(self, decls: list[LocalDecl], lo: int, last_row: int) -> None:
        self._decls, self._lo, self._last_row = decls, lo, last_row
        self._index: dict[str, str] | None = None

    def type_of(self, variable: str) -> str | None:
        """Declared simple type of a local variable or parameter of the method, if it has one."""
        index = self._index
        if index is None:
            index = self._index = {}
            last = self._last_row
            for decl in self._decls[self._lo :]:
                if decl.row > last:
                    break
                index[decl.name] = decl.type  # a later declaration shadows an earlier one
        return index.get(variable)


def _qualified_receiver(call: Call, locals_: _Locals, scope: CallScope) -> tuple[str, str | None] | None:
    """Receivers that name a type with dots: a static import, `java.util.Objects`, `Map.Entry`.

    Returns (receiver as written in `calls`, its fully qualified type or None), or None when the
    receiver is something else.
    """
    kind = call.receiver
    if kind == Receiver.NONE:
        static = scope.imports.static_members.get(call.name)
        if not static:
            return None
        owner = static.rsplit(".", 1)[0]  # `import static java.util.Objects.requireNonNull`
        return owner.rsplit(".", 1)[-1], owner
    if kind != Receiver.DOTTED:
        return None
    dotted = call.text
    parts = dotted.split(".")
    if locals_.type_of(parts[0]) or parts[0] in scope.fields:
        return None  # `repo.items.size()`: a field of a variable
    if parts[0][:1].islower():
        first_type = next((i for i, p in enumerate(parts) if p[:1].isupper()), None)
        if first_type is None or first_type == 0:
            return None
        return ".".join(parts[first_type:]), dotted  # `java.util.Objects.requireNonNull(x)`
    if all(p[:1].isupper() for p in parts):
        return dotted, scope.imports.resolve(dotted)  # a nested type: `Map.Entry.comparingByKey()`
    return None


def _receiver(call: Call, locals_: _Locals, scope: CallScope) -> tuple[str, bool]:
    """The receiver's declared type (and True), or a compact form of it as written (and False).

    The compact form of a chain keeps its shape and drops arguments, with the chain's root resolved
    when the file declares it: `repo.findById(id).map` → `OwnerRepository.findById().map`.
    """
    kind = call.receiver
    if kind == Receiver.NONE:
        return scope.type_name, True  # unqualified (static imports were handled before)
    if kind == Receiver.IDENTIFIER:  # `repo.save(x)`, two receivers in three
        return _variable(call.text, locals_, scope)
    root, resolved = _root(call, locals_, scope)
    if not call.links:
        return root, resolved
    return _compact(root + chain_suffix(call.links)), False


def chain_suffix(links: tuple[str, ...]) -> str:
    """`.findById().map`: the links after a chain's root, a fluent run of one method (`append().append()`) once."""
    return "".join([f".{link}" for i, link in enumerate(links) if i == 0 or links[i - 1] != link])


def _compact(rendered: str) -> str:
    return rendered if len(rendered) <= _MAX_RAW else rendered[: _MAX_RAW - 1] + "…"


def _shown(calls: dict[str, None], imports: Imports) -> tuple[str, ...]:
    """The calls as shown: Kotlin's `import com.acme.Owner as O` makes `O.addPet` the call `Owner.addPet`."""
    if imports.aliases:
        return tuple(dict.fromkeys(imports.unaliased(c) for c in calls))
    return tuple(calls)


RETURNED = "()."
"""`().addVisit` in `calls_fq`: the chunk calls `addVisit` on what a method returns (`returned_key`)."""


def returned_key(method: str) -> str:
    """The `calls_fq` mark of a call on a call's result, which the query side looks chunks up by.

    Its `calls` entry (`PetRepository.findById().addVisit`) says which method's result; the mark lets a
    callers question find the few chunks holding such calls by one exact lookup, and read their chains.
    """
    return RETURNED + method


def _by_call(
    call: Call, type_of: Callable[[str], str | None], fields: Mapping[str, str], found: tuple[dict[str, None], ...]
) -> bool:
    """A call on a local typed by a call, recorded on its chain (`PetRepository.findById().addVisit`); False: not one.

    Unknown chain: a property read is no call, a method call keeps its receiver as written.
    """
    known = type_of(call.text) or fields.get(call.text)
    if not known or "(" not in known:
        return False
    calls, fq = found
    typed = typed_by_call(known, type_of, fields)
    if typed:
        calls[f"{typed}.{call.name}"] = None
        fq[returned_key(call.name)] = None
    elif call.receiver == _IDENTIFIER:
        calls[f"{call.text}.{call.name}"] = None
    return True


def typed_by_call(known: str, type_of: Callable[[str], str | None], fields: Mapping[str, str]) -> str | None:
    """A Kotlin local typed by a call on another (`pets.findById()`) as its chain: `PetRepository.findById()`.

    None when the receiver's type is not known. The method's return type is the query side's to read.
    """
    root, _, rest = known.partition(".")
    owner = type_of(root) or fields.get(root)
    return f"{owner}.{rest}" if owner and "(" not in owner else None


def _variable(variable: str, locals_: _Locals, scope: CallScope) -> tuple[str, bool]:
    """A receiver named by an identifier: a typed local or field, else a class when capitalized."""
    known = locals_.type_of(variable) or scope.fields.get(variable)
    if known and "(" in known:
        return typed_by_call(known, locals_.type_of, scope.fields) or variable, False
    if known:
        return known, True
    return variable, variable[:1].isupper()  # a capitalized name is a class: a static call


def _root(call: Call, locals_: _Locals, scope: CallScope) -> tuple[str, bool]:
    """The start of a receiver chain: a typed variable, `this`, a class name, a literal, or text."""
    kind = call.root
    if kind == Receiver.IDENTIFIER:
        return _variable(call.root_text, locals_, scope)
    if kind == Receiver.TYPED:
        return call.root_text, True
    if kind == Receiver.THIS or kind == Receiver.ORPHAN:  # an orphan link hangs off the enclosing type
        return scope.type_name, True
    if kind == Receiver.SUPER:
        return (scope.superclass, True) if scope.superclass else ("super", False)
    if kind == Receiver.FIELD:  # this.field
        field_type = scope.fields.get(call.root_text)
        return (field_type, True) if field_type else (call.alt, False)
    return _compact(call.root_text), False
