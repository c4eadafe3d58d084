"""Which calls are HTTP client calls, and the route each makes: the rules, over records any language gives.

A language's reader (`pipeline.http_calls` for Java, `pipeline.kotlin.http` for Kotlin) writes each
candidate call of a body as a `ClientCall`: its name, its receiver, its arguments (their text, the name
they spell, their string value as `pipeline.outbound` pieces) and the calls its receiver is made of. The
rules below read only those records, so `RestTemplate`, `RestClient` and `WebClient` calls are told apart,
and their URI, method and service read, once for every language.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple, Protocol

from pipeline.outbound import Client, OutboundRoute, Piece, Var, inline_defaults, unresolved, uri_route
from pipeline.spring import ANY_METHOD, JAXRS_VERBS, split_url

REST_TEMPLATE_VERBS: Mapping[str, str | None] = {
    "getForObject": "GET",
    "getForEntity": "GET",
    "postForObject": "POST",
    "postForEntity": "POST",
    "postForLocation": "POST",
    "put": "PUT",
    "delete": "DELETE",
    "patchForObject": "PATCH",
    "headForHeaders": "HEAD",
    "optionsForAllow": "OPTIONS",
    "exchange": None,  # the method is an argument: `HttpMethod.POST`
}
REST_TEMPLATE_TYPES = frozenset({"RestTemplate", "RestOperations", "TestRestTemplate", "OAuth2RestTemplate"})
FLUENT_VERBS = frozenset({"get", "post", "put", "delete", "patch", "head", "options"})
BASE_CALLS = frozenset({"create", "baseUrl", "rootUri"})
"""Calls whose first argument is a client's base URL (`WebClient.create`, `.baseUrl`, `RestTemplateBuilder.rootUri`)."""
PROPERTIES_TYPES = ("Properties", "Props", "Config", "Configuration", "Settings")
"""How the names of `@ConfigurationProperties` classes end, by convention (a getter of another type is code)."""
_GETTER = re.compile(  # `props.getVisitsUrl()`, `props.visitsUrl()` (a record), `props.visitsUrl` (Kotlin, a field)
    r"(?P<receiver>(?:this\.)?[a-z_$][\w$]*)\.(?:get(?P<getter>[A-Z][\w$]*)\(\)|(?P<field>[A-Za-z_$][\w$]*)(?:\(\))?)"
)
_URI = "uri"
MAX_NESTING = 128
"""A URI expression's operands read one inside the other, at most: deeper, the rest is a variable (hostile input)."""


class Arg(NamedTuple):
    """One argument of a call, as its language's reader sees it."""

    text: str  # as written
    name: str | None  # the last identifier of a plain or qualified name (`HttpMethod.POST` → `POST`), else None
    pieces: Callable[[], list[Piece]] | None  # its string value as pieces, read when asked; None: a lambda


class Link(NamedTuple):
    """A call a receiver is made of (`get()` in `client.get().uri(...)`)."""

    name: str
    arguments: tuple[Arg, ...]


class ClientCall(NamedTuple):
    """A call that may be an HTTP client call: `rest.getForObject(...)`, `client.get().uri(...)`."""

    name: str
    arguments: tuple[Arg, ...]
    target: str  # the receiver as written
    named_target: bool  # the receiver is a variable or a field (`rest`, `this.rest`), not an expression
    chain: tuple[Link, ...]  # the calls the receiver is made of, outermost first; () when it is no call
    root: str  # what that chain starts from (`client`, `WebClient`)


class Names(Protocol):
    """What a body's reader knows of the names a call may use (Java's and Kotlin's scopes)."""

    @property
    def types(self) -> Mapping[str, str]:
        """The declared types of the names the body sees (locals, parameters, fields)."""

    @property
    def defaults(self) -> Mapping[str, str]:
        """The literal defaults of fields other assignments replace (`pipeline.field_values.FieldValues.defaults`)."""

    def base_of(self, name: str) -> str | None:
        """The base URL of the client a name holds: a field's (`FieldValues.bases`), a local's (`client_base`)."""


def client_base(chain: Iterable[Link]) -> str | None:
    """The base URL a client-building chain is given (`BASE_CALLS`), from the literal parts of its argument."""
    for name, arguments in chain:
        if (
            name in BASE_CALLS
            and arguments
            and (literal := "".join(p for p in _pieces(arguments[0]) if isinstance(p, str)))
        ):
            return literal
    return None


def is_candidate(name: str) -> bool:
    """Whether a call of this name may be a client call (its record is worth writing)."""
    return name == _URI or name in REST_TEMPLATE_VERBS


def _fluent_owner(owner: str) -> bool:
    return any(f".{verb}()" in owner for verb in (*FLUENT_VERBS, "method"))


_CLIENT_MARKS = (b"estTemplate", b"estOperations", b"ebClient", b"estClient")
"""What a file that makes client calls spells: `RestTemplate` or `restTemplate`, `WebClient`, `RestClient`."""


def mentions_clients(data: bytes) -> bool:
    """Whether a file's source names an HTTP client at all (one byte search each): most files do not."""
    return any(mark in data for mark in _CLIENT_MARKS)


_SUFFIXES = tuple(f".{name}" for name in (*REST_TEMPLATE_VERBS, _URI))


def wants_arguments(calls: tuple[str, ...]) -> bool:
    """Whether a method's calls (`Receiver.method`, as `pipeline.calls` writes them) include an HTTP client call."""
    for call in calls:
        if not call.endswith(_SUFFIXES):  # nearly every call: one C-level test
            continue
        owner, _, name = call.rpartition(".")
        if name in REST_TEMPLATE_VERBS and _rest_template(owner, {}):
            return True
        if name == _URI and _fluent_owner(owner):
            return True
    return False


def _rest_template(receiver: str, types: Mapping[str, str]) -> bool:
    """A receiver that is a RestTemplate: its declared type, else its name (`restTemplate`, `this.rest`)."""
    last = receiver.rsplit(".", 1)[-1]
    declared = types.get(last, last)
    return declared in REST_TEMPLATE_TYPES or "resttemplate" in last.lower() or "restoperations" in last.lower()


def classify(call: ClientCall, names: Names) -> OutboundRoute | None:
    """The route a call makes, or None when it is no HTTP client call; `names` what the body's reader knows."""
    name, arguments = call.name, call.arguments
    if name in REST_TEMPLATE_VERBS and call.named_target:
        if not _rest_template(call.target, names.types) or not arguments:
            return None
        verb = REST_TEMPLATE_VERBS[name] or _http_method(arguments[1:])
        return _route(Client.REST_TEMPLATE, verb, arguments[0], _held_base(call.target, names), names)
    if name == _URI and arguments:
        chain = _fluent_chain(call, names)
        if chain is not None:
            client, verb, base = chain
            return _route(client, verb, arguments[0], base, names)
    return None


def _held_base(receiver: str, names: Names) -> str | None:
    return names.base_of(receiver.removeprefix("this."))


def _pieces(arg: Arg) -> list[Piece]:
    return arg.pieces() if arg.pieces is not None else []


def _route(client: Client, verb: str, uri: Arg, base: str | None, names: Names) -> OutboundRoute:
    pieces = _pieces(uri)
    if pieces and isinstance(pieces[0], Var) and (bound := _bound_property(pieces[0].name, names)) is not None:
        pieces = [bound, *pieces[1:]]  # `props.getVisitsUrl() + "/x"`: the property the getter's field binds
    read = uri_route(pieces, base) if pieces else None
    if read is None:
        service = _default_service(pieces, names.defaults)  # an unresolved call's service: its base field's default's
        return OutboundRoute(client=client, method=verb, service=service, path=unresolved(uri.text))
    service, path = read
    return OutboundRoute(client=client, method=verb, service=service, path=path)


def _default_service(pieces: list[Piece], defaults: Mapping[str, str]) -> str | None:
    """The service named by the default of the field a URI starts with (`hostname`, `this.hostname`), if any."""
    first = pieces[0] if pieces else None
    if not isinstance(first, Var):
        return None
    default = defaults.get(first.name.removeprefix("this."))
    return split_url(inline_defaults(default))[0] if default is not None else None


def _bound_property(expression: str, names: Names) -> str | None:
    """`props.getVisitsUrl()` (or Kotlin's `props.visitsUrl`) as `${ClientProperties.visitsUrl}`: the key it binds.

    Only for a receiver typed `*Properties` (`PROPERTIES_TYPES`: a `@ConfigurationProperties` class by
    convention); `app.search.services` finds the type's binding.
    """
    match = _GETTER.fullmatch(expression.replace(" ", ""))
    if match is None:
        return None
    declared = names.types.get(match["receiver"].removeprefix("this."), "").rsplit(".", 1)[-1]
    if not declared.endswith(PROPERTIES_TYPES):
        return None
    getter = match["getter"]
    field = getter[:1].lower() + getter[1:] if getter else match["field"]
    return "${" + declared + "." + field + "}"


def _http_method(arguments: tuple[Arg, ...]) -> str:
    """`HttpMethod.POST` (or a static import `POST`) among the arguments; `ANY` when none names one."""
    return next((arg.name for arg in arguments if arg.name in JAXRS_VERBS), ANY_METHOD)


def _fluent_chain(call: ClientCall, names: Names) -> tuple[Client, str, str | None] | None:
    """`client.get()`, `client.method(HttpMethod.POST)` before `.uri(...)`: the client kind, verb and any base URL.

    The base is the chain's own (`WebClient.create(x).get()`), else the one the root's client was built with.
    """
    verb: str | None = None
    for name, arguments in call.chain:
        if verb is None and name in FLUENT_VERBS and not arguments:
            verb = name.upper()
        elif verb is None and name == "method" and arguments:
            verb = _http_method(arguments)
    if verb is None:
        return None
    base = client_base(call.chain) or _held_base(call.root, names)
    return _client_kind(call.root, names.types), verb, base


def _client_kind(root: str, types: Mapping[str, str]) -> Client:
    last = root.rsplit(".", 1)[-1]
    declared = types.get(last, last)
    return Client.REST_CLIENT if "restclient" in declared.lower() else Client.WEB_CLIENT
