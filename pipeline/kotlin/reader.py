"""The declarations of a Kotlin file: types (classes, interfaces, objects, companions) and their members.

What the chunker needs from the tree, read once into plain records; a member's signature is written
the Kotlin way (`suspend find(id: Int): Owner?`, an extension's receiver first: `String.shout(): String`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from tree_sitter import Node

from pipeline.kotlin.annotations import modifiers_of
from pipeline.kotlin.grammar import child, children, has_token
from pipeline.model import SymbolType
from pipeline.outline import Import, Modifiers, Param
from pipeline.syntax import squash, text

TYPE_NODES = frozenset({"class_declaration", "object_declaration", "companion_object"})
FUNCTION, CONSTRUCTOR, PRIMARY, PROPERTY = "function", "constructor", "primary_constructor", "property"
COMPANION = "Companion"  # the name of an unnamed companion object, as Java sees it (`Owner.Companion`)
_TYPE_KINDS = frozenset({"user_type", "nullable_type", "function_type", "parenthesized_type", "non_nullable_type"})
_PARAMETER = "formal_parameter"  # what `pipeline.members.param_injections` reads as an injectable parameter


@dataclass(frozen=True, slots=True)
class KMember:
    """A function, constructor (primary or secondary) or property of a type or of the file."""

    kind: str  # FUNCTION, CONSTRUCTOR, PRIMARY or PROPERTY
    node: Node  # the declaration; a primary constructor's is its class's
    name: str
    modifiers: Modifiers
    signature: str
    params: tuple[Param, ...]
    receiver: str | None  # an extension's receiver type
    body: Node | None  # a function's block, for splitting
    doc: Node | None
    rows: tuple[int, int]  # zero-based, with the KDoc
    accessors: bool = False  # a property with a getter, a setter or a delegate


@dataclass(slots=True)
class KType:
    """A class, interface, enum, annotation class, object or companion object."""

    node: Node
    kind: SymbolType
    keyword: str  # `class`, `data class`, `interface`, `object`, `companion object`, ...
    name: str
    nested_name: str
    outer: KType | None
    modifiers: Modifiers
    extends: tuple[str, ...]
    implements: tuple[str, ...]
    doc: Node | None
    body: Node | None
    members: list[KMember] = field(default_factory=list)


@dataclass(slots=True)
class KFile:
    """Everything the chunker reads from one Kotlin file."""

    package: str
    imports: tuple[Import, ...]
    types: list[KType]
    top_level: list[KMember]  # functions and properties outside any type
    file_annotations: tuple[str, ...] = ()  # `@file:JvmName("Names")` as `@JvmName("Names")`
    aliases: dict[str, str] = field(default_factory=dict)  # `import com.acme.Owner as O`: "O" → "com.acme.Owner"


def read_file(root: Node) -> KFile:
    """The package, imports, types (outer before inner) and top-level members of a parsed file."""
    header = child(root, "package_header")
    package = text(child(header, "qualified_identifier")) if header is not None else ""
    nodes = children(root, "import")
    aliases = {text(n.named_children[-1]): text(child(n, "qualified_identifier")) for n in nodes if has_token(n, "as")}
    imports = tuple(_import(n) for n in nodes if not has_token(n, "as"))
    marks = tuple("@" + squash(text(c)) for n in children(root, "file_annotation") for c in n.named_children)
    found = KFile(package=package, imports=imports, types=[], top_level=[], file_annotations=marks, aliases=aliases)
    _read_body(root, None, found)
    return found


def _import(node: Node) -> Import:
    return Import(
        name=text(child(node, "qualified_identifier")), static=False, wildcard=any(c.type == "*" for c in node.children)
    )


def _read_body(body: Node, owner: KType | None, out: KFile) -> None:
    for node in body.named_children:
        if node.type in TYPE_NODES:
            _read_type(node, owner, out)
        elif node.type in ("function_declaration", "property_declaration", "secondary_constructor"):
            member = _member(node)
            if member is not None:
                (owner.members if owner is not None else out.top_level).append(member)


def _read_type(node: Node, outer: KType | None, out: KFile) -> None:
    mods = modifiers_of(child(node, "modifiers"))
    name_node = child(node, "identifier")
    name = text(name_node) if name_node is not None else (COMPANION if node.type == "companion_object" else "")
    if not name:
        return
    kind, keyword = _kind(node, mods)
    supers = child(node, "delegation_specifiers")
    extends: list[str] = []
    implements: list[str] = []
    for spec in children(supers, "delegation_specifier") if supers is not None else []:
        call = child(spec, "constructor_invocation")
        simple = simple_type(child(call if call is not None else spec, "user_type"))
        if simple:  # a constructor call names the superclass; a bare type an interface (or, for an interface, a super)
            (extends if call is not None or kind is SymbolType.INTERFACE else implements).append(simple)
    body = child(node, "class_body") or child(node, "enum_class_body")
    info = KType(
        node=node, kind=kind, keyword=keyword, name=name,
        nested_name=f"{outer.nested_name}.{name}" if outer is not None else name, outer=outer, modifiers=mods,
        extends=tuple(extends), implements=tuple(implements), doc=kdoc(node), body=body,
    )  # fmt: skip
    out.types.append(info)
    primary = child(node, "primary_constructor")
    if primary is not None:
        info.members.append(_primary(node, primary, name))
    if body is not None:
        _read_body(body, info, out)


def _kind(node: Node, mods: Modifiers) -> tuple[SymbolType, str]:
    if node.type == "companion_object":
        return SymbolType.CLASS, "companion object"
    if node.type == "object_declaration":
        return SymbolType.CLASS, "object"
    if has_token(node, "interface"):
        return SymbolType.INTERFACE, "fun interface" if has_token(node, "fun") else "interface"
    if "enum" in mods.keywords:
        return SymbolType.ENUM, "enum class"
    if "annotation" in mods.keywords:
        return SymbolType.ANNOTATION, "annotation class"
    return SymbolType.CLASS, "class"


def kdoc(node: Node) -> Node | None:
    """The `/** ... */` comment right before a declaration, if any."""
    before = node.prev_named_sibling
    if before is not None and before.type == "block_comment" and text(before).startswith("/**"):
        return before
    return None


def _rows(node: Node, doc: Node | None) -> tuple[int, int]:
    return ((doc or node).start_point.row, node.end_point.row)


def _primary(node: Node, primary: Node, name: str) -> KMember:
    params = _params(child(primary, "class_parameters"), "class_parameter")
    rendered = ", ".join(f"{p.name}: {p.type}" for p in params)
    named = child(node, "identifier")  # from the declaration line: the type's annotations are the type's
    rows = ((named or node).start_point.row, primary.end_point.row)
    return KMember(
        kind=PRIMARY, node=node, name=name, modifiers=modifiers_of(child(primary, "modifiers")),
        signature=f"{name}({rendered})", params=params, receiver=None, body=None, doc=None, rows=rows,
    )  # fmt: skip


def _member(node: Node) -> KMember | None:
    mods = modifiers_of(child(node, "modifiers"))
    doc = kdoc(node)
    if node.type == "property_declaration":
        return _property(node, mods, doc)
    if node.type == "secondary_constructor":
        params = _params(child(node, "function_value_parameters"), "parameter")
        rendered = ", ".join(f"{p.name}: {p.type}" for p in params)
        return KMember(
            kind=CONSTRUCTOR, node=node, name="constructor", modifiers=mods, signature=f"constructor({rendered})",
            params=params, receiver=None, body=child(node, "block"), doc=doc, rows=_rows(node, doc),
        )  # fmt: skip
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    name = text(name_node)
    receiver = returns = None
    for each in node.children:  # `fun <T> Receiver.name(...): Returns`: a type before the name is the receiver
        if each.type in _TYPE_KINDS:
            if each.start_byte < name_node.start_byte:
                receiver = squash(text(each))
            else:
                returns = squash(text(each))
    type_params = child(node, "type_parameters")
    params = _params(child(node, "function_value_parameters"), "parameter")
    rendered = ", ".join(f"{p.name}: {p.type}" for p in params)
    head = f"{squash(text(type_params))} " if type_params is not None else ""
    head += "suspend " if "suspend" in mods.keywords else ""
    signature = f"{head}{receiver + '.' if receiver else ''}{name}({rendered})" + (f": {returns}" if returns else "")
    body = child(node, "function_body")
    block = child(body, "block") if body is not None else None
    return KMember(
        kind=FUNCTION, node=node, name=name, modifiers=mods, signature=signature, params=params,
        receiver=receiver, body=block, doc=doc, rows=_rows(node, doc),
    )  # fmt: skip


def _property(node: Node, mods: Modifiers, doc: Node | None) -> KMember | None:
    variable = child(node, "variable_declaration")
    if variable is None:
        return None  # a destructuring declaration: listed in its type's chunk only
    name = text(child(variable, "identifier"))
    declared = next((c for c in variable.named_children if c.type in _TYPE_KINDS), None)
    receiver = next((squash(text(c)) for c in node.named_children if c.type in _TYPE_KINDS), None)
    keyword = "var" if has_token(node, "var") else "val"
    type_text = f": {squash(text(declared))}" if declared is not None else ""
    accessors = any(child(node, k) is not None for k in ("getter", "setter", "property_delegate"))
    simple = simple_type(declared) or constructed_type(declared_value(node)[1])  # `val rest = RestTemplate()`
    param = Param(_PARAMETER, squash(text(declared)), name, simple, type_argument(declared), mods)
    return KMember(
        kind=PROPERTY, node=node, name=name, modifiers=mods,
        signature=f"{keyword} {receiver + '.' if receiver else ''}{name}{type_text}", params=(param,),
        receiver=receiver, body=None, doc=doc, rows=_rows(node, doc), accessors=accessors,
    )  # fmt: skip


def _params(node: Node | None, kind: str) -> tuple[Param, ...]:
    """Parameters with their annotations (a function's come in a `parameter_modifiers` sibling before each)."""
    if node is None:
        return ()
    found: list[Param] = []
    pending = Modifiers()
    for each in node.named_children:
        if each.type == "parameter_modifiers":
            pending = modifiers_of(each)
            continue
        if each.type != kind:
            continue
        mods = modifiers_of(child(each, "modifiers")) if kind == "class_parameter" else pending
        pending = Modifiers()
        declared = next((c for c in each.named_children if c.type in _TYPE_KINDS), None)
        name = text(child(each, "identifier"))
        found.append(
            Param(_PARAMETER, squash(text(declared)), name, simple_type(declared), type_argument(declared), mods)
        )
    return tuple(found)


def declared_value(node: Node) -> tuple[str, Node | None]:
    """A property's name and its initializer (None when it has none, or a getter or delegate instead)."""
    variable = child(node, "variable_declaration")
    named = child(variable, "identifier") if variable is not None else None
    if variable is None or named is None:
        return "", None
    after = [c for c in node.named_children if c.start_byte >= variable.end_byte and c.type != "type_constraints"]
    value = after[0] if after and after[0].type not in ("getter", "setter", "property_delegate") else None
    return text(named), value


def constructed_type(value: Node | None) -> str:
    """The class an initializer constructs (`RestTemplate()` → `RestTemplate`); "" for anything else."""
    if value is None or value.type != "call_expression" or not value.named_children:
        return ""
    callee = value.named_children[0]
    return text(callee) if callee.type == "identifier" and text(callee)[:1].isupper() else ""


def simple_type(node: Node | None) -> str:
    """`Map<K, V>?` → `Map`, `a.b.Owner` → `Owner`; "" for function types and None."""
    while node is not None and node.type in ("nullable_type", "parenthesized_type", "non_nullable_type"):
        node = next((c for c in node.named_children if c.type in _TYPE_KINDS), None)
    if node is None or node.type != "user_type":
        return ""
    names = children(node, "identifier")
    return text(names[-1]) if names else ""


def type_argument(node: Node | None) -> str | None:
    """The simple name of a generic type's sole type argument (`List<Handler>` → `Handler`), else None."""
    while node is not None and node.type == "nullable_type":
        node = child(node, "user_type")
    arguments = child(node, "type_arguments") if node is not None else None
    projections = children(arguments, "type_projection") if arguments is not None else []
    if len(projections) != 1:
        return None
    inner = next((c for c in projections[0].named_children if c.type in _TYPE_KINDS), None)
    return simple_type(inner) or None


def error_nodes(node: Node) -> Iterator[Node]:
    """The outermost ERROR and missing nodes under `node`."""
    for each in node.children:
        if each.type == "ERROR" or each.is_missing:
            yield each
        elif each.has_error:
            yield from error_nodes(each)
