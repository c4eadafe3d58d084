"""The calls `bench.mcp_latency` makes: arguments drawn from the index's catalog with a fixed seed, shared
out over the tools, and the samples they give.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from bench.index_jdk_queries import CATALOG_PAGE, Method, make_queries, methods_of
from pipeline.model import TYPE_SYMBOLS

ANNOTATION_BUDGET: Final = 4_000  # max_chars for find_by_annotation: whole results are cut beyond it


# Share of --calls per tool (semantic_search is the one agents call most).
TOOL_WEIGHTS: Final = {
    "semantic_search": 3,
    "get_symbol": 1,
    "find_by_annotation": 1,
    "get_callers": 1,
    "get_callees": 1,
    "find_endpoint": 1,
    "find_injections": 1,
    "find_implementations": 1,
    "get_file_outline": 1,
    "list_repos": 1,
}


COMMON_ANNOTATIONS: Final = ("Override", "Deprecated", "FunctionalInterface", "SuppressWarnings", "SafeVarargs")


COMMON_SUPERTYPES: Final = (
    "Runnable",
    "Comparable",
    "List",
    "Map",
    "Iterator",
    "Serializable",
    "Cloneable",
    "AutoCloseable",
    "java.util.Collection",
    "java.lang.Thread",
)


COMMON_INJECTED: Final = ("Logger", "ExecutorService", "ClassLoader", "Executor", "DataSource", "EventListener")


# The JDK has (almost) no Spring/JAX-RS routes: these measure the lookup's cost when nothing matches.
ENDPOINT_PATHS: Final = (
    ("/", None),
    ("/api/owners/42", "GET"),
    ("/api/users/7/orders", "POST"),
    ("/health", None),
    ("/index.html", "GET"),
    ("/jmx/beans/java.lang:type=Memory", None),
)


CATALOG_FIELDS: Final = (
    "repo_path",
    "file_path",
    "name",
    "symbol_type",
    "enclosing_type",
    "qualified_name",
    "annotation_names",
    "implements",
    "extends",
    "injects",
    "calls",
    "http_path",
    "http_method",
)


@dataclass(frozen=True, slots=True)
class Call:
    tool: str
    kind: str  # a sub-kind within the tool (natural, identifier, common, ...)
    args: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "kind": self.kind, "args": self.args}


@dataclass(slots=True)
class Catalog:
    """What the arguments are drawn from: a few payload fields of every point."""

    methods: list[Method]
    called_methods: list[Method]  # methods whose body calls something
    types: list[tuple[str, str]]  # (simple, qualified) of every type
    files: list[tuple[str, str]]  # (repo, path)
    annotations: list[str]  # distinct annotation simple names
    supertypes: list[str]  # distinct implements/extends names
    injected: list[str]  # distinct injects names
    routes: list[tuple[str, str | None]]  # (path, method)
    points: int = 0
    seconds: float = 0.0
    annotation_counts: dict[str, int] = field(default_factory=dict)


async def load_catalog(deps: Any) -> Catalog:
    from qdrant_client import models as qm

    t0 = time.perf_counter()
    # One page: local mode sorts every id and filters every point again for each page of a scroll.
    rows = [
        dict(r.payload or {}) async for r in deps.store.scroll(qm.Filter(), list(CATALOG_FIELDS), page=CATALOG_PAGE)
    ]
    seconds = time.perf_counter() - t0
    annotations: Counter[str] = Counter()
    supertypes: set[str] = set()
    injected: set[str] = set()
    routes: set[tuple[str, str | None]] = set()
    types: set[tuple[str, str]] = set()
    files: set[tuple[str, str]] = set()
    called: set[tuple[str, str, str]] = set()
    for row in rows:
        annotations.update(row.get("annotation_names") or [])
        supertypes.update(row.get("implements") or [])
        supertypes.update(row.get("extends") or [])
        injected.update(row.get("injects") or [])
        for path in row.get("http_path") or []:
            routes.add((str(path), (row.get("http_method") or [None])[0]))
        files.add((str(row.get("repo_path")), str(row.get("file_path"))))
        if row.get("symbol_type") in TYPE_SYMBOLS:
            types.add((str(row.get("name")), str(row.get("qualified_name"))))
        enclosing = str(row.get("enclosing_type") or "")
        if row.get("symbol_type") == "method" and row.get("calls") and enclosing:
            called.add((enclosing.rsplit(".", 1)[-1], str(row.get("name")), str(row.get("file_path"))))
    methods = methods_of(rows)
    return Catalog(
        methods=methods,
        called_methods=[m for m in methods if (m.type_name, m.name, m.file_path) in called],
        types=sorted(types),
        files=sorted(files),
        annotations=sorted(annotations),
        supertypes=sorted(supertypes),
        injected=sorted(injected),
        routes=sorted(routes, key=lambda r: (r[0], r[1] or "")),
        points=len(rows),
        seconds=seconds,
        annotation_counts=dict(annotations.most_common(12)),
    )


def call_counts(total: int) -> dict[str, int]:
    weight = sum(TOOL_WEIGHTS.values())
    return {tool: max(1, round(total * w / weight)) for tool, w in TOOL_WEIGHTS.items()}


def _semantic_calls(catalog: Catalog, n: int, seed: int) -> list[Call]:
    calls: list[Call] = []
    for q in make_queries(catalog.methods, n, seed):
        args: dict[str, Any] = {"query": q.text}
        if q.symbol_type:
            args["symbol_type"] = q.symbol_type
        if q.path_prefix:
            args["path_prefix"] = q.path_prefix
        kind = {"question": "natural", "identifier": "identifier"}.get(q.kind, "natural+filter")
        calls.append(Call("semantic_search", kind, args))
    return calls


def _symbol_calls(catalog: Catalog, n: int, rng: random.Random) -> list[Call]:
    calls: list[Call] = []
    for i in range(n):
        if i % 4 in (0, 1):
            calls.append(Call("get_symbol", "Type.method", {"name": rng.choice(catalog.methods).dotted}))
        elif i % 4 == 2:
            calls.append(Call("get_symbol", "qualified type", {"name": rng.choice(catalog.types)[1]}))
        else:
            calls.append(Call("get_symbol", "simple type", {"name": rng.choice(catalog.types)[0]}))
    return calls


def _annotation_calls(catalog: Catalog, n: int, rng: random.Random) -> list[Call]:
    calls: list[Call] = []
    for i in range(n):
        if i % 2 == 0 or not catalog.annotations:
            name, kind = COMMON_ANNOTATIONS[(i // 2) % len(COMMON_ANNOTATIONS)], "common"
        else:
            name, kind = rng.choice(catalog.annotations), "any in index"
        calls.append(Call("find_by_annotation", kind, {"annotation": name, "max_chars": ANNOTATION_BUDGET}))
    return calls


def _caller_calls(catalog: Catalog, n: int, rng: random.Random) -> list[Call]:
    calls: list[Call] = []
    for i in range(n):
        method = rng.choice(catalog.methods)
        if i % 5 == 4:
            calls.append(Call("get_callers", "bare method", {"name": method.name}))
        else:
            calls.append(Call("get_callers", "Type.method", {"name": method.dotted}))
    return calls


def _supertype_calls(tool: str, common: Sequence[str], found: Sequence[str], n: int, rng: random.Random) -> list[Call]:
    calls: list[Call] = []
    for i in range(n):
        if i % 2 == 0 or not found:
            calls.append(Call(tool, "common", {"type": common[(i // 2) % len(common)]}))
        else:
            calls.append(Call(tool, "any in index", {"type": rng.choice(list(found))}))
    return calls


def _endpoint_calls(catalog: Catalog, n: int, rng: random.Random) -> list[Call]:
    calls: list[Call] = []
    for i in range(n):
        if i % 2 == 1 and catalog.routes:
            path, method = rng.choice(catalog.routes)
            kind = "route in index"
        else:
            path, method = ENDPOINT_PATHS[(i // 2) % len(ENDPOINT_PATHS)]
            kind = "no such route"
        args: dict[str, Any] = {"path": path}
        if method:
            args["http_method"] = method
        calls.append(Call("find_endpoint", kind, args))
    return calls


def plan_calls(catalog: Catalog, total: int, seed: int) -> list[Call]:
    """Every tool's calls, with arguments drawn from the index (fixed seed), in a seeded interleaved order."""
    rng = random.Random(seed)
    counts = call_counts(total)
    injected = [t.rsplit(".", 1)[-1] for t in catalog.injected] or [t for t, _ in catalog.types]
    callees = catalog.called_methods or catalog.methods
    calls = [
        *_semantic_calls(catalog, counts["semantic_search"], seed),
        *_symbol_calls(catalog, counts["get_symbol"], rng),
        *_annotation_calls(catalog, counts["find_by_annotation"], rng),
        *_caller_calls(catalog, counts["get_callers"], rng),
        *[
            Call("get_callees", "Type.method", {"name": rng.choice(callees).dotted})
            for _ in range(counts["get_callees"])
        ],
        *_endpoint_calls(catalog, counts["find_endpoint"], rng),
        *_supertype_calls("find_injections", COMMON_INJECTED, injected, counts["find_injections"], rng),
        *_supertype_calls(
            "find_implementations", COMMON_SUPERTYPES, catalog.supertypes, counts["find_implementations"], rng
        ),
        *[
            Call("get_file_outline", "file in index", {"repo": repo, "path": path})
            for repo, path in rng.sample(catalog.files, min(counts["get_file_outline"], len(catalog.files)))
        ],
        *[Call("list_repos", "all", {}) for _ in range(counts["list_repos"])],
    ]
    rng.shuffle(calls)
    return calls


def warmup_calls(calls: Sequence[Call]) -> list[Call]:
    """One call per tool (the first planned one), run untimed before measuring."""
    first: dict[str, Call] = {}
    for call in calls:
        first.setdefault(call.tool, call)
    return list(first.values())


@dataclass(slots=True)
class Sample:
    call: Call
    seconds: float
    cpu_seconds: float
    is_error: bool
    chars: int
    message: str
    store: dict[str, list[float]]  # op -> [calls, seconds]
    server_seconds: float = 0.0  # the server's own time (`ServerClock`): the client's JSON and schema checks excluded
    server_cpu_seconds: float = 0.0  # the process's CPU time within `server_seconds` (`ServerClock.last_cpu`)


@dataclass(slots=True)
class Run:
    """The samples of one run (lexical or dense) and what was skipped for the time budget."""

    samples: list[Sample] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    load: list[float] = field(default_factory=list)
    seconds: float = 0.0


def catalog_report(catalog: Catalog) -> dict[str, Any]:
    return {
        "points": catalog.points,
        "full_scroll_s": catalog.seconds,
        "methods": len(catalog.methods),
        "methods_with_calls": len(catalog.called_methods),
        "types": len(catalog.types),
        "files": len(catalog.files),
        "distinct_annotations": len(catalog.annotations),
        "top_annotations": catalog.annotation_counts,
        "distinct_supertypes": len(catalog.supertypes),
        "distinct_injected": len(catalog.injected),
        "routes": len(catalog.routes),
    }


def plan_report(calls: Sequence[Call]) -> dict[str, Any]:
    items = [c.to_json() for c in calls]
    by_tool: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_tool.setdefault(item["tool"], []).append(item["args"])
    return {
        "count": len(items),
        "digest": hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest()[:16],
        "sample": {tool: args[:4] for tool, args in by_tool.items()},
    }
