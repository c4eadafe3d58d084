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
from pipeline.outline import Modifiers
from pipeline.spring import ANY_METHOD, join_path, split_url

UNRESOLVED = "?"
"""The first character of an unresolved outbound path: what follows is the expression as written."""
UNKNOWN_SERVICE = "-"
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
        return None, _path(text)
    service, path = split_url((base or "").rstrip("/") + text if base and not _absolute(text) else text)
    if _placeholder_base(path):  # `"${accounts.url}/accounts"`: a property as the base URL
        return None, _path(path.split("}", 1)[1])
    return service, _path(path)


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


def _placeholder_base(path: str) -> bool:
    return path.startswith("${") and "}" in path


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
        if service is None:
            service = next((split_url(v.string)[0] for v in feign.values("url")), None)
        return Client.FEIGN, service
    if not is_interface or not exchanges:
        return None
    exchange = modifiers.find("HttpExchange")
    base = [v.string for v in exchange.values("url", "value")] if exchange is not None else []
    return Client.HTTP_EXCHANGE, split_url(base[0])[0] if base else None


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
