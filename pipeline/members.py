"""Methods, constructors and static initializers of a type, with their injection points and HTTP routes."""

from __future__ import annotations

from pipeline._values import value
from pipeline.declarations import TypeInfo
from pipeline.outline import CALLABLE_NODE_KINDS, CONSTRUCTOR_NODE_KINDS, MemberDecl, Modifiers, Param
from pipeline.spring import injected_type, is_injected_member, method_routes

_NONE: tuple[str, ...] = ()


@value
class Member:
    """A method, constructor or static initializer of a type, read once for every chunk that needs it."""

    decl: MemberDecl
    injects: tuple[str, ...]
    http_method: tuple[str, ...]
    http_path: tuple[str, ...]

    @property
    def is_constructor(self) -> bool:
        """Constructors and compact record constructors."""
        return self.decl.kind in CONSTRUCTOR_NODE_KINDS

    @property
    def has_body(self) -> bool:
        """Whether it has a body (interface and abstract methods have none)."""
        return self.decl.body_start >= 0


def param_injections(params: tuple[Param, ...]) -> tuple[str, ...]:
    """The bean types a constructor, setter or `@Bean` method receives."""
    types = []
    for p in params:
        if p.kind == "formal_parameter" and p.value_annotated:
            continue  # @Value("${...}") parameters are configuration, not beans
        types.append(injected_type(p.simple, p.type_arg))
    return tuple(t for t in types if t)


def member_injections(
    kind: str, modifiers: Modifiers, params: tuple[Param, ...], info: TypeInfo, sole_ctor: bool
) -> tuple[str, ...]:
    """Bean types a member (of node type `kind`) receives by injection: constructors, setters and `@Bean`."""
    if kind in CONSTRUCTOR_NODE_KINDS:
        explicit = modifiers.has("Autowired", "Inject")
        return param_injections(params) if info.is_bean and (explicit or sole_ctor) else _NONE
    if not modifiers.annotations:
        return _NONE
    if is_injected_member(modifiers) or modifiers.has("Bean"):
        return param_injections(params)
    return _NONE


def read_members(info: TypeInfo) -> list[Member]:
    """Methods, constructors and static initializers of a type, plus methods in enum constant bodies."""
    decls = info.decl.members
    sole_ctor = sum(1 for d in decls if d.kind in CONSTRUCTOR_NODE_KINDS) == 1
    members: list[Member] = []
    for decl in decls:
        kind = decl.kind
        if kind in CALLABLE_NODE_KINDS:
            members.append(_member(decl, info, sole_ctor))
        elif kind == "static_initializer":
            members.append(Member(decl=decl, injects=_NONE, http_method=_NONE, http_path=_NONE))
        elif kind == "enum_constant":
            members.extend(_member(inner, info, False) for inner in decl.members)
    return members


def _member(decl: MemberDecl, info: TypeInfo, sole_ctor: bool) -> Member:
    modifiers = decl.modifiers
    http_method, http_path = method_routes(modifiers, info.route_prefixes) if modifiers.annotations else (_NONE, _NONE)
    return Member(
        decl=decl,
        injects=member_injections(decl.kind, modifiers, decl.params, info, sole_ctor),
        http_method=http_method,
        http_path=http_path,
    )
