"""Routes: the handlers of an HTTP route, the routes composed mapping annotations give, the one Spring dispatches to.

A handler annotated with a composed mapping (an annotation type whose own annotation is a Spring
mapping) has its routes only once the mappings are learned from the annotation types the caller may read.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from app.auth.access import Access
from app.search.config import route_prefixes
from app.search.hits import Hit
from app.search.ranking import handles
from app.search.reader import Reader
from app.search.scoping import EVERYWHERE, Filters, Where
from app.store.filters import any_of, either
from app.store.routes import application, query_keys, route_matches, specificity
from pipeline.model import SymbolType
from pipeline.outbound import declares_client
from pipeline.spring import JAXRS_VERBS, learned_mappings, mapping_route, split_url

_VERB_FIRST = re.compile(r"^\s*([A-Za-z]+)\s+(\S.*)$")


class AskedRoute(NamedTuple):
    """A route as asked (`GET /things/{id}`, `http://things/things/7?x=1`, `/things/7`), read into its parts."""

    method: str | None  # upper case; None: any
    path: str  # the path alone: no scheme, host, query or fragment
    service: str | None  # the host of a full URL, when it names one
    conflict: str | None = None  # a verb in the text other than the `http_method` given (which wins)

    def describe(self) -> str:
        """What was read, for an answer's header: `GET /things/{id}` (and `on things-service`)."""
        return f"{self.method or 'any'} {self.path}" + (f" on {self.service}" if self.service else "")


def asked_route(text: str, http_method: str | None = None) -> AskedRoute:
    """The HTTP method, path and service a route argument names: a leading verb and a full URL are accepted.

    A verb given as `http_method` wins over one written in the text (`conflict` says which was dropped).
    """
    written: str | None = None
    rest = text.strip()
    match = _VERB_FIRST.match(rest)
    if match is not None and match.group(1).upper() in JAXRS_VERBS:
        written, rest = match.group(1).upper(), match.group(2).strip()
    service, path = split_url(rest)
    path = re.split(r"[?#]", path, maxsplit=1)[0] or "/"
    if not path.startswith("/"):
        path = "/" + path
    method = http_method.upper() if http_method else written
    conflict = written if written is not None and method != written else None
    return AskedRoute(method, path, service, conflict)


async def endpoint(
    reader: Reader,
    access: Access,
    path: str,
    http_method: str | None = None,
    where: Where = EVERYWHERE,
) -> list[Hit]:
    """Handlers of a route; `/owners/42/pets/new` finds `/owners/{ownerId}/pets/new`.

    A service whose configuration sets a context path or servlet path (`app.search.config.route_prefixes`)
    serves its routes under it too: `/api/owners/42` finds `/owners/{id}` of the module that sets `/api`.
    """
    configured = await route_prefixes(reader, access, where.repo)
    prefixes = {p for each in configured.values() for p in each}
    under = {p: path[len(p) :] or "/" for p in prefixes if path.startswith(p + "/")}
    keys = list(dict.fromkeys(k for each in (path, *under.values()) for k in query_keys(each)))
    found = await reader.lookup(
        access, where.as_filters(), either(any_of("http_keys", keys), any_of("mapping_keys", keys))
    )
    verbs = [http_method.upper()] if http_method else []
    scored = []
    for hit in await with_composed_routes(reader, access, found):
        if not handles(verbs, hit.chunk):
            continue  # the verb is checked here: a composed mapping's is known only after `with_composed_routes`
        own = configured.get((hit.repo_path, application(hit.file_path)), {})
        served = [path, *(under[p] for p in own if p in under)]
        matching = [p for p in hit.chunk.http_path if any(route_matches(p, each) for each in served)]
        if matching:
            scored.append((min(specificity(p) for p in matching), hit))
    # The handler Spring dispatches to (the most specific pattern) comes first, a declared client (Feign,
    # `@HttpExchange`: it calls the route, serves none) after the handlers; stable otherwise.
    scored.sort(key=lambda pair: (declares_client(pair[1].chunk.outbound), pair[0]))
    return dispatched(scored)


async def annotation_types(reader: Reader, access: Access) -> list[Hit]:
    """Every annotation type the caller may read (one lookup): what stereotypes and mappings are learned from."""
    return await reader.lookup(access, Filters(symbol_type=SymbolType.ANNOTATION))


async def with_composed_routes(reader: Reader, access: Access, hits: list[Hit]) -> list[Hit]:
    """The hits, each handler's `routes_if_mapping` made its routes where the annotation is a composed mapping.

    The mappings are learned from the annotation types the caller may read (`pipeline.spring.learned_mappings`),
    across repositories, in one lookup made only when some hit has such routes.
    """
    if not any(h.chunk.routes_if_mapping and not h.chunk.http_path for h in hits):
        return hits
    declared = await annotation_types(reader, access)
    learned = learned_mappings({h.chunk.name: (h.chunk.annotation_names, h.chunk.maps_http) for h in declared})
    return [_routed(h, learned) for h in hits]


def _routed(hit: Hit, learned: Mapping[str, tuple[str, ...]]) -> Hit:
    """The hit with the routes of its `routes_if_mapping` whose annotation is a learned mapping (as it is without)."""
    chunk = hit.chunk
    verbs: dict[str, None] = {}
    paths: dict[str, None] = {}
    for entry in () if chunk.http_path else chunk.routes_if_mapping:
        name, path = mapping_route(entry)
        if name in learned:
            verbs.update(dict.fromkeys(learned[name]))
            paths[path] = None
    if not paths:
        return hit
    routed = dataclasses.replace(chunk, http_method=tuple(verbs), http_path=tuple(paths))
    return dataclasses.replace(hit, stored=dataclasses.replace(hit.stored, chunk=routed))


def dispatched(scored: Sequence[tuple[tuple[int, int, int], Hit]]) -> list[Hit]:
    """Of route matches (specificity, hit), most specific first, those an application would dispatch to.

    Within one application (repository and build module), HTTP method and stereotype, Spring serves a
    path by its most specific pattern only: `/order/list` shadows `/order/{id}` there. Other
    applications (another microservice) and Feign clients (a stereotype of their own) keep their matches.
    """
    best: dict[tuple[str, str, tuple[str, ...], str | None], tuple[int, int, int]] = {}
    kept = []
    for rank, hit in scored:
        c = hit.chunk
        where = (c.repo_path, application(c.file_path), tuple(sorted(c.http_method)), c.stereotype)
        if best.setdefault(where, rank) == rank:
            kept.append(hit)
    return kept
