"""Signatures, injection points and HTTP routes of methods and constructors."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from pipeline._values import value
from pipeline.annotations import Modifiers, read_modifiers
from pipeline.declarations import TypeInfo
from pipeline.spring import injected_type, is_injected_member, method_routes, param_nodes
from pipeline.syntax import slice_text, squash, text
from pipeline.types import type_text


@value
class Signature:
    """A callable's display signature and its parameter types."""

    text: str
    parameter_types: tuple[str, ...]
    parameter_nodes: tuple[Node, ...]


def read_signature(data: bytes, node: Node, kind: str, name: str, info: TypeInfo) -> Signature:
    """`findById(Long id): Optional<UserDto>` for methods, `Owner(String name)` for constructors.

    `data` holds the parsed bytes and `kind` the node's type (each `Node.type` read is a binding call).
    """
    params = param_nodes(node.child_by_field_name("parameters"))
    if kind == "compact_constructor_declaration":
        params = param_nodes(info.node.child_by_field_name("parameters"))
    # One loop and list comprehensions: generator expressions cost a frame each, on 50,000 members.
    types: list[str] = []
    rendered: list[str] = []
    for param in params:
        param_type, param_name = _param(data, param)
        types.append(param_type)
        rendered.append(f"{param_type} {param_name}")
    type_params = node.child_by_field_name("type_parameters")
    prefix = f"{squash(slice_text(data, type_params))} " if type_params is not None else ""
    returns = node.child_by_field_name("type")
    suffix = f": {squash(slice_text(data, returns))}" if returns is not None else ""
    return Signature(
        text=f"{prefix}{name}({', '.join(rendered)}){suffix}",
        parameter_types=tuple(types),
        parameter_nodes=tuple(params),
    )


def _param(data: bytes, node: Node) -> tuple[str, str]:
    if node.type == "spread_parameter":
        kinds = [c for c in node.named_children if c.type not in ("modifiers", "variable_declarator")]
        declarator = next((c for c in node.named_children if c.type == "variable_declarator"), None)
        name = text(declarator.child_by_field_name("name")) if declarator is not None else ""
        return (type_text(kinds[0]) if kinds else "") + "...", name
    param_type = squash(slice_text(data, node.child_by_field_name("type")))
    return param_type, slice_text(data, node.child_by_field_name("name"))


def param_injections(sig: Signature) -> tuple[str, ...]:
    """The bean types a constructor, setter or `@Bean` method receives."""
    types = []
    for p in sig.parameter_nodes:
        if p.type == "formal_parameter" and _is_value_param(p):
            continue  # @Value("${...}") parameters are configuration, not beans
        types.append(injected_type(p.child_by_field_name("type")))
    return tuple(t for t in types if t)


def _is_value_param(param: Node) -> bool:
    mods = next((c for c in param.named_children if c.type == "modifiers"), None)
    return mods is not None and b"@Value" in (mods.text or b"")


def member_injections(
    kind: str, modifiers: Modifiers, sig: Signature, info: TypeInfo, sole_ctor: bool
) -> tuple[str, ...]:
    """Bean types a member (of node type `kind`) receives by injection: constructors, setters and `@Bean`."""
    if kind in CONSTRUCTOR_KINDS:
        explicit = modifiers.has("Autowired", "Inject")
        return param_injections(sig) if info.is_bean and (explicit or sole_ctor) else ()
    if is_injected_member(modifiers) or modifiers.has("Bean"):
        return param_injections(sig)
    return ()


@value
class Member:
    """A method, constructor or static initializer of a type, read once for every chunk that needs it."""

    node: Node
    kind: str  # the node's type
    owner: str  # nested name of the declaring type: Outer.Inner, or Enum.CONSTANT for constant bodies
    name: str
    modifiers: Modifiers
    signature: Signature
    body: Node | None
    injects: tuple[str, ...]
    http_method: tuple[str, ...]
    http_path: tuple[str, ...]

    @property
    def is_constructor(self) -> bool:
        """Constructors and compact record constructors."""
        return self.kind in CONSTRUCTOR_KINDS


CONSTRUCTOR_KINDS = frozenset({"constructor_declaration", "compact_constructor_declaration"})
_METHOD_KINDS = frozenset({"method_declaration", *CONSTRUCTOR_KINDS})
_STATIC_INIT = Signature(text="static {}", parameter_types=(), parameter_nodes=())


def read_members(info: TypeInfo, data: bytes) -> list[Member]:
    """Methods, constructors and static initializers of a type, plus methods in enum constant bodies.

    `data` holds the bytes the type's tree was parsed from.
    """
    if info.body is None:
        return []
    nodes = [(node, node.type) for node in body_members(info.body)]  # each `.type` read is a binding call
    sole_ctor = sum(1 for _, kind in nodes if kind in CONSTRUCTOR_KINDS) == 1
    members: list[Member] = []
    for node, kind in nodes:
        if kind in _METHOD_KINDS or kind == "static_initializer":
            members.append(_read_member(data, node, kind, info, info.nested_name, sole_ctor))
        elif kind == "enum_constant" and (body := node.child_by_field_name("body")) is not None:
            owner = f"{info.nested_name}.{text(node.child_by_field_name('name'))}"
            for inner in body_members(body):
                if (inner_kind := inner.type) in _METHOD_KINDS:
                    members.append(_read_member(data, inner, inner_kind, info, owner, False))
    return members


def _read_member(data: bytes, node: Node, kind: str, info: TypeInfo, owner: str, sole_ctor: bool) -> Member:
    modifiers = read_modifiers(node, data)
    if kind == "static_initializer":
        body = node.named_children[-1] if node.named_child_count else None
        return Member(
            node=node, kind=kind, owner=owner, name="<clinit>", modifiers=modifiers, signature=_STATIC_INIT,
            body=body, injects=(), http_method=(), http_path=(),
        )  # fmt: skip
    name = slice_text(data, node.child_by_field_name("name"))
    sig = read_signature(data, node, kind, name, info)
    http_method, http_path = method_routes(modifiers, info.route_prefixes) if modifiers.annotations else ((), ())
    return Member(
        node=node,
        kind=kind,
        owner=owner,
        name=name,
        modifiers=modifiers,
        signature=sig,
        body=node.child_by_field_name("body"),
        injects=member_injections(kind, modifiers, sig, info, sole_ctor),
        http_method=http_method,
        http_path=http_path,
    )


def body_members(body: Node) -> Iterator[Node]:
    """Declarations in a class, interface, enum or record body (enum body declarations flattened)."""
    for child in body.named_children:
        if child.type == "enum_body_declarations":
            yield from child.named_children
        else:
            yield child
