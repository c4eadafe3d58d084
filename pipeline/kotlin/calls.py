"""The calls of Kotlin functions as the Java side's records (`pipeline.outline.Call`, `LocalDecl`).

`pipeline.calls.FileCalls` then resolves them exactly as it resolves Java's: a receiver's declared type
from the function's parameters and locals (`val y: Y`, `val z = Z(...)`) or the type's properties and
primary constructor parameters, then its fully qualified name from the imports. Read: unqualified calls
(a capitalized one is a constructor call, not recorded, as Java's `new` is not), calls on an identifier
(`repo.save(x)`, `Owners.of()`, `p?.name()`), on `this` and on `this.field`; a call on another call's
result (`a.b().c()`) is recorded with its chain's root and links as Java records one. A function reference
(`handler::get`, `::parse`) is a call, as Java's method references are. A property read
or written on an identifier (`owner.name`, `owner.name = x`) is a call of its JVM accessor
(`getName`, `setName`: `pipeline.kotlin.interop`), recorded where the receiver's type is known.
"""

from __future__ import annotations

from tree_sitter import Node, Query, QueryCursor

from pipeline.calls import FileCalls
from pipeline.kotlin.grammar import KOTLIN, child
from pipeline.kotlin.interop import getter_name, setter_name
from pipeline.kotlin.reader import simple_type
from pipeline.outline import Call, LocalDecl, Receiver
from pipeline.syntax import squash, text

_QUERY = Query(
    KOTLIN,
    """(call_expression) @call (property_declaration) @local (parameter) @param
    (navigation_expression "::") @reference (callable_reference) @reference
    (navigation_expression . (identifier) . (identifier) .) @property""",  # `owner.name`: picked in C
)
_TYPES = frozenset({"user_type", "nullable_type"})


def read_calls(root: Node) -> FileCalls:
    """Every call and local declaration of a file, ordered by row."""
    found = QueryCursor(_QUERY).captures(root)
    # By the called name's position: a chain's calls in the order they run (`findAll`, `first`, `visit`).
    read = [c for node in found.get("call", []) if (c := _call(node)) is not None]
    read += [c for node in found.get("property", []) for c in _accessors(node)]
    read += [c for node in found.get("reference", []) if (c := _reference(node)) is not None]
    named = sorted(read, key=lambda c: c[0])
    calls = [c for _, c in named]
    decls = [d for node in (*found.get("local", []), *found.get("param", [])) if (d := _local(node)) is not None]
    decls.sort(key=lambda d: d.row)
    return FileCalls(calls, decls)


def _call(node: Node) -> tuple[int, Call] | None:
    callee = node.named_children[0] if node.named_children else None
    if callee is None:
        return None
    if callee.type == "identifier":
        name = text(callee)
        if name[:1].isupper():
            return None  # a constructor call
        return callee.start_byte, Call(callee.start_point.row, name, Receiver.NONE, "", Receiver.NONE, "", "", ())
    if callee.type != "navigation_expression" or len(callee.named_children) != 2:
        return None
    receiver, named = callee.named_children
    if named.type != "identifier":
        return None
    row, name = named.start_point.row, text(named)
    if receiver.type == "identifier":
        written = text(receiver)
        return named.start_byte, Call(row, name, Receiver.IDENTIFIER, written, Receiver.IDENTIFIER, written, "", ())
    if receiver.type == "this_expression":
        return named.start_byte, Call(row, name, Receiver.CHAIN, "", Receiver.THIS, "this", "", ())
    root, links = _chain(receiver)
    if root is None:
        return None
    kind, root_text, alt = root
    return named.start_byte, Call(row, name, Receiver.CHAIN, "", kind, root_text, alt, links)


def _accessors(node: Node) -> list[tuple[int, Call]]:
    """`owner.name` read (`getName`), written (`setName`) or both (`+=`): not a call's callee, nor `Type.X`."""
    parent = node.parent
    if parent is None or len(node.named_children) != 2:
        return []
    receiver, named = node.named_children
    if receiver.type != "identifier" or named.type != "identifier" or not text(receiver)[:1].islower():
        return []
    if parent.type == "call_expression" and parent.named_children[0] == node:
        return []  # `owner.save(x)`: a call, read by `_call`
    if any(c.type == "::" for c in node.children):
        return []  # `handler::get`: a function reference, read by `_reference`
    written, prop = text(receiver), text(named)
    assigned = parent.type == "assignment" and parent.named_children[0] == node
    names = [setter_name(prop)] if assigned else []
    if not assigned or any(not c.is_named and c.type != "=" for c in parent.children):  # `+=` reads too
        names.insert(0, getter_name(prop))
    row, at = named.start_point.row, named.start_byte
    return [(at, Call(row, n, Receiver.PROPERTY, written, Receiver.IDENTIFIER, written, "", ())) for n in names]


def _reference(node: Node) -> tuple[int, Call] | None:
    """A function reference, as Java's method references are calls: `handler::get`, `::parse`, `this::check`."""
    named = node.named_children[-1] if node.named_children else None
    if named is None or named.type != "identifier" or text(named) == "class":
        return None
    row, name = named.start_point.row, text(named)
    receiver = node.named_children[0] if node.named_child_count == 2 else None
    if receiver is None:
        return named.start_byte, Call(row, name, Receiver.NONE, "", Receiver.NONE, "", "", ())
    if receiver.type == "this_expression":
        return named.start_byte, Call(row, name, Receiver.CHAIN, "", Receiver.THIS, "this", "", ())
    if receiver.type in ("identifier", "user_type") and "." not in (written := text(receiver)):
        return named.start_byte, Call(row, name, Receiver.IDENTIFIER, written, Receiver.IDENTIFIER, written, "", ())
    return None


def _chain(node: Node) -> tuple[tuple[int, str, str] | None, tuple[str, ...]]:
    """A receiver expression's root (kind, text, alternative) and the links after it, innermost first."""
    links: list[str] = []
    while True:
        if node.type == "call_expression" and node.named_children:
            inner = node.named_children[0]
            if inner.type == "navigation_expression" and len(inner.named_children) == 2:
                links.append(text(inner.named_children[1]) + "()")
                node = inner.named_children[0]
                continue
            return None, ()
        if node.type == "navigation_expression" and len(node.named_children) == 2:
            base, field = node.named_children
            if base.type == "this_expression" and not links:
                return (Receiver.FIELD, text(field), squash(text(node))), ()
            links.append(text(field))
            node = base
            continue
        break
    links.reverse()
    if node.type == "identifier":
        return (Receiver.IDENTIFIER, text(node), ""), tuple(links)
    if node.type == "this_expression":
        return (Receiver.THIS, "this", ""), tuple(links)
    return (Receiver.OTHER, squash(text(node)), ""), tuple(links)


def _local(node: Node) -> LocalDecl | None:
    """A parameter or local `val`/`var` with its simple type, declared, `= Type(...)` or `= x as Type`."""
    if node.type == "parameter":
        named = child(node, "identifier")
        declared = next((c for c in node.named_children if c.type in _TYPES), None)
        return LocalDecl(node.start_point.row, text(named), simple_type(declared)) if named is not None else None
    variable = child(node, "variable_declaration")
    named = child(variable, "identifier") if variable is not None else None
    if variable is None or named is None:
        return None
    declared = next((c for c in variable.named_children if c.type in _TYPES), None)
    return LocalDecl(node.start_point.row, text(named), simple_type(declared) or _value_type(node.named_children[-1]))


def _value_type(value: Node) -> str:
    """The type a local's value names: a constructor call `Type(...)`, a cast `x as Type` / `x as? Type`.

    A call on a named receiver (`val pet = pets.findById(id)`) gives `pets.findById()`: the receiver's type
    is looked up where the local is used (`pipeline.calls.typed_by_call`), and the method's return type
    at query time (`app.search.lookups.call_keys`), as a Java chain `pets.findById(id).addVisit(v)` is.
    """
    if value.type == "as_expression":
        return simple_type(value.named_children[-1])
    callee = value.named_children[0] if value.type == "call_expression" and value.named_children else None
    if callee is not None and callee.type == "navigation_expression" and len(callee.named_children) == 2:
        receiver, named = callee.named_children
        written = text(receiver)
        if receiver.type == "identifier" and written[:1].islower() and named.type == "identifier":
            return f"{written}.{text(named)}()"
        return ""
    return text(callee) if callee is not None and callee.type == "identifier" and text(callee)[:1].isupper() else ""
