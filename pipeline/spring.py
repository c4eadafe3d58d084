"""Spring and Jakarta semantics read from annotations: stereotypes, HTTP routes and injection points."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from pipeline.outline import Annotation, Modifiers

# Most specific first: a class carrying several takes the first that matches.
STEREOTYPES: tuple[tuple[str, str], ...] = (
    ("RestController", "rest_controller"),
    ("Controller", "controller"),
    ("RestControllerAdvice", "controller_advice"),
    ("ControllerAdvice", "controller_advice"),
    ("FeignClient", "feign_client"),
    ("SpringBootApplication", "application"),
    ("Configuration", "configuration"),
    ("AutoConfiguration", "configuration"),
    ("ConfigurationProperties", "configuration_properties"),
    ("Service", "service"),
    ("Repository", "repository"),
    ("Mapper", "mapper"),
    ("Aspect", "aspect"),
    ("Entity", "entity"),
    ("MappedSuperclass", "entity"),
    ("Embeddable", "embeddable"),
    ("Document", "document"),
    ("Path", "jaxrs_resource"),
    # Frameworks' own stereotypes, each meta-annotated with @Component or bean-defining by its spec
    # (docs/decisions.md, "Exact lookups", lists the sources); an organization's own are learned from
    # the index at query time (`learned_stereotypes`).
    ("DgsComponent", "component"),  # Netflix DGS: @Component (graphql-dgs DgsComponent.java)
    ("DgsScalar", "component"),
    ("DgsDirective", "component"),
    ("DgsDataLoader", "component"),
    ("JsonComponent", "component"),  # Spring Boot: @Component
    ("MessageEndpoint", "component"),  # Spring Integration: @Component
    ("Stateless", "component"),  # Jakarta EJB session and message-driven beans
    ("Stateful", "component"),
    ("MessageDriven", "component"),
    ("Prototype", "component"),  # Micronaut (its @Singleton and @Controller are below and above)
    ("Component", "component"),
    ("Named", "component"),
    ("ApplicationScoped", "component"),  # CDI bean-defining annotations (Quarkus ArC, Jakarta CDI 4 §2.5)
    ("RequestScoped", "component"),
    ("SessionScoped", "component"),
    ("Dependent", "component"),
    ("Singleton", "component"),
)
_STEREOTYPE_BY_ANNOTATION = dict(STEREOTYPES)
_ORDER = {name: i for i, (name, _) in enumerate(STEREOTYPES)}

SPRING_DATA_BASES = frozenset(
    {
        "Repository",
        "CrudRepository",
        "ListCrudRepository",
        "PagingAndSortingRepository",
        "ListPagingAndSortingRepository",
        "JpaRepository",
        "JpaSpecificationExecutor",
        "QuerydslPredicateExecutor",
        "MongoRepository",
        "ReactiveCrudRepository",
        "ReactiveSortingRepository",
        "R2dbcRepository",
        "ElasticsearchRepository",
        "CassandraRepository",
        "Neo4jRepository",
        "RevisionRepository",
        "KeyValueRepository",
    }
)

# Stereotypes whose classes Spring (or CDI) instantiates, so a lone constructor is an injection point.
BEAN_STEREOTYPES = frozenset(
    {
        "rest_controller",
        "controller",
        "controller_advice",
        "application",
        "configuration",
        "service",
        "repository",
        "component",
        "aspect",
        "mapper",
        "jaxrs_resource",
    }
)
BEAN_ANNOTATIONS = frozenset({name for name, role in STEREOTYPES if role in BEAN_STEREOTYPES} | {"Stereotype"})
"""Annotations that make a class a bean, and so make an annotation type carrying them a bean stereotype
(CDI's `@Stereotype` makes its annotation type bean-defining)."""


def learned_stereotypes(declared: Mapping[str, Iterable[str]]) -> frozenset[str]:
    """Annotation types of the index that make a class a bean: `{name: its annotations}` → the names.

    An annotation type is a bean stereotype when one of its own annotations is a bean annotation or
    a learned stereotype, transitively (`@UseCase` carrying `@DomainService` carrying `@Service`).
    """
    learned: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, carried in declared.items():
            if name not in learned and any(a in BEAN_ANNOTATIONS or a in learned for a in carried):
                learned.add(name)
                changed = True
    return frozenset(learned)


# Containers whose type argument is what actually gets injected (List<Handler> injects Handlers).
_INJECTION_WRAPPERS = frozenset(
    {"List", "Set", "Collection", "Iterable", "Optional", "ObjectProvider", "ObjectFactory", "Provider", "Lazy"}
)

_MAPPING_VERBS = {
    "GetMapping": "GET",
    "PostMapping": "POST",
    "PutMapping": "PUT",
    "DeleteMapping": "DELETE",
    "PatchMapping": "PATCH",
    # Spring 6 HTTP interfaces (`@HttpExchange` clients), declared like Feign's: bodiless methods.
    "GetExchange": "GET",
    "PostExchange": "POST",
    "PutExchange": "PUT",
    "DeleteExchange": "DELETE",
    "PatchExchange": "PATCH",
}
_EXCHANGE = "HttpExchange"  # `@HttpExchange(url = "/x", method = "GET")`: a prefix on a type, a route on a method
EXCHANGE_ANNOTATIONS = frozenset({_EXCHANGE, *(name for name in _MAPPING_VERBS if name.endswith("Exchange"))})
"""The annotations of a Spring HTTP interface's methods (`@HttpExchange`, `@GetExchange`, ...)."""
JAXRS_VERBS = frozenset({"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"})
ANY_METHOD = "ANY"


def stereotype_of(modifiers: Modifiers, supertypes: Iterable[str], is_interface: bool) -> str | None:
    """The Spring role of a type from its annotations; Spring Data interfaces count as repositories."""
    ranks = [_ORDER[a.name] for a in modifiers.annotations if a.name in _ORDER]
    if ranks:
        return STEREOTYPES[min(ranks)][1]
    if is_interface and any(s in SPRING_DATA_BASES for s in supertypes):
        return "repository"
    return None


def route_prefixes(modifiers: Modifiers) -> tuple[str, ...]:
    """Class-level path prefixes: `@RequestMapping`, `@HttpExchange`, `@FeignClient(path=)` or JAX-RS `@Path`."""
    paths: list[str] = []
    for ann in modifiers.annotations:
        if ann.name == "RequestMapping":
            paths.extend(_paths(ann))
        elif ann.name == _EXCHANGE:  # `@HttpExchange(url = "http://accounts/api")`: the path part is the prefix
            # A property (`url = "${visits.url}"`) is a base URL read at query time (`pipeline.outbound`).
            paths.extend(split_url(re.sub(r"^\$\{[^}]*\}", "", p.strip()))[1] for p in _paths(ann))
        elif ann.name == "FeignClient":
            paths.extend(v.string for v in ann.values("path"))
        elif ann.name == "Path":
            paths.extend(v.string for v in ann.values("value"))
    return tuple(paths)


def method_routes(modifiers: Modifiers, prefixes: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """HTTP methods and full paths of a handler method, joined with its class prefixes."""
    verbs: list[str] = []
    paths: list[str] | None = None
    for ann in modifiers.annotations:
        if ann.name in _MAPPING_VERBS:
            verbs.append(_MAPPING_VERBS[ann.name])
            paths = [*(paths or []), *_paths(ann)]
        elif ann.name == "RequestMapping":
            verbs.extend(_request_methods(ann) or [ANY_METHOD])
            paths = [*(paths or []), *_paths(ann)]
        elif ann.name == _EXCHANGE:
            verbs.extend([v.string.upper() for v in ann.values("method")] or [ANY_METHOD])
            paths = [*(paths or []), *_paths(ann)]
        elif ann.name in JAXRS_VERBS and not ann.args:
            verbs.append(ann.name)
            paths = paths or []
        elif ann.name == "Path":
            paths = [*(paths or []), *(v.string for v in ann.values("value"))]
            verbs = verbs or []
    if paths is None:
        return (), ()
    if not verbs:
        verbs = [ANY_METHOD]  # a JAX-RS sub-resource locator: @Path without a verb
    full = [join_path(p, m) for p in (prefixes or [""]) for m in (paths or [""])]
    return tuple(dict.fromkeys(verbs)), tuple(dict.fromkeys(full))


HANDLER_STEREOTYPES = frozenset({"rest_controller", "controller"})
"""Roles whose methods Spring maps: where a method annotation no rule here reads may be a composed mapping."""
_ROUTE_ANNOTATIONS = frozenset({*_MAPPING_VERBS, "RequestMapping", _EXCHANGE, *JAXRS_VERBS, "Path"})
_PATH_LIKE = re.compile(r"[A-Za-z0-9_\-./{}*:$]*")


def routes_if_mapping(modifiers: Modifiers, prefixes: Sequence[str]) -> tuple[str, ...]:
    """`Name /full/path` for each annotation of a handler method that no rule here reads, and each path it names.

    A composed mapping annotation (eladmin's `@AnonymousPostMapping("/login")`, declared in another file with
    `@RequestMapping(method = RequestMethod.POST)`) is known only from its own declaration, so the file records
    what the route would be and the query confirms the annotation from the index (`learned_mappings`). Only
    values that can be paths count (`@Log("用户登录")` names none); no value maps the class prefix, as
    `@GetMapping` does.
    """
    found: list[str] = []
    for ann in modifiers.annotations:
        if ann.name in _ROUTE_ANNOTATIONS:
            continue
        paths = [v.string for v in ann.values("value", "path")]
        if not paths or all(_PATH_LIKE.fullmatch(p) for p in paths):
            found.extend(f"{ann.name} {join_path(p, m)}" for p in (prefixes or [""]) for m in (paths or [""]))
    return tuple(dict.fromkeys(found))


def mapping_route(entry: str) -> tuple[str, str]:
    """A `routes_if_mapping` entry's annotation and path: `AnonymousPostMapping /auth/login` → both."""
    name, _, path = entry.partition(" ")
    return name, path


def maps_http(modifiers: Modifiers) -> tuple[str, ...]:
    """The HTTP methods an annotation type maps to when it carries a mapping (`@RequestMapping(method = POST)`)."""
    return method_routes(modifiers, ())[0]


def learned_mappings(declared: Mapping[str, tuple[Sequence[str], Sequence[str]]]) -> dict[str, tuple[str, ...]]:
    """Annotation types that are composed mappings, with their HTTP methods, from `name -> (annotations, maps_http)`.

    An annotation type maps when it carries a mapping annotation (its own `maps_http`) or, transitively, a
    learned composed mapping (`@PublicPost` carrying `@AnonymousPostMapping`), whose methods it takes.
    """
    learned = {name: tuple(verbs) for name, (_, verbs) in declared.items() if verbs}
    changed = True
    while changed:
        changed = False
        for name, (carried, _) in declared.items():
            if name not in learned and (via := next((a for a in carried if a in learned), None)) is not None:
                learned[name] = learned[via]
                changed = True
    return learned


def join_path(prefix: str, path: str) -> str:
    """Join a class prefix and a method path the way Spring and JAX-RS do: one slash between, none trailing."""
    parts = [seg for seg in f"{prefix}/{path}".split("/") if seg]
    return "/" + "/".join(parts)


_ABSOLUTE = re.compile(r"^(?:https?|lb)://([^/?#]*)(.*)$", re.IGNORECASE)
_NO_SERVICE = frozenset({"localhost", "127.0.0.1", "0.0.0.0", "[::1]"})


def split_url(url: str) -> tuple[str | None, str]:
    """An absolute URL's service and path (`http://accounts:8080/a` → `accounts`, `/a`); else (None, url as is).

    The service is the host without port or credentials, lowercased; a local address, an IP address
    or a placeholder (`${accounts.host}`, `{host}`) names no service.
    """
    match = _ABSOLUTE.match(url.strip())
    if match is None:
        return None, url
    host = match.group(1).rsplit("@", 1)[-1]
    host = host if host.startswith("[") else host.split(":", 1)[0]
    path = match.group(2) or "/"
    if not host or "{" in host or "$" in host or host.lower() in _NO_SERVICE or host.replace(".", "").isdigit():
        return None, path
    return host.lower(), path


def _paths(ann: Annotation) -> list[str]:
    return [v.string for v in ann.values("value", "path", "url")]


def _request_methods(ann: Annotation) -> list[str]:
    # method = RequestMethod.GET, or {RequestMethod.POST, RequestMethod.PUT}, or a static import GET.
    return [v.text.rsplit(".", 1)[-1] for v in ann.values("method")]


def is_injected_member(modifiers: Modifiers) -> bool:
    """Field or setter injection: `@Autowired`, `@Inject`, `@Resource` (and `@Value` for properties)."""
    return modifiers.has("Autowired", "Inject", "Resource")


def lombok_constructor_fields(modifiers: Modifiers, fields: Sequence[tuple[Modifiers, bool]]) -> list[int]:
    """Indexes of the fields a Lombok-generated constructor takes, from `(modifiers, has_initializer)`.

    `@RequiredArgsConstructor`: final fields without initializer and `@NonNull` fields;
    `@AllArgsConstructor`: every non-static field except initialized finals (Lombok docs).
    """
    picked: list[int] = []
    required = modifiers.has("RequiredArgsConstructor")
    if not required and not modifiers.has("AllArgsConstructor"):
        return picked
    for i, (mods, init) in enumerate(fields):
        if "static" in mods.keywords:
            continue
        final = "final" in mods.keywords
        if (required and ((final and not init) or (mods.has("NonNull") and not init))) or (
            not required and not (final and init)
        ):
            picked.append(i)
    return picked


def injected_type(simple: str, type_arg: str | None) -> str:
    """The bean type an injection point asks for: `List<Handler>` → `Handler`, `OwnerRepository` as is.

    `simple` is the declared type's simple name, `type_arg` that of its sole type argument (if generic).
    """
    if type_arg is not None and simple in _INJECTION_WRAPPERS:
        return type_arg
    return simple
