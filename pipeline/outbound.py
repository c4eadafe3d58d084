"""Outbound HTTP calls: the routes a chunk calls in other services, and the service each names (issue 16).

An outbound route is recorded on the calling chunk as `client METHOD service path` (`OutboundRoute`):
- a Feign client method (`@FeignClient`) or a Spring HTTP interface method (`@HttpExchange` on an
  interface) is a client: its own routes, read by `pipeline.spring`, are its outbound routes, with the
  service its `@FeignClient(name=/value=/url=)` or type-level `@HttpExchange(url=)` names;
- `RestTemplate`, `RestClient` and `WebClient` calls in a method body (`pipeline.http_calls` reads their
  arguments): the URI from literals, concatenation and the file's constants, the service from an
  absolute base URL (`http://accounts/...`, `lb://accounts`).

A URI the file cannot tell (a variable from configuration, a builder) is recorded as unresolved, its
path `?` and the expression as written, so the call is visible on its chunk and counted, but no route
key is derived from it (docs/decisions.md, "Cross-service links").
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from pipeline._values import value
from pipeline.config_keys import placeholders
from pipeline.outline import Modifiers
from pipeline.spring import ANY_METHOD, join_path, split_url

UNRESOLVED = "?"
"""The first character of an unresolved outbound path: what follows is the expression as written."""
UNKNOWN_SERVICE = "-"
CONFIGURED = "${"
"""A service that starts so is the property placeholder of the call's base URL (`configured_route`)."""
_DEFAULTED = re.compile(r"\$\{[^{}:]*:([^{}]*)\}")
_MAX_EXPRESSION = 120


class Client(enum.StrEnum):
    """How a call site talks HTTP."""

    FEIGN = "feign"
    HTTP_EXCHANGE = "http_exchange"
    REST_TEMPLATE = "rest_template"
    REST_CLIENT = "rest_client"
    WEB_CLIENT = "web_client"


DECLARED_CLIENTS = frozenset({Client.FEIGN, Client.HTTP_EXCHANGE})
"""Clients declared as interface methods (their routes are their own): callers reach them through a call."""


@value
class OutboundRoute:
    """One HTTP call a chunk makes: its client, method (`ANY` when unknown), target service (None) and path."""

    client: Client
    method: str
    # The service the URI names; on an unresolved call, the one its base field's default names (a literal
    # initializer a setter replaces: `pipeline.field_values.FieldValues.defaults`), evidence and not a target.
    service: str | None
    path: str  # a route template (`/accounts/{name}`), or `?expression` when unresolved

    @property
    def resolved(self) -> bool:
        """Whether the path is known (a route key can be derived from it)."""
        return not self.path.startswith(UNRESOLVED)

    def encode(self) -> str:
        """The stored form: `client METHOD service path` (the path last: an unresolved one may hold spaces)."""
        return f"{self.client} {self.method} {self.service or UNKNOWN_SERVICE} {self.path}"

    def describe(self) -> str:
        """As an agent reads it: `GET /accounts/{name} -> accounts (feign)`; `-> accounts by default` if unresolved."""
        target = (f" -> {self.service}" + ("" if self.resolved else " by default")) if self.service else ""
        return f"{self.method} {self.path}{target} ({self.client})"


def decode(stored: str) -> OutboundRoute:
    """An `OutboundRoute` from its stored form (`OutboundRoute.encode`).

    Raises:
        ValueError: the text is not an encoded route.
    """
    client, method, service, path = stored.split(" ", 3)
    return OutboundRoute(
        client=Client(client), method=method, service=None if service == UNKNOWN_SERVICE else service, path=path
    )


def declares_client(stored: Iterable[str]) -> bool:
    """Whether a chunk's outbound routes are a Feign or `@HttpExchange` method's own: a client, not a handler."""
    return any(decode(text).client in DECLARED_CLIENTS for text in stored)


def resolved_paths(stored: Iterable[str]) -> tuple[str, ...]:
    """The path templates of a chunk's resolved outbound routes (`Chunk.outbound`), once each."""
    return tuple(dict.fromkeys(route.path for text in stored if (route := decode(text)).resolved))


def literal_tails(stored: Iterable[str]) -> tuple[str, ...]:
    """The literal tails of a chunk's unresolved outbound routes (`literal_tail`), once each."""
    return tuple(dict.fromkeys(tail for text in stored if (tail := literal_tail(decode(text))) is not None))


class Var(NamedTuple):
    """A part of a URI the file does not fix (a parameter, a field from configuration, a call)."""

    name: str


Piece = str | Var


def spelt_out(pieces: Sequence[Piece]) -> str | None:
    """The text the pieces spell when every one is literal (a pattern, a constant); None when one is a `Var`."""
    return "".join(p for p in pieces if isinstance(p, str)) if all(isinstance(p, str) for p in pieces) else None


def unresolved(expression: str) -> str:
    """The path of an unresolved call: `?` and the expression squashed and capped."""
    squashed = " ".join(expression.split())
    return UNRESOLVED + (squashed if len(squashed) <= _MAX_EXPRESSION else squashed[: _MAX_EXPRESSION - 1] + "…")


def uri_route(pieces: Sequence[Piece], base: str | None = None) -> tuple[str | None, str] | None:
    """The (service, path template) a URI's pieces give, or None when no path can be read from them.

    Variables become path variables (`"/users/" + id` → `/users/{id}`); variables before the first
    literal that starts a path are a base URL from configuration (service unknown). `base` is a literal
    base URL from the same chain (`WebClient.create("http://accounts")`).
    """
    parts = list(pieces)
    configured = False
    while parts and isinstance(parts[0], Var):
        parts.pop(0)
        configured = True
    if not parts:
        return None
    text = "".join(p if isinstance(p, str) else "{" + _variable_name(p.name) + "}" for p in parts)
    if configured:
        if not text.startswith(("/", "?")):
            return None  # `host + "x"`: not a path
        return None, _path(inline_defaults(text))
    joined = (base or "").rstrip("/") + text if base and not _absolute(text) else text
    placeholder = configured_base(joined)
    if placeholder is not None:  # `"${accounts.url}/accounts"`: a property as the base URL
        return configured_route(*placeholder)
    service, path = split_url(inline_defaults(joined))
    return service, _path(path)


def configured_base(text: str) -> tuple[str, str] | None:
    """`${visits.url:http://visits}/pets` -> (`${visits.url:http://visits}`, `/pets`): a property as the base URL."""
    if not text.startswith("${"):
        return None
    depth = 0
    for index in range(len(text)):
        if text.startswith("${", index):
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return text[: index + 1], text[index + 1 :]
    return None


def configured_route(placeholder: str, rest: str) -> tuple[str | None, str]:
    """The (service, path) of a call whose base URL is a property: the placeholder is its service (`CONFIGURED`).

    The path is the rest, under the path of the placeholder's default URL (`${k:http://visits/api}` + `/pets`:
    `/api/pets`); the configured value replaces that base at query time (`app.search.services`). A placeholder
    holding a space cannot be stored as a service: then no service.
    """
    found = placeholders(placeholder)
    default = inline_defaults(found[0][1]) if found else ""
    service, base_path = split_url(default)
    base_path = base_path if default and (service is not None or base_path != default) else ""
    stored = None if any(c.isspace() for c in placeholder) else placeholder
    return stored, _path(base_path.rstrip("/") + "/" + inline_defaults(rest).lstrip("/"))


def inline_defaults(text: str) -> str:
    """Each `${key:default}` as its default (innermost first, bounded): `http://${host:visits}/x` -> `http://visits/x`."""
    for _ in range(8):
        replaced = _DEFAULTED.sub(lambda m: m.group(1), text)
        if replaced == text:
            break
        text = replaced
    return text


def is_configured(service: str | None) -> bool:
    """Whether a route's service is a property placeholder (`configured_route`), resolved at query time."""
    return service is not None and service.startswith(CONFIGURED)


def literal_tail(route: OutboundRoute) -> str | None:
    """The path an unresolved call's URI ends with, read from its literal parts (None: none to read).

    `hostname + "pets/visits?petId={petId}"` ends with `/pets/visits` whatever `hostname` holds: what a
    candidate caller of an endpoint is matched on when the code does not fix its base (issue 28).
    """
    if route.resolved or route.path.endswith("…"):
        return None
    pieces = _top_level_pieces(route.path[len(UNRESOLVED) :])
    while pieces and isinstance(pieces[0], Var):
        pieces.pop(0)
    if not any(isinstance(p, str) and p.strip("/?") for p in pieces):
        return None
    text = "".join(p if isinstance(p, str) else "{" + _variable_name(p.name) + "}" for p in pieces)
    path = _path(split_url(text)[1])
    return path if path.strip("/") else None


def _top_level_pieces(expression: str) -> list[Piece]:
    """A Java `+` expression as written, split at its top-level `+`: string literals, anything else a `Var`."""
    parts: list[str] = []
    depth, quoted, start, index = 0, False, 0, 0
    while index < len(expression):
        char = expression[index]
        if quoted:
            index += 2 if char == "\\" else 1
            quoted = quoted and char != '"'
            continue
        if char == '"':
            quoted = True
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "+" and depth == 0:
            parts.append(expression[start:index].strip())
            start = index + 1
        index += 1
    parts.append(expression[start:].strip())
    literal = re.compile(r'^"((?:[^"\\]|\\.)*)"$')
    return [Var(p) if (m := literal.match(p)) is None else m.group(1).replace('\\"', '"') for p in parts if p]


def _absolute(text: str) -> bool:
    return split_url(text)[1] != text


def _variable_name(expression: str) -> str:
    """A path variable's name for an expression: its last identifier (`account.getName()` → `getName`)."""
    words = re.findall(r"[A-Za-z_$][\w$]*", expression)
    return words[-1] if words else "var"


def _path(text: str) -> str:
    """A path template: no query or fragment, one slash between segments, none trailing."""
    path = re.split(r"[?#]", text, maxsplit=1)[0]
    return join_path("", path)


def client_of(modifiers: Modifiers, is_interface: bool, exchanges: bool) -> tuple[Client, str | None] | None:
    """Whether a type declares a client (Feign, or an `@HttpExchange` interface), and the service it names.

    `exchanges`: whether a method of the type carries an `@*Exchange` annotation. An interface whose
    methods carry `@GetMapping` is a contract a controller implements, not a client (unless `@FeignClient`).
    A Feign client's service is its `name` (or `value`, `serviceId`), else the host of its `url`; a
    property placeholder names no service. An HTTP interface's is the host of its `@HttpExchange(url)`.
    """
    feign = modifiers.find("FeignClient")
    if feign is not None:
        named = [v.string for v in feign.values("name", "value", "serviceId")]
        service = _service_name(named[0]) if named else None
        urls = [v.string for v in feign.values("url")]
        if urls and (placeholder := configured_base(urls[0].strip())) is not None:
            # `url = "${clients.visits.url}"`: the property decides; the client's name stands as its default host.
            return Client.FEIGN, _with_default(placeholder[0], service)
        if service is None:
            service = next((split_url(url)[0] for url in urls), None)
        return Client.FEIGN, service
    if not is_interface or not exchanges:
        return None
    exchange = modifiers.find("HttpExchange")
    base = [v.string for v in exchange.values("url", "value")] if exchange is not None else []
    if base and (placeholder := configured_base(base[0].strip())) is not None:
        return Client.HTTP_EXCHANGE, _with_default(placeholder[0], None)
    return Client.HTTP_EXCHANGE, split_url(base[0])[0] if base else None


def _with_default(placeholder: str, service: str | None) -> str | None:
    """A placeholder to store as a client's service: `${k}`, or `${k:http://name}` when only a name is known."""
    if any(c.isspace() for c in placeholder):
        return service
    found = placeholders(placeholder)
    if service is None or not found or found[0][1] or placeholder.count("${") > 1:
        return placeholder
    return "${" + found[0][0] + ":http://" + service + "}"


def _service_name(name: str) -> str | None:
    return None if not name or "${" in name else name.strip().lower()


def declared_routes(
    client: Client, service: str | None, methods: Iterable[str], paths: Iterable[str]
) -> tuple[str, ...]:
    """A client method's outbound routes (encoded): each of its methods with each of its paths."""
    paths = tuple(paths)
    return tuple(
        OutboundRoute(client=client, method=m or ANY_METHOD, service=service, path=p).encode()
        for m in methods
        for p in paths
    )
