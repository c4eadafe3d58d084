"""`impact` (issue 28): what a change reaches, up the call graph, out through HTTP, into other services.

From seeds (the methods a symbol names, or the methods whose lines a change touches) it walks the
callers breadth first, `hops` levels at most, with the queries `get_callers` uses (`lookups.call_keys`:
calls resolved through the type hierarchy): one store lookup per level for the whole frontier, each
caller attributed to the callees whose call keys it holds. Then the HTTP endpoints the reached methods
serve (their routes, composed mappings included, `app.search.endpoints`), and the client call sites in
any readable repository that reach those endpoints (`app.search.links.EndpointLinks.callers`).

Every read goes through the search module with the caller's `Access` inside the query, so a path of
evidence never runs through code the caller may not read: an unreadable caller is never found, so
nothing beyond it is either. Bounded by `hops` (at most `MAX_HOPS`), `MAX_NODES` methods, `MAX_ENDPOINTS`
endpoints and `time_s`; a bound that cut the walk is named in `Impact.cut`. Each method, endpoint and
call site is listed once, with the first (shortest) path that reached it.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.auth.access import Access
from app.core.errors import PayloadError
from app.search.code import clean_path
from app.search.frontier import frontier_keys
from app.search.hits import Hit
from app.search.links import EndpointLinks, is_declared_client
from app.search.scoping import Filters, Where
from app.search.service import SearchService
from app.store.filters import any_of, either
from pipeline.model import TYPE_SYMBOLS
from pipeline.outbound import OutboundRoute

DEFAULT_HOPS = 3
MAX_HOPS = 6
MAX_NODES = 300
"""Methods one answer reaches at most (seeds included)."""
MAX_ENDPOINTS = 50
"""Endpoints whose call sites are looked up (one lookup each)."""
MAX_CHANGES = 50
TIME_S = 10.0
"""The walk's time bound: what was reached by then is answered, with the cut named."""


@dataclass(frozen=True, slots=True)
class Change:
    """Changed lines of one file: `path` in the repository, `start..end` (1-based, inclusive)."""

    path: str
    start: int
    end: int

    @staticmethod
    def parse(text: str) -> Change:
        """`path:12-30`, `path:12` or `path` (the whole file).

        Raises:
            PayloadError: a bad path (`app.search.code.clean_path`) or range.
        """
        path, colon, span = text.strip().rpartition(":")
        if not colon or not span.replace("-", "").isdigit():
            path, span = text.strip(), ""
        first, _, last = span.partition("-")
        start = int(first) if first else 1
        end = int(last) if last else (start if first else 2**31 - 1)
        if start < 1 or end < start:
            raise PayloadError(f"bad line range in {text[:80]!r}: use path:start-end")
        return Change(clean_path(path), start, end)


@dataclass(frozen=True, slots=True)
class Reached:
    """A method the change reaches, `hop` calls away, with the path from a seed to it (the seed first)."""

    hit: Hit
    hop: int
    path: tuple[Hit, ...]


@dataclass(frozen=True, slots=True)
class ReachedEndpoint:
    """An HTTP route a reached method serves."""

    method: str
    route: str
    handler: Reached

    @property
    def label(self) -> str:
        """`GET /owners/{id}`."""
        return f"{self.method} {self.route}"


@dataclass(frozen=True, slots=True)
class RemoteCall:
    """A client call site that reaches an endpoint, the calls that match it, and the client it goes through."""

    site: Hit
    endpoint: ReachedEndpoint
    calls: tuple[OutboundRoute, ...]
    through: Hit | None


@dataclass(frozen=True, slots=True)
class Impact:
    """What a change reaches; `cut` names the bounds that stopped the walk (empty: it is complete)."""

    seeds: tuple[Hit, ...]
    methods: tuple[Reached, ...]
    endpoints: tuple[ReachedEndpoint, ...]
    remote: tuple[RemoteCall, ...]
    cut: tuple[str, ...]
    unmatched: tuple[str, ...]  # changes that touch no indexed method


def method_key(hit: Hit) -> tuple[str, str, str]:
    """One method however many parts its chunks split it into."""
    return hit.repo_path, hit.qualified_name, hit.signature


class NoSeedError(PayloadError):
    """The symbol or the changed lines name no method the caller may read (the same answer as none indexed)."""


def _shown(text: str) -> str:
    """A caller's input in a message: bounded, quoted."""
    return repr(text[:100])


async def impact_of(
    search: SearchService,
    access: Access,
    symbol: str | None,
    changes: Sequence[str] | None,
    repo: str | None,
    hops: int = DEFAULT_HOPS,
    language: str | None = None,
) -> Impact:
    """`impact` from a symbol (`repo` narrows where it is declared) or from changed lines (`path:start-end` in `repo`).

    `language` narrows what is shown, never the walk: a Java change reaches Kotlin callers through Java ones.

    Raises:
        PayloadError: neither or both given, a bad change, `changes` without one repository.
        NoSeedError: nothing readable is named or touched.
    """
    if (symbol is None) == (changes is None):
        raise PayloadError("Give a symbol, or changes as 'path:start-end' with repo.")
    if symbol is not None:
        seeds, unmatched = await seeds_of_symbol(search, access, symbol, repo), list[str]()
        if not seeds:
            raise NoSeedError(f"No method named {_shown(symbol)}.")
    else:
        if not repo or repo.endswith("/"):
            raise PayloadError("changes need the repository they are in: repo='group/project'.")
        parsed = [Change.parse(text) for text in changes or []]
        if not parsed:
            raise PayloadError("changes is empty.")
        seeds, unmatched = await seeds_of_changes(search, access, repo, parsed)
        if not seeds:
            raise NoSeedError(f"No indexed method in {_shown(repo)} at {', '.join(unmatched[:5])}.")
    found = await impact(search, access, seeds, hops=hops, unmatched=unmatched)
    return found if language is None else in_language(found, language)


def in_language(found: Impact, language: str) -> Impact:
    """The methods, endpoints and remote call sites of `found` written in `language` (their paths unchanged)."""
    return replace(
        found,
        methods=tuple(r for r in found.methods if r.hit.chunk.language == language),
        endpoints=tuple(e for e in found.endpoints if e.handler.hit.chunk.language == language),
        remote=tuple(r for r in found.remote if r.site.chunk.language == language),
    )


async def seeds_of_symbol(search: SearchService, access: Access, name: str, repo: str | None) -> list[Hit]:
    """The methods a name stands for; a type stands for its methods and constructors."""
    hits = await search.symbol(access, name, Where(repo=repo))
    members = [h for h in hits if h.symbol_type not in TYPE_SYMBOLS]
    types = sorted({h.qualified_name for h in hits if h.symbol_type in TYPE_SYMBOLS})
    if types:
        members += await search.lookup(access, Filters(repo=repo), any_of("enclosing_type", types))
    return _unique(members)


async def seeds_of_changes(
    search: SearchService, access: Access, repo: str, changes: Sequence[Change]
) -> tuple[list[Hit], list[str]]:
    """The methods whose lines the changes touch, and the changes that touch none.

    A change touches none when its file is not indexed or not readable, or it only changes lines outside
    every method (imports, fields).
    """
    paths = sorted({c.path for c in changes})
    chunks = await search.lookup(access, Filters(repo=repo), any_of("file_path", paths)) if paths else []
    seeds: list[Hit] = []
    unmatched: list[str] = []
    for change in changes:
        touched = [
            h
            for h in chunks
            if h.file_path == change.path
            and h.symbol_type not in TYPE_SYMBOLS
            and h.line_start <= change.end
            and h.line_end >= change.start
        ]
        if not touched:
            unmatched.append(f"{change.path}:{change.start}-{min(change.end, 10**9)}")
        seeds.extend(touched)
    return _unique(seeds), unmatched


async def impact(
    search: SearchService,
    access: Access,
    seeds: Sequence[Hit],
    *,
    hops: int = DEFAULT_HOPS,
    unmatched: Sequence[str] = (),
    time_s: float = TIME_S,
    max_nodes: int = MAX_NODES,
) -> Impact:
    """The callers of the seeds up to `hops` levels, the endpoints they serve and the remote call sites of those."""
    deadline = time.monotonic() + time_s
    cut: list[str] = []
    reached: dict[tuple[str, str, str], Reached] = {}
    for seed in _unique(list(seeds))[:max_nodes]:
        reached[method_key(seed)] = Reached(seed, 0, (seed,))
    if len(seeds) > max_nodes:
        cut.append(f"node cap ({max_nodes} methods)")
    try:
        await _walk(search, access, reached, min(hops, MAX_HOPS), deadline, max_nodes, cut)
    except TimeoutError:
        cut.append(f"time cap ({time_s:g} s)")
    endpoints, remote = [], []
    try:
        async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
            endpoints = await _endpoints(search, access, list(reached.values()))
            if len(endpoints) > MAX_ENDPOINTS:
                cut.append(f"endpoint cap ({MAX_ENDPOINTS} endpoints)")
                endpoints = endpoints[:MAX_ENDPOINTS]
            remote = await _remote(search, access, endpoints, set(reached))
    except TimeoutError:
        cut.append(f"time cap ({time_s:g} s)")
    return Impact(
        seeds=tuple(r.hit for r in reached.values() if r.hop == 0),
        methods=tuple(r for r in reached.values() if r.hop > 0),
        endpoints=tuple(endpoints),
        remote=tuple(remote),
        cut=tuple(dict.fromkeys(cut)),
        unmatched=tuple(unmatched),
    )


async def _walk(
    search: SearchService,
    access: Access,
    reached: dict[tuple[str, str, str], Reached],
    hops: int,
    deadline: float,
    max_nodes: int,
    cut: list[str],
) -> None:
    """Callers level by level into `reached` (the seeds already there), each level's lookup within the deadline."""
    frontier = list(reached.values())
    for hop in range(1, hops + 1):
        if not frontier:
            return
        async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
            found, full = await _callers(search, access, frontier, max_nodes - len(reached))
        frontier = []
        for callee, caller in found:
            key = method_key(caller)
            if key in reached:
                continue
            if len(reached) >= max_nodes:
                full = True
                break
            reached[key] = Reached(caller, hop, (*callee.path, caller))
            frontier.append(reached[key])
        if full:
            cut.append(f"node cap ({max_nodes} methods)")
            return
    if frontier:  # the last level's callers were not asked for theirs
        cut.append(f"hop cap ({hops} hops)")


async def _callers(
    search: SearchService, access: Access, frontier: Sequence[Reached], room: int
) -> tuple[list[tuple[Reached, Hit]], bool]:
    """Each caller of a frontier method (callee, caller), in one lookup; and whether the lookup hit its limit."""
    keys = await frontier_keys(
        search.hierarchy(access, None),
        [r.hit.qualified_name for r in frontier],
        lambda name: search.call_keys(access, name),
    )
    all_fq = sorted({k for fq, _ in keys for k in fq})
    all_simple = sorted({k for _, simple in keys for k in simple})
    conditions = [any_of(key, values) for key, values in (("calls_fq", all_fq), ("calls", all_simple)) if values]
    if not conditions:
        return [], False
    limit = 4 * max(room, 1) + 16
    hits = await search.lookup(access, Filters(), either(*conditions), limit=limit)
    found: list[tuple[Reached, Hit]] = []
    for hit in hits:
        if hit.symbol_type in TYPE_SYMBOLS:
            continue
        fq, simple = set(hit.chunk.calls_fq), set(hit.chunk.calls)
        for callee, (callee_fq, callee_simple) in zip(frontier, keys, strict=True):
            if fq.intersection(callee_fq) or simple.intersection(callee_simple):
                found.append((callee, hit))
    found.sort(key=lambda pair: (pair[0].hop, method_key(pair[1])))
    return found, len(hits) >= limit


async def _endpoints(search: SearchService, access: Access, reached: Sequence[Reached]) -> list[ReachedEndpoint]:
    """The routes the reached methods serve (a declared client's routes are calls, not routes it serves)."""
    handlers = [r for r in reached if not is_declared_client(r.hit)]
    routed = await search.composed_routes(access, [r.hit for r in handlers])
    out: dict[tuple[str, str], ReachedEndpoint] = {}
    for r, hit in zip(handlers, routed, strict=True):
        for path in hit.chunk.http_path:
            for verb in hit.chunk.http_method or ("ANY",):
                out.setdefault((verb, path), ReachedEndpoint(verb, path, Reached(hit, r.hop, (*r.path[:-1], hit))))
    return list(out.values())


async def _remote(
    search: SearchService, access: Access, endpoints: Sequence[ReachedEndpoint], reached: set[tuple[str, str, str]]
) -> list[RemoteCall]:
    """The client call sites of each endpoint, in the repositories the caller may read (the walk's own left out)."""
    links = EndpointLinks(search)
    out: dict[tuple[str, str, str], RemoteCall] = {}
    for endpoint in endpoints:
        verb = None if endpoint.method == "ANY" else endpoint.method
        for site in await links.callers(access, endpoint.route, verb):
            if method_key(site.hit) in reached:
                continue
            key = (site.hit.id, endpoint.method, endpoint.route)
            out.setdefault(key, RemoteCall(site.hit, endpoint, site.routes, site.through))
    return list(out.values())


def _unique(hits: Sequence[Hit]) -> list[Hit]:
    """One hit per method (its first part), in the order given."""
    seen: dict[tuple[str, str, str], Hit] = {}
    for hit in hits:
        if hit.symbol_type in TYPE_SYMBOLS:
            continue
        seen.setdefault(method_key(hit), hit)
    return list(seen.values())


def evidence(path: Sequence[Hit]) -> list[str]:
    """A path of evidence as lines: the seed, then each caller with the call that links it to the one before."""
    lines = [f"{path[0].qualified_name} ({path[0].file_path}:{path[0].line_start}) changed"]
    for callee, caller in itertools.pairwise(path):
        lines.append(
            f"{caller.qualified_name} ({caller.repo_path}:{caller.file_path}:{caller.line_start}) "
            f"calls {callee.qualified_name.rsplit('.', 2)[-2]}.{callee.chunk.name}"
        )
    return lines
