"""Methods, constructors and static initializers of a type: names, signatures, injection points and HTTP routes.

The rules that turn a member's facts (pipeline.outline) into what its chunk says
live here once: the signature format, the name and signature of a static initializer, which
parameters are configuration (`@Value`) rather than beans.
"""

from __future__ import annotations

from pipeline._values import value
from pipeline.declarations import TypeInfo
from pipeline.outline import (
    CALLABLE_NODE_KINDS,
    CONSTRUCTOR_NODE_KINDS,
    ELEMENT_NODE_KIND,
    MemberDecl,
    Modifiers,
    Param,
)
from pipeline.spring import HANDLER_STEREOTYPES, injected_type, is_injected_member, method_routes, routes_if_mapping

_NONE: tuple[str, ...] = ()
STATIC_INITIALIZER = "static_initializer"
CLINIT = "<clinit>"  # javac's name for a static initializer: its chunk's name
CLINIT_SIGNATURE = "static {}"


@value
class Member:
    """A method, constructor or static initializer of a type, read once for every chunk that needs it."""

    decl: MemberDecl
    injects: tuple[str, ...]
    injects_if_bean: tuple[str, ...]  # a constructor's, when its type is a bean only if an annotation says so
    http_method: tuple[str, ...]
    http_path: tuple[str, ...]
    routes_if_mapping: tuple[str, ...] = _NONE  # a handler's routes through annotations no rule knows

    @property
    def is_constructor(self) -> bool:
        """Constructors and compact record constructors."""
        return self.decl.kind in CONSTRUCTOR_NODE_KINDS


def member_name(decl: MemberDecl) -> str:
    """The name a member's chunk has: its identifier, `<clinit>` for a static initializer."""
    return CLINIT if decl.kind == STATIC_INITIALIZER else decl.name


def parameter_types(decl: MemberDecl) -> tuple[str, ...]:
    """Parameter types as a signature shows them (`Map<K, V>`, `String...`): the overload part of a key."""
    return tuple([p.type for p in decl.params]) if decl.params else _NONE


def signature(decl: MemberDecl) -> str:
    """`<T> findById(Long id): Optional<UserDto>` for methods, `Owner(String name)` for constructors."""
    if decl.kind == STATIC_INITIALIZER:
        return CLINIT_SIGNATURE
    rendered = ", ".join([f"{p.type} {p.name}" for p in decl.params]) if decl.params else ""
    prefix = "" if decl.type_params is None else f"{decl.type_params} "
    suffix = "" if decl.returns is None else f": {decl.returns}"
    return f"{prefix}{decl.name}({rendered}){suffix}"


def is_configuration(param: Param) -> bool:
    """A parameter whose annotations mention `@Value` (`@Value("${x}")`): configuration, not a bean."""
    annotations = param.modifiers.annotations
    return bool(annotations) and any("@Value" in a.text for a in annotations)


def param_injections(params: tuple[Param, ...]) -> tuple[str, ...]:
    """The bean types a constructor, setter or `@Bean` method receives."""
    types = []
    for p in params:
        if p.kind == "formal_parameter" and is_configuration(p):
            continue  # @Value("${...}") parameters are configuration, not beans
        types.append(injected_type(p.simple, p.type_arg))
    return tuple(t for t in types if t)


def member_injections(
    kind: str, modifiers: Modifiers, params: tuple[Param, ...], info: TypeInfo, sole_ctor: bool
) -> tuple[str, ...]:
    """Bean types a member (of node type `kind`) receives by injection: constructors, setters and `@Bean`."""
    if kind in CONSTRUCTOR_NODE_KINDS:
        return param_injections(params) if info.is_bean and _injecting(modifiers, sole_ctor) else _NONE
    if not modifiers.annotations:
        return _NONE
    if is_injected_member(modifiers) or modifiers.has("Bean"):
        return param_injections(params)
    return _NONE


def _injecting(modifiers: Modifiers, sole_ctor: bool) -> bool:
    """Whether a bean's constructor is its injection point: the only one, or marked `@Autowired`/`@Inject`."""
    return sole_ctor or modifiers.has("Autowired", "Inject")


def injections_if_bean(
    kind: str, modifiers: Modifiers, params: tuple[Param, ...], info: TypeInfo, sole_ctor: bool
) -> tuple[str, ...]:
    """What a constructor would inject if its type were a bean: recorded for annotated types of no known role."""
    if kind not in CONSTRUCTOR_NODE_KINDS or not info.may_be_bean or not _injecting(modifiers, sole_ctor):
        return _NONE
    return param_injections(params)


def read_members(info: TypeInfo) -> list[Member]:
    """Methods, constructors, static initializers and annotation elements of a type, and enum constant methods."""
    decls = info.decl.members
    sole_ctor = sum(1 for d in decls if d.kind in CONSTRUCTOR_NODE_KINDS) == 1
    members: list[Member] = []
    for decl in decls:
        kind = decl.kind
        if kind in CALLABLE_NODE_KINDS:
            members.append(_member(decl, info, sole_ctor))
        elif kind in (STATIC_INITIALIZER, ELEMENT_NODE_KIND):  # no injections, no routes
            members.append(Member(decl=decl, injects=_NONE, injects_if_bean=_NONE, http_method=_NONE, http_path=_NONE))
        elif kind == "enum_constant":
            members.extend(_member(inner, info, False) for inner in decl.members)
    return members


def _member(decl: MemberDecl, info: TypeInfo, sole_ctor: bool) -> Member:
    modifiers = decl.modifiers
    http_method, http_path = method_routes(modifiers, info.route_prefixes) if modifiers.annotations else (_NONE, _NONE)
    composed = (
        routes_if_mapping(modifiers, info.route_prefixes)
        if modifiers.annotations and not http_path and info.stereotype in HANDLER_STEREOTYPES
        else _NONE
    )
    return Member(
        decl=decl,
        injects=member_injections(decl.kind, modifiers, decl.params, info, sole_ctor),
        injects_if_bean=injections_if_bean(decl.kind, modifiers, decl.params, info, sole_ctor),
        http_method=http_method,
        http_path=http_path,
        routes_if_mapping=composed,
    )
