"""Cross-service links (issue 16): who calls an endpoint, and which handlers a client call reaches.

Both directions read the outbound routes the pipeline recorded on calling chunks (`pipeline.outbound`,
stored as `Chunk.outbound` with the lookup keys `outbound_keys`) and the handlers' routes (`http_keys`),
matched as `find_endpoint` matches a path (`app.store.routes`), always through `SearchService`'s
lookups, so each read carries the caller's `Access` inside the query.

A declared client (a Feign or `@HttpExchange` interface method) is a call site, and so is every method
that calls it (`CallSite.through` names the client). When several handlers serve a call, all are
listed with their evidence: the pattern that matched, the HTTP method, and whether the service the
call names matches the handler's repository or module folder (`Target.evidence`); those the
service name matches come first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.auth.access import Access
from app.search.config import Module, module_of
from app.search.hits import Hit
from app.search.scoping import Filters, Where
from app.search.service import SearchService
from app.store.filters import any_of
from app.store.routes import candidate_query_keys, query_keys, route_matches, tail_matches
from pipeline.outbound import DECLARED_CLIENTS, OutboundRoute, declares_client, decode, is_configured, literal_tail
from pipeline.spring import ANY_METHOD

MAX_CLIENTS = 50
"""Declared client methods of one answer whose callers are looked up (one lookup each)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CallSite:
    """A chunk that calls an endpoint: the calls that match it, and the declared client it goes through."""

    hit: Hit
    routes: tuple[OutboundRoute, ...]
    through: Hit | None = None
    evidence: tuple[str, ...] = ()  # set on a candidate: a call whose URI the code does not fix (`candidates`)


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """A handler a client call reaches, with the call and why it is thought to serve it."""

    hit: Hit
    route: OutboundRoute
    caller: Hit
    evidence: tuple[str, ...]
    service_match: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Targets:
    """What a call site reaches: the handlers found, and its calls whose URI the code does not fix."""

    targets: list[Target]
    unresolved: list[tuple[Hit, OutboundRoute]]
    calls: int  # outbound calls read from the call sites, resolved or not


def calls_endpoint(route: OutboundRoute, path: str, http_method: str | None) -> bool:
    """Whether a resolved call reaches a route: a path (or pattern) either way round, and the HTTP method."""
    if not route.resolved:
        return False
    if not (route_matches(route.path, path) or route_matches(path, route.path)):
        return False
    return http_method is None or route.method in (http_method.upper(), ANY_METHOD) or http_method == ANY_METHOD


def candidates(hits: Iterable[Hit], path: str, http_method: str | None) -> list[CallSite]:
    """Calls whose URI the code does not fix (a base from a setter, a parameter) but whose literal tail ends `path`.

    Listed as candidates with the evidence, never as callers: the base could point anywhere (issue 28).
    """
    found: list[CallSite] = []
    for hit in hits:
        routes, evidence = [], []
        for route in map(decode, hit.chunk.outbound):
            tail = literal_tail(route)
            if tail is None or not tail_matches(tail, path):
                continue
            if http_method is not None and route.method not in (http_method.upper(), ANY_METHOD):
                continue
            routes.append(route)
            evidence.append(
                f"unresolved: the code does not fix its URI {route.path[1:]}; its literal part {tail} ends {path}"
                + (f"; its base defaults to {route.service}, which other assignments replace" if route.service else "")
            )
        if routes:
            found.append(CallSite(hit=hit, routes=tuple(routes), evidence=tuple(evidence)))
    return found


def is_declared_client(hit: Hit) -> bool:
    """A Feign or `@HttpExchange` interface method: its routes are calls it declares, not routes it serves."""
    return declares_client(hit.chunk.outbound)


class EndpointLinks:
    """The two cross-service lookups over the search module."""

    def __init__(self, search: SearchService) -> None:
        self.search = search

    async def callers(
        self, access: Access, path: str, http_method: str | None = None, repo: str | None = None
    ) -> list[CallSite]:
        """The client call sites of an endpoint across the repositories the caller may read (`repo` narrows them).

        Each declared client method is followed by the methods that call it; then the candidates: calls whose
        URI the code does not fix but whose literal tail the path ends with (`candidates`). A call is matched
        on its stored path; one whose base URL is a property is shown resolved (`services.Configured.resolve`).
        """
        keys = [*query_keys(path), *candidate_query_keys(path)]
        found = await self.search.lookup(access, Filters(repo=repo), any_of("outbound_keys", keys))
        stored = [r for hit in found for r in map(decode, hit.chunk.outbound)]
        known = await self.search.configured(access, stored) if any(is_configured(r.service) for r in stored) else None
        sites: list[CallSite] = []
        clients = 0
        for hit in found:
            matched = [r for r in map(decode, hit.chunk.outbound) if calls_endpoint(r, path, http_method)]
            # Shown with the service (and base path) its configuration gives, as `targets` reads it.
            routes = tuple(known.resolve(r, hit)[0] if known is not None else r for r in matched)
            if not routes:
                continue
            sites.append(CallSite(hit=hit, routes=routes))
            if any(r.client in DECLARED_CLIENTS for r in routes) and clients < MAX_CLIENTS:
                clients += 1
                callers = await self.search.callers(access, hit.qualified_name, Where(repo=repo))
                sites.extend(CallSite(hit=c, routes=routes, through=hit) for c in callers if c.id != hit.id)
        return sites + candidates(found, path, http_method)

    async def targets(self, access: Access, name: str, repo: str | None = None) -> Targets:
        """The handlers the named call site reaches in any repository the caller may read.

        `name` is a method that calls over HTTP, a declared client method, or a method calling one.
        """
        calls = await self._calls_of(access, name, repo)
        known = await self.search.configured(access, [route for _, route in calls])
        prefixes = await self.search.route_prefixes(access)
        targets: list[Target] = []
        unresolved: list[tuple[Hit, OutboundRoute]] = []
        facts = _Known(known.names, prefixes)
        for caller, stored in calls:
            if not stored.resolved:
                unresolved.append((caller, stored))
                targets.extend(await self._candidate_targets(access, stored, caller, facts))
                continue
            route, said = known.resolve(stored, caller)
            served = await self._served(access, route, caller, facts)
            targets.extend(dataclasses.replace(t, evidence=(*said, *t.evidence)) for t in served)
        # Stable: the endpoint order within each group; an unresolved call's candidates after the calls the code fixes.
        targets.sort(key=lambda t: (not t.route.resolved, not t.service_match))
        return Targets(targets=targets, unresolved=unresolved, calls=len(calls))

    async def _candidate_targets(
        self, access: Access, route: OutboundRoute, caller: Hit, known: _Known
    ) -> list[Target]:
        """The handlers of an unresolved call's literal tail (`host + "pets/visits"`: `/pets/visits`), as candidates."""
        tail = literal_tail(route)
        if tail is None:
            return []
        method = None if route.method == ANY_METHOD else route.method
        found = []
        for hit in await self.search.endpoint(access, tail, method):
            if is_declared_client(hit) or hit.id == caller.id:
                continue
            target = _target(hit, dataclasses.replace(route, path=tail), caller, known)
            said = f"unresolved: the code does not fix its URI {route.path[1:]}; its literal part {tail} is the route"
            rest = (e.replace("service", "its base's default service", 1) for e in target.evidence[1:])
            found.append(dataclasses.replace(target, route=route, evidence=(said, *rest)))
        return found

    async def _served(self, access: Access, route: OutboundRoute, caller: Hit, known: _Known) -> list[Target]:
        """The handlers of one call, a service's configured context path removed (`endpoints.endpoint`'s rule).

        Where no handler of the service the call names serves it and that service has no configured context
        path the caller may read, a leading segment is tried as one (`/accounts/{name}` to `account-service`
        reaches its `/{name}`), only for handlers of that service, and the evidence says it is assumed.
        """
        method = None if route.method == ANY_METHOD else route.method

        def kept(hit: Hit) -> bool:
            return not is_declared_client(hit) and hit.id != caller.id

        handlers = [h for h in await self.search.endpoint(access, route.path, method) if kept(h)]
        targets = [_target(h, route, caller, known, context=_configured_at(h, route.path, known)) for h in handlers]
        inner = _within_context(route.path)
        if route.service is None or inner is None or any(t.service_match for t in targets):
            return targets
        seen = {h.id for h in handlers}
        for hit in await self.search.endpoint(access, inner[1], method):
            if kept(hit) and hit.id not in seen and module_of(hit) not in known.prefixes:
                target = _target(hit, route, caller, known, context=(inner[0], ""))
                if target.service_match:
                    targets.append(target)
        return targets

    async def _calls_of(self, access: Access, name: str, repo: str | None) -> list[tuple[Hit, OutboundRoute]]:
        """The outbound calls of the named methods: their own, else those of the declared clients they call."""
        where = Where(repo=repo)
        named = await self.search.symbol(access, name, where)
        calls = [(hit, route) for hit in named for route in map(decode, hit.chunk.outbound)]
        if calls or not named:
            return _unique(calls)
        for _, targets in await self.search.callees(access, name, where):
            calls.extend((client, route) for client in targets for route in map(decode, client.chunk.outbound))
        return _unique(calls)


def _unique(calls: Iterable[tuple[Hit, OutboundRoute]]) -> list[tuple[Hit, OutboundRoute]]:
    return list({(hit.id, route.encode()): (hit, route) for hit, route in calls}.values())


def _within_context(path: str) -> tuple[str, str] | None:
    """`/accounts/{name}` → (`/accounts`, `/{name}`): a leading literal segment read as a context path."""
    segments = [s for s in path.split("/") if s]
    if len(segments) < 2 or segments[0].startswith(("{", "$", "*")):
        return None
    return "/" + segments[0], "/" + "/".join(segments[1:])


@dataclass(frozen=True, slots=True)
class _Known:
    """What the readable configuration says of the services: their names, and their routes' prefixes."""

    names: dict[Module, set[str]]
    prefixes: dict[Module, dict[str, str]]  # `app.search.config.route_prefixes`


def _configured_at(handler: Hit, path: str, known: _Known) -> tuple[str, str] | None:
    """The configured prefix (and where it is set) under which the handler serves `path`, when not as written."""
    chunk = handler.chunk
    if any(route_matches(p, path) or route_matches(path, p) for p in chunk.http_path):
        return None
    for prefix, said in known.prefixes.get(module_of(handler), {}).items():
        if path.startswith(prefix + "/") and any(route_matches(p, path[len(prefix) :]) for p in chunk.http_path):
            return prefix, said
    return None


def _target(
    handler: Hit, route: OutboundRoute, caller: Hit, known: _Known, *, context: tuple[str, str] | None = None
) -> Target:
    """`context`: a prefix the handler serves the path under, and where it is set ("": assumed, not configured)."""
    chunk = handler.chunk
    path = route.path if context is None else route.path.removeprefix(context[0])
    patterns = [p for p in chunk.http_path if route_matches(p, path) or route_matches(path, p)]
    evidence = [f"path {route.path} matches {', '.join(patterns) or 'its route'}"]
    if context is not None and context[1]:
        evidence[0] += f" under the context path {context[0]} ({context[1]})"
    elif context is not None:
        evidence[0] += f" under the context path {context[0]} (assumed: no configuration of it the caller may read)"
    evidence.append(f"method {'|'.join(chunk.http_method)}" + (" (any)" if route.method == ANY_METHOD else ""))
    names = known.names.get(module_of(handler), set())
    match = route.service is not None and serves_service(route.service, handler, names)
    if route.service is None:
        evidence.append("the call names no service")
    elif match:
        evidence.append(f"service {route.service} matches {handler.repo_path}")
    else:
        evidence.append(f"service {route.service} does not match {handler.repo_path}")
    if handler.repo_path == caller.repo_path:
        evidence.append("same repository as the caller")
    return Target(hit=handler, route=route, caller=caller, evidence=tuple(evidence), service_match=match)


def serves_service(service: str, handler: Hit, names: Iterable[str] = ()) -> bool:
    """Whether a service name is the handler's repository, a module folder, or its application's name.

    The module folders are those before `src/`; `names` the `spring.application.name`s its module's
    configuration gives (`app.search.services.Configured.names`). Compared without case, `_` as `-`, and
    with or without a `-service` suffix.
    """
    wanted = _names(service)
    folders = handler.file_path.split("/")[:-1]
    modules = folders[: folders.index("src")] if "src" in folders else folders[:1]
    candidates = [handler.repo_path.rsplit("/", 1)[-1], *modules, *names]
    return any(_names(c) & wanted for c in candidates)


def _names(name: str) -> set[str]:
    norm = name.strip().lower().replace("_", "-")
    return {norm, norm.removesuffix("-service")} - {""}


def describe(routes: Sequence[OutboundRoute]) -> list[str]:
    """Calls as an agent reads them (`OutboundRoute.describe`)."""
    return [r.describe() for r in routes]
