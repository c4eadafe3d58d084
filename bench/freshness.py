"""Freshness: how long after a one-file push the changed method is searchable, on a large repository.

Run from the repository root:

    .venv/bin/python -m bench.freshness                          # 5,000 files, 20 pushes
    .venv/bin/python -m bench.freshness --files 500 --pushes 5   # a quick check

The whole sync stack runs in this process, as `tests/support/sync_env.py` builds it: the fake GitLab
(`tests.support.fake_gitlab.FakeGitLab`, real git underneath, its HTTP server in a thread), PostgreSQL in a
database made for this run (`javakb_bench_<random>`, dropped at the end), Redis in a database index that must
be empty (flushed at the end), a real arq `Worker` started once as a background task (not burst, `poll_delay`
`--poll-delay`, so the queue pickup is in the timing) and embedded Qdrant (local mode, a temporary folder).
The stub embedder is `tests.support.fake_embedder.FakeEmbeddingServer` (384 dimensions, like MiniLM) in a
spawned process, so its hashing does not share our GIL. Settings are the
production defaults (64 files per batch, 4 jobs, 8 GitLab calls in flight, parsing in threads).

Both fakes answer with headers and body in two send() calls; with Nagle's algorithm on, the body then waits
for the client's delayed ACK (about 40 ms per request on loopback), which no real GitLab or embedding server
does. They are run with TCP_NODELAY like real servers, unless `--keep-nagle`.

1. A repository of `--files` Java files (entities, JPA repositories, services, REST controllers and DTOs in
   `src/main/java/com/acme/...`, generated from `--seed`) is committed in one commit, its push delivered,
   and the initial index timed (a tree walk).
2. `--pushes` times: one method of one random service or controller changes (a literal in its body), is
   committed, its push delivered through `app.deliveries.DeliveryRecorder.handle` (what POST /hooks/gitlab does after
   authentication), and `deps.search.symbol(<qualified name>)` is polled every `--poll-every` seconds until it
   returns the chunk with the new content hash: that is the freshness. The script then waits for the sync job
   to finish before it counts the GitLab API calls (by endpoint), the embedding inputs and the `index_jobs` row
   of that push, and moves to the next.

Embedded Qdrant answers every filtered lookup by scanning all points in Python (no payload index), so both
the sync's `stored_hashes` lookup and our polling cost grow with the repository; a lookup's cost is measured
and reported. Exit status: 0 when every push became searchable and p50 < 2 s, 1 otherwise, 2 on bad arguments
or a missing service.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import math
import os
import platform
import random
import re
import secrets
import shutil
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import psycopg
from psycopg import sql
from pydantic import SecretStr
from redis.asyncio import Redis

from app import filters
from app.access import LOCAL
from app.deliveries import DeliveryRecorder
from app.deps import Deps, open_deps
from app.settings import (
    EmbeddingSettings,
    GitLabSettings,
    PostgresSettings,
    QdrantSettings,
    QueueSettings,
    Settings,
    SyncWorkerSettings,
)
from app.worker import build_worker
from bench.stub_embedder import StubServer
from hooks.events import parse_event
from pipeline.chunking import chunk_source
from pipeline.model import SourceContext
from tests.support import fake_gitlab
from tests.support.fake_gitlab import FakeGitLab, FakeProject
from tests.support.sync_env import SyncEnv, push_payload

PG_SERVER: Final = "postgresql://root@127.0.0.1:5432"
REDIS_SERVER: Final = "redis://127.0.0.1:6379"
STUB_DIM: Final = 384
STUB_MODEL: Final = "stub-minilm-384"
TARGET_P50_S: Final = 2.0
PROJECT_PATH: Final = "acme/platform-monolith"
LOCAL_MODE_WARNING: Final = r"Local mode is not recommended"
ZERO: Final = "0" * 40

# --------------------------------------------------------------------------------------------------- the repository

AREAS: Final = ("billing", "sales", "logistics", "identity", "support", "catalog", "analytics", "messaging")
NOUNS: Final = (
    "Order", "Invoice", "Customer", "Payment", "Shipment", "Product", "Inventory", "Account", "Ledger", "Refund",
    "Coupon", "Cart", "Catalog", "Price", "Tax", "Warehouse", "Supplier", "Contract", "Subscription", "Plan",
    "Usage", "Meter", "Ticket", "Incident", "Alert", "Report", "Audit", "Policy", "Claim", "Quote", "Lead",
    "Campaign", "Segment", "Session", "Token", "Credential", "Role", "Permission", "Tenant", "Region", "Store",
    "Delivery", "Route", "Vehicle", "Driver", "Schedule", "Booking", "Room", "Guest", "Review", "Rating",
    "Notification", "Message", "Template", "Document", "Attachment", "Batch", "Export", "Voucher", "Discount",
)  # fmt: skip
QUALIFIERS: Final = (
    "", "Retail", "Partner", "Internal", "Legacy", "Mobile", "Bulk", "Scheduled", "Archived", "Regional",
    "Global", "Premium", "Trial", "Secure", "Cached", "Sandbox", "Wholesale", "Recurring", "Pending", "Draft",
)  # fmt: skip
FIELD_TYPES: Final = (
    ("String", "name"), ("String", "code"), ("String", "description"), ("String", "status"), ("String", "email"),
    ("java.math.BigDecimal", "amount"), ("java.math.BigDecimal", "total"), ("Integer", "quantity"),
    ("Integer", "priority"), ("Long", "ownerId"), ("Long", "version"), ("Boolean", "active"),
    ("java.time.Instant", "createdAt"), ("java.time.Instant", "updatedAt"), ("java.time.LocalDate", "dueDate"),
    ("String", "currency"), ("String", "region"), ("Double", "score"), ("String", "reference"), ("Long", "tenantId"),
)  # fmt: skip
VERBS: Final = (
    "approve", "archive", "recalculate", "reconcile", "validate", "expire", "escalate", "notify", "refresh",
    "assign", "merge", "split", "schedule", "suspend", "resume", "audit", "export", "summarize", "rank", "close",
)  # fmt: skip
KINDS: Final = ("Entity", "Repository", "Service", "Controller", "Dto")
LIMIT_LINE: Final = re.compile(r"(int limit = )(\d+)(;)")


@dataclass(frozen=True, slots=True)
class Editable:
    """A method whose body holds an `int limit = N;` line: what a push changes."""

    path: str
    qualified_name: str
    method: str


def _cap(word: str) -> str:
    return word[:1].upper() + word[1:]


def _lower(word: str) -> str:
    return word[:1].lower() + word[1:]


def _plural(word: str) -> str:
    return word[:-1] + "ies" if word.endswith("y") else word + ("es" if word.endswith(("s", "x", "ch")) else "s")


@dataclass(slots=True)
class Domain:
    name: str  # RetailOrder
    area: str
    package: str
    fields: list[tuple[str, str]]
    verbs: list[str]
    collaborator: str | None  # another service this one calls

    @property
    def var(self) -> str:
        return _lower(self.name)

    @property
    def route(self) -> str:
        words = re.findall(r"[A-Z][a-z0-9]*", self.name)
        return "/api/" + self.area + "/" + "-".join(w.lower() for w in [*words[:-1], _plural(words[-1])])


def make_domains(count: int, rng: random.Random) -> list[Domain]:
    names = [q + n for q in QUALIFIERS for n in NOUNS]
    rng.shuffle(names)
    if count > len(names):
        names += [f"{n}V{i}" for i in range(2, 2 + count // len(names) + 1) for n in list(names)]
    domains = []
    for i, name in enumerate(names[:count]):
        area = AREAS[i % len(AREAS)]
        fields = rng.sample(FIELD_TYPES, rng.randint(4, 9))
        domains.append(
            Domain(
                name=name,
                area=area,
                package=f"com.acme.{area}.{name.lower()}",
                fields=fields,
                verbs=rng.sample(VERBS, rng.randint(3, 7)),
                collaborator=None,
            )
        )
    for d in domains:
        if rng.random() < 0.6:
            other = rng.choice(domains)
            d.collaborator = other.name if other is not d else None
    return domains


def entity_source(d: Domain) -> str:
    lines = [
        f"package {d.package};",
        "",
        "import jakarta.persistence.Entity;",
        "import jakarta.persistence.GeneratedValue;",
        "import jakarta.persistence.Id;",
        "import jakarta.persistence.Table;",
        "",
        f"/** A {d.name} as stored in the {d.area} schema. */",
        "@Entity",
        f'@Table(name = "{d.area}_{d.name.lower()}")',
        f"public class {d.name} {{",
        "",
        "    @Id",
        "    @GeneratedValue",
        "    private Long id;",
    ]
    lines += [f"    private {t} {f};" for t, f in d.fields]
    lines += ["", "    public Long getId() {", "        return id;", "    }"]
    for t, f in d.fields:
        lines += [
            "",
            f"    public {t} get{_cap(f)}() {{",
            f"        return {f};",
            "    }",
            "",
            f"    public void set{_cap(f)}({t} {f}) {{",
            f"        this.{f} = {f};",
            "    }",
        ]
    lines += ["}", ""]
    return "\n".join(lines)


def repository_source(d: Domain) -> str:
    finders = [f for t, f in d.fields if t in ("String", "Long", "Boolean")][:4]
    lines = [
        f"package {d.package};",
        "",
        "import java.util.List;",
        "import java.util.Optional;",
        "import org.springframework.data.jpa.repository.JpaRepository;",
        "import org.springframework.data.jpa.repository.Query;",
        "import org.springframework.stereotype.Repository;",
        "",
        "@Repository",
        f"public interface {d.name}Repository extends JpaRepository<{d.name}, Long> {{",
        "",
    ]
    for f in finders:
        lines.append(f"    List<{d.name}> findBy{_cap(f)}(Object {f});")
        lines.append("")
    lines += [
        f'    @Query("select x from {d.name} x where x.id in :ids")',
        f"    List<{d.name}> findAllByIds(List<Long> ids);",
        "",
        f"    Optional<{d.name}> findFirstByOrderByIdDesc();",
        "}",
        "",
    ]
    return "\n".join(lines)


def service_source(d: Domain, rng: random.Random) -> tuple[str, list[str]]:
    collab = d.collaborator
    lines = [
        f"package {d.package};",
        "",
        "import java.util.ArrayList;",
        "import java.util.List;",
        "import java.util.Map;",
        "import java.util.stream.Collectors;",
        "import org.slf4j.Logger;",
        "import org.slf4j.LoggerFactory;",
        "import org.springframework.stereotype.Service;",
        "import org.springframework.transaction.annotation.Transactional;",
    ]
    if collab:
        lines.append(f"import com.acme.shared.{collab}Service;")
    lines += [
        "",
        f"/** Business rules of {d.name}: lookups, state changes and periodic recalculation. */",
        "@Service",
        f"public class {d.name}Service {{",
        "",
        f"    private static final Logger log = LoggerFactory.getLogger({d.name}Service.class);",
        "",
        f"    private final {d.name}Repository repository;",
    ]
    if collab:
        lines.append(f"    private final {collab}Service {_lower(collab)}Service;")
    params = f"{d.name}Repository repository" + (f", {collab}Service {_lower(collab)}Service" if collab else "")
    lines += ["", f"    public {d.name}Service({params}) {{", "        this.repository = repository;"]
    if collab:
        lines.append(f"        this.{_lower(collab)}Service = {_lower(collab)}Service;")
    lines += ["    }"]
    methods = ["findById", "search", *(f"{v}{d.name}" for v in d.verbs)]
    lines += [
        "",
        "    @Transactional(readOnly = true)",
        f"    public {d.name} findById(Long id) {{",
        f"        int limit = {rng.randint(1, 9)};",
        "        return repository.findById(id)",
        f'                .orElseThrow(() -> new IllegalArgumentException("no {d.name} " + id + " within " + limit));',
        "    }",
        "",
        "    @Transactional(readOnly = true)",
        f"    public List<{d.name}> search(String query, int page) {{",
        f"        int limit = {rng.randint(10, 200)};",
        f"        List<{d.name}> all = repository.findAll();",
        "        return all.stream()",
        "                .filter(x -> query == null || String.valueOf(x.getId()).contains(query))",
        "                .skip((long) page * limit)",
        "                .limit(limit)",
        "                .collect(Collectors.toList());",
        "    }",
    ]
    numeric = [f for t, f in d.fields if t in ("Integer", "java.math.BigDecimal", "Double", "Long")]
    for verb in d.verbs:
        shape = rng.randrange(4)
        name = f"{verb}{d.name}"
        lines += ["", "    @Transactional", f"    public int {name}(List<Long> ids) {{"]
        lines.append(f"        int limit = {rng.randint(2, 500)};")
        if shape == 0:
            lines += [
                "        int changed = 0;",
                "        for (Long id : ids) {",
                "            if (changed >= limit) {",
                f'                log.warn("{verb}: stopping after {{}} of {{}}", changed, ids.size());',
                "                break;",
                "            }",
                f"            {d.name} item = findById(id);",
                "            repository.save(item);",
                "            changed++;",
                "        }",
                "        return changed;",
            ]
        elif shape == 1:
            field_name = numeric[0] if numeric else "id"
            lines += [
                f"        Map<Boolean, List<{d.name}>> parts = repository.findAllByIds(ids).stream()",
                f"                .collect(Collectors.partitioningBy(x -> x.get{_cap(field_name)}() != null));",
                f"        List<{d.name}> ready = new ArrayList<>(parts.get(true));",
                "        if (ready.size() > limit) {",
                "            ready = ready.subList(0, limit);",
                "        }",
                "        repository.saveAll(ready);",
                f'        log.info("{verb} {{}} items", ready.size());',
                "        return ready.size();",
            ]
        elif shape == 2 and collab:
            lines += [
                "        int total = 0;",
                "        for (int i = 0; i < ids.size() && i < limit; i++) {",
                f"            total += {_lower(collab)}Service.search(String.valueOf(ids.get(i)), 0).size();",
                "        }",
                "        return total;",
            ]
        else:
            lines += [
                "        int attempts = 0;",
                "        while (attempts < limit) {",
                "            try {",
                "                repository.flush();",
                "                return ids.size();",
                "            } catch (RuntimeException e) {",
                "                attempts++;",
                f'                log.debug("{verb} retry {{}}", attempts, e);',
                "            }",
                "        }",
                "        return 0;",
            ]
        lines.append("    }")
    lines += ["}", ""]
    return "\n".join(lines), methods


def controller_source(d: Domain, rng: random.Random) -> tuple[str, list[str]]:
    var = d.var
    lines = [
        f"package {d.package};",
        "",
        "import java.util.List;",
        "import org.springframework.http.ResponseEntity;",
        "import org.springframework.web.bind.annotation.*;",
        "",
        f"/** REST endpoints of {d.name}. */",
        "@RestController",
        f'@RequestMapping("{d.route}")',
        f"public class {d.name}Controller {{",
        "",
        f"    private final {d.name}Service service;",
        "",
        f"    public {d.name}Controller({d.name}Service service) {{",
        "        this.service = service;",
        "    }",
        "",
        '    @GetMapping("/{id}")',
        f'    public ResponseEntity<{d.name}Dto> get(@PathVariable("id") Long id) {{',
        f"        int limit = {rng.randint(1, 5)};",
        "        if (id == null || id < limit) {",
        "            return ResponseEntity.badRequest().build();",
        "        }",
        f"        return ResponseEntity.ok({d.name}Dto.from(service.findById(id)));",
        "    }",
        "",
        "    @GetMapping",
        f"    public List<{d.name}Dto> list(@RequestParam(required = false) String q,",
        '            @RequestParam(defaultValue = "0") int page) {',
        f"        int limit = {rng.randint(20, 100)};",
        f"        return service.search(q, Math.min(page, limit)).stream().map({d.name}Dto::from).toList();",
        "    }",
    ]
    methods = ["get", "list"]
    for verb in d.verbs[: rng.randint(1, len(d.verbs))]:
        name = f"{verb}{d.name}"
        methods.append(name)
        lines += [
            "",
            f'    @PostMapping("/{verb}")',
            f"    public ResponseEntity<Integer> {name}(@RequestBody List<Long> ids) {{",
            f"        int limit = {rng.randint(50, 1000)};",
            "        if (ids.size() > limit) {",
            "            return ResponseEntity.unprocessableEntity().build();",
            "        }",
            f"        return ResponseEntity.ok(service.{name}(ids));",
            "    }",
        ]
    lines += ["}", ""]
    del var
    return "\n".join(lines), methods


def dto_source(d: Domain) -> str:
    comps = ", ".join(["Long id", *(f"{t} {f}" for t, f in d.fields)])
    args = ", ".join(["e.getId()", *(f"e.get{_cap(f)}()" for _t, f in d.fields)])
    return "\n".join(
        [
            f"package {d.package};",
            "",
            f"/** What the API shows of a {d.name}. */",
            f"public record {d.name}Dto({comps}) {{",
            "",
            f"    public static {d.name}Dto from({d.name} e) {{",
            f"        return new {d.name}Dto({args});",
            "    }",
            "}",
            "",
        ]
    )


def generate_repository(files: int, seed: int) -> tuple[dict[str, str], list[Editable]]:
    """`files` Java sources (path → text) and the methods a push may change."""
    rng = random.Random(seed)
    domains = make_domains(math.ceil(files / len(KINDS)), rng)
    sources: dict[str, str] = {}
    editable: list[Editable] = []
    for d in domains:
        base = f"src/main/java/{d.package.replace('.', '/')}/{d.name}"
        service, service_methods = service_source(d, rng)
        controller, controller_methods = controller_source(d, rng)
        made = {
            "Entity": (entity_source(d), []),
            "Repository": (repository_source(d), []),
            "Service": (service, service_methods),
            "Controller": (controller, controller_methods),
            "Dto": (dto_source(d), []),
        }
        for kind in KINDS:
            if len(sources) >= files:
                break
            text, methods = made[kind]
            type_name = d.name if kind == "Entity" else d.name + kind
            path = f"{base}{'' if kind == 'Entity' else kind}.java"
            sources[path] = text
            editable += [Editable(path, f"{d.package}.{type_name}.{m}", m) for m in methods]
    return sources, editable


def edit_method(source: str, method: str, value: int) -> str:
    """Change the `int limit = N;` line of one method to `value`."""
    declared = re.search(rf"\b{re.escape(method)}\(", source)
    if declared is None:
        raise ValueError(f"method {method} not found")
    match = LIMIT_LINE.search(source, declared.end())
    if match is None:
        raise ValueError(f"no limit line after {method}")
    return source[: match.start()] + f"{match[1]}{value}{match[3]}" + source[match.end() :]


# --------------------------------------------------------------------------------------------------- the stack


class StepTimer:
    """Wall time spent inside chosen async methods of the sync's collaborators (wrapped on their instances).

    Calls that overlap (the initial index fetches 8 files at once) add up to more than the wall time.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = collections.defaultdict(float)
        self.calls: dict[str, int] = collections.defaultdict(int)

    def wrap(self, obj: object, method: str, label: str) -> None:
        original = getattr(obj, method)

        async def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - started
                self.calls[label] += 1

        setattr(obj, method, timed)

    def take(self) -> dict[str, dict[str, float]]:
        """Seconds and calls per step since the last `take`."""
        order = sorted(self.seconds, key=lambda k: -self.seconds[k])
        out = {k: {"seconds": self.seconds[k], "calls": float(self.calls[k])} for k in order}
        self.seconds.clear()
        self.calls.clear()
        return out


SYNC_STEPS: Final = (  # (attribute of Deps, method, label) of what a sync run awaits
    ("gitlab", "project", "GitLab: project"),
    ("gitlab", "branch_head", "GitLab: branch head"),
    ("gitlab", "compare", "GitLab: compare"),
    ("gitlab", "tree", "GitLab: tree"),
    ("gitlab", "raw_file", "GitLab: raw file"),
    ("gitlab", "raw_blob", "GitLab: raw blob"),
    ("store", "stored_hashes", "Qdrant: stored_hashes (filtered scroll)"),
    ("store", "upsert", "Qdrant: upsert"),
    ("store", "set_payloads", "Qdrant: set_payloads"),
    ("store", "set_payload_where", "Qdrant: set_payload_where (re-cite, move)"),
    ("store", "stored_state", "Qdrant: stored_state (filtered scroll)"),
    ("store", "delete_ids", "Qdrant: delete_ids"),
    ("embedder", "embed", "embedding HTTP"),
    ("db", "start_run", "PostgreSQL: run bookkeeping"),
    ("db", "finish_run", "PostgreSQL: run bookkeeping"),
    ("db", "set_status", "PostgreSQL: run bookkeeping"),
    ("db", "mark_synced", "PostgreSQL: run bookkeeping"),
    ("db", "update_manifest", "PostgreSQL: manifest"),
)


def instrument(deps: Deps) -> StepTimer:
    timer = StepTimer()
    for attribute, method, label in SYNC_STEPS:
        target = getattr(deps, attribute)
        if target is not None:
            timer.wrap(target, method, label)
    return timer


@dataclass
class Stack:
    deps: Deps
    settings: Settings
    gitlab: FakeGitLab
    stub: StubServer
    redis: Redis
    steps: StepTimer
    lookup_ms: list[float] = field(default_factory=list)


def endpoint_of(path: str) -> str:
    """A GitLab API path → the endpoint it calls."""
    rules = (
        (r"/repository/compare", "GET compare"),
        (r"/repository/tree", "GET tree"),
        (r"/repository/files/.+/raw", "GET files/:path/raw"),
        (r"/repository/blobs/.+/raw", "GET blobs/:sha/raw"),
        (r"/repository/branches/", "GET branches/:name"),
        (r"^/api/v4/projects/[^/]+$", "GET projects/:id"),
    )
    for pattern, name in rules:
        if re.search(pattern, path):
            return name
    return re.sub(r"/\d+", "/:id", path)


def calls_since(gitlab: FakeGitLab, start: int) -> dict[str, int]:
    with gitlab.lock:
        new = list(gitlab.calls[start:])
    return dict(collections.Counter(endpoint_of(path) for _method, path in new).most_common())


@contextlib.contextmanager
def bench_database() -> Iterator[str]:
    from app.migrate import apply_migrations

    name = f"javakb_bench_{secrets.token_hex(4)}"
    dsn = f"{PG_SERVER}/{name}"
    try:
        apply_migrations(dsn)
        yield dsn
    finally:
        with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@contextlib.asynccontextmanager
async def open_stack(
    args: argparse.Namespace,
    dsn: str,
    tmp: Path,
    *,
    worker: SyncWorkerSettings | None = None,
    gitlab_clock: Callable[[], datetime] | None = None,
) -> AsyncIterator[Stack]:
    redis_url = f"{REDIS_SERVER}/{args.redis_db}"
    redis = Redis.from_url(redis_url)
    try:
        if await redis.dbsize():
            raise SystemExit(f"error: Redis database {args.redis_db} is not empty; pass another --redis-db")
        fake_gitlab._Handler.disable_nagle_algorithm = not args.keep_nagle
        stub = StubServer(STUB_DIM, nodelay=not args.keep_nagle)
        try:
            with FakeGitLab(tmp, clock=gitlab_clock) as gitlab:
                qdrant = ":memory:" if args.qdrant_memory else str(tmp / "qdrant")
                settings = Settings(
                    postgres=PostgresSettings(dsn=SecretStr(dsn)),
                    redis=QueueSettings(url=redis_url, queue=f"javakb:bench:{uuid.uuid4().hex[:8]}"),
                    qdrant=QdrantSettings(path=qdrant),
                    gitlab=GitLabSettings(url=gitlab.url, token=SecretStr(gitlab.token), webhook_secret=SecretStr("x")),
                    embedding=EmbeddingSettings(base_url=stub.base_url, model=STUB_MODEL),
                    worker=worker or SyncWorkerSettings(),
                )
                async with open_deps(settings, with_db=True, with_queue=True, with_gitlab=True) as deps:
                    await deps.store.ensure(await deps.index_model())
                    steps = instrument(deps)
                    yield Stack(deps=deps, settings=settings, gitlab=gitlab, stub=stub, redis=redis, steps=steps)
        finally:
            stub.close()
    finally:
        with contextlib.suppress(Exception):
            await redis.flushdb()
        await redis.aclose()


@contextlib.asynccontextmanager
async def running_worker(stack: Stack, poll_delay: float) -> AsyncIterator[None]:
    """A real arq worker, not burst, polling every `poll_delay` seconds, for the block's duration."""
    worker = build_worker(stack.settings, stack.deps, handle_signals=False)
    worker.poll_delay_s = poll_delay
    task = asyncio.create_task(worker.async_run())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await worker.close()


async def deliver(stack: Stack, project: FakeProject, before: str, after: str) -> float:
    """What POST /hooks/gitlab does after authentication; returns the seconds it took."""
    t0 = time.perf_counter()
    event = parse_event(push_payload(project, after, before=before))
    outcome, _ = await DeliveryRecorder(stack.deps).handle(event, uuid.uuid4().hex)
    if outcome != "enqueued":
        raise RuntimeError(f"the delivery was {outcome}")
    return time.perf_counter() - t0


async def wait_synced(stack: Stack, project_id: int, head: str, timeout: float) -> dict[str, Any]:
    """Until the project is synced to `head` and its last run is closed; that run's `index_jobs` row."""
    db = stack.deps.require_db()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = await db.project(project_id)
        if row is not None and row.indexed_sha == head and row.done_gen >= row.requested_gen:
            runs = [r for r in await db.runs(project_id) if r["to_sha"] == head and r["finished_at"] is not None]
            busy = await db.pool.fetchval(
                "SELECT count(*) FROM index_jobs WHERE project_id = $1 AND finished_at IS NULL", project_id
            )
            if runs and not busy:
                return runs[0]
        await asyncio.sleep(0.02)
    raise TimeoutError(f"project {project_id} was not synced to {head[:10]} within {timeout:.0f} s")


async def searchable(stack: Stack, target: Expected, t0: float, args: argparse.Namespace) -> float | None:
    """Poll every `--poll-every` s until the changed method's new chunk is returned; seconds from `t0`.

    `--poll symbol` calls `deps.search.symbol(qualified name)`. On embedded Qdrant each such call scans every
    point in Python on this event loop, which the sync job needs too, so by default (`--poll probe`) the poll
    reads the chunk's point by id (a dict lookup; the id stays, the content hash changes) and `symbol()` is
    called once the run has closed, to confirm that the search returns the new chunk.
    """
    deadline = t0 + args.timeout
    store = stack.deps.store
    while True:
        started = time.perf_counter()
        if args.poll == "probe":
            found = await probe_chunk(store, target)
        else:
            found = await symbol_returns(stack, target)
        now = time.perf_counter()
        if found:
            return now - t0
        if now > deadline:
            return None
        await asyncio.sleep(max(0.0, args.poll_every - (now - started)))


async def probe_chunk(store: Any, target: Expected) -> bool:
    """Whether the chunk's point holds the new content hash: by id on qdrant-client, by indexed filter on Edge."""
    client = getattr(store, "client", None)
    if client is None:
        where = filters.all_of(filters.eq("qualified_name", target.qualified_name))
        hashes = {str(r.id): (r.payload or {}).get("content_hash") async for r in store.scroll(where, ["content_hash"])}
        return hashes.get(target.chunk_id) == target.content_hash
    records = await client.retrieve(store.alias, ids=[target.chunk_id], with_payload=["content_hash"])
    return any((r.payload or {}).get("content_hash") == target.content_hash for r in records)


async def symbol_returns(stack: Stack, target: Expected) -> bool:
    """Whether `deps.search.symbol(qualified name)` returns the chunk with the new content hash (timed)."""
    started = time.perf_counter()
    hits = await stack.deps.search.symbol(LOCAL, target.qualified_name)
    stack.lookup_ms.append((time.perf_counter() - started) * 1e3)
    return any(h.id == target.chunk_id and h.payload.get("content_hash") == target.content_hash for h in hits)


@dataclass(frozen=True, slots=True)
class Expected:
    """The changed method's new chunk."""

    qualified_name: str
    chunk_id: str
    content_hash: str


def expected_chunk(text: str, path: str, qualified_name: str, context: SourceContext, settings: Settings) -> Expected:
    result = chunk_source(text.encode(), path, context, settings.chunking.to_config())
    for chunk in result.chunks:
        if chunk.qualified_name == qualified_name and chunk.part_index == 0:
            return Expected(qualified_name, chunk.id, chunk.content_hash)
    raise ValueError(f"{qualified_name} has no chunk in {path}")


def commit_all(project: FakeProject, sources: dict[str, str], message: str) -> str:
    """Write every file and commit them in one go (one `git add -A`, not one per file)."""
    for rel, text in sources.items():
        target = project.repo_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    project.repo.run("add", "-A")
    return project.repo.commit_index(message)


def run_row(run: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "mode", "status", "trigger", "files_changed", "files_parsed", "files_skipped", "files_deleted",
        "chunks_embedded", "chunks_reused", "chunks_deleted",
    )  # fmt: skip
    row = {k: run[k] for k in keys}
    started, finished = run["started_at"], run["finished_at"]
    row["run_seconds"] = (finished - started).total_seconds() if started and finished else None
    return row


def wall_of(moment: datetime | None, t0_wall: float) -> float | None:
    return moment.timestamp() - t0_wall if moment is not None else None


async def initial_index(
    stack: Stack, project: FakeProject, sources: dict[str, str], timeout: float
) -> tuple[str, dict[str, Any]]:
    print(f"  committing {len(sources):,} files ...", file=sys.stderr, flush=True)
    t = time.perf_counter()
    head = commit_all(project, sources, "initial import")
    commit_s = time.perf_counter() - t
    size = sum(len(s.encode()) for s in sources.values())
    calls0 = len(stack.gitlab.calls)
    stack.stub.stats()
    stack.steps.take()
    print("  initial index ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    receive_s = await deliver(stack, project, ZERO, head)
    run = await wait_synced(stack, project.id, head, timeout)
    seconds = time.perf_counter() - t0
    steps = stack.steps.take()
    points = await stack.deps.store.count()
    manifest_chunks = await stack.deps.require_db().pool.fetchval(
        "SELECT coalesce(sum(cardinality(chunk_ids)), 0) FROM file_manifest WHERE project_id = $1", project.id
    )
    calls = calls_since(stack.gitlab, calls0)
    embed = stack.stub.stats()
    return head, {
        "files": len(sources),
        "bytes": size,
        "commit_seconds": commit_s,
        "receive_ms": receive_s * 1e3,
        "seconds": seconds,
        "files_per_s": len(sources) / seconds,
        "points": points,
        "manifest_chunks": int(manifest_chunks),
        "embedding_inputs": embed["inputs"],
        "embedding_requests": embed.get("requests"),
        "gitlab_calls": sum(calls.values()),
        "gitlab_calls_by_endpoint": calls,
        "index_job": run_row(run),
        "steps": steps,
    }


async def one_push(
    stack: Stack,
    project: FakeProject,
    sources: dict[str, str],
    target: Editable,
    value: int,
    args: argparse.Namespace,
) -> dict[str, Any]:
    before = project.head()
    text = edit_method(sources[target.path], target.method, value)
    after = project.commit({target.path: text}, f"tune {target.method}")
    sources[target.path] = text
    context = SourceContext(
        repo_path=project.path_with_namespace,
        gitlab_project_id=project.id,
        commit_sha=after,
        branch=project.default_branch,
    )
    expected = expected_chunk(text, target.path, target.qualified_name, context, stack.settings)
    calls0 = len(stack.gitlab.calls)
    stack.stub.stats()
    t0_wall = time.time()
    t0 = time.perf_counter()
    receive_s = await deliver(stack, project, before, after)
    fresh = await searchable(stack, expected, t0, args)
    run = await wait_synced(stack, project.id, after, args.timeout)
    synced_s = time.perf_counter() - t0
    steps = stack.steps.take()
    confirmed = await symbol_returns(stack, expected)
    embed = stack.stub.stats()
    calls = calls_since(stack.gitlab, calls0)
    return {
        "file": target.path,
        "qualified_name": target.qualified_name,
        "receive_ms": receive_s * 1e3,
        "searchable_s": fresh if confirmed else None,
        "symbol_confirmed": confirmed,
        "synced_s": synced_s,
        "steps": steps,
        "run_started_after_s": wall_of(run["started_at"], t0_wall),
        "run_finished_after_s": wall_of(run["finished_at"], t0_wall),
        "embedding_inputs": embed["inputs"],
        "embedding_requests": embed.get("requests"),
        "gitlab_calls": sum(calls.values()),
        "gitlab_calls_by_endpoint": calls,
        "index_job": run_row(run),
    }


async def measure(args: argparse.Namespace, dsn: str, tmp: Path) -> dict[str, Any]:
    print(f"generating {args.files:,} Java files (seed {args.seed}) ...", file=sys.stderr, flush=True)
    sources, editable = generate_repository(args.files, args.seed)
    rng = random.Random(args.seed + 1)
    la_start = os.getloadavg()
    async with open_stack(args, dsn, tmp) as stack:
        project = stack.gitlab.create_project(PROJECT_PATH)
        async with running_worker(stack, args.poll_delay):
            head, initial = await initial_index(stack, project, sources, args.index_timeout)
            print(f"  indexed in {initial['seconds']:.1f} s: {initial['points']:,} points", file=sys.stderr, flush=True)
            probe = rng.choice(editable)
            await stack.deps.search.symbol(LOCAL, probe.qualified_name)
            t = time.perf_counter()
            for _ in range(5):  # what one poll costs on this index, with no sync running
                await stack.deps.search.symbol(LOCAL, probe.qualified_name)
            lookup_ms = (time.perf_counter() - t) / 5 * 1e3
            pushes = []
            for i in range(args.pushes):
                target = rng.choice(editable)
                row = await one_push(stack, project, sources, target, 1000 + i, args)
                pushes.append(row)
                fresh = row["searchable_s"]
                print(
                    f"  push {i + 1}/{args.pushes}: searchable after "
                    f"{'TIMEOUT' if fresh is None else f'{fresh:.3f} s'}, synced {row['synced_s']:.3f} s, "
                    f"{row['gitlab_calls']} API calls, {row['embedding_inputs']} inputs",
                    file=sys.stderr,
                    flush=True,
                )
            audit = None
            if args.audit:
                print("  audit ...", file=sys.stderr, flush=True)
                await SyncEnv(deps=stack.deps, settings=stack.settings, gitlab=stack.gitlab).audit(project)
                audit = "index equals the head: no missing, stale or duplicate chunk"
            del head
        return build_report(args, initial, pushes, lookup_ms, stack, la_start, audit)


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return math.nan
    k = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[k]


def spread(values: Sequence[float]) -> dict[str, float]:
    return {
        "p50": percentile(values, 50),
        "p90": percentile(values, 90),
        "max": max(values) if values else math.nan,
        "min": min(values) if values else math.nan,
        "mean": sum(values) / len(values) if values else math.nan,
    }


def build_report(
    args: argparse.Namespace,
    initial: dict[str, Any],
    pushes: list[dict[str, Any]],
    lookup_ms: float,
    stack: Stack,
    la_start: tuple[float, float, float],
    audit: str | None,
) -> dict[str, Any]:
    fresh = [p["searchable_s"] for p in pushes if p["searchable_s"] is not None]
    endpoints: collections.Counter[str] = collections.Counter()
    for p in pushes:
        endpoints.update(p["gitlab_calls_by_endpoint"])
    modes = collections.Counter(p["index_job"]["mode"] for p in pushes)
    n = max(1, len(pushes))
    freshness = spread(fresh)
    summary: dict[str, Any] = {
        "pushes": len(pushes),
        "became_searchable": len(fresh),
        "searchable_s": freshness,
        "symbol_confirmed": sum(1 for p in pushes if p["symbol_confirmed"]),
        "steps_per_push_s": mean_steps(pushes),
        "synced_s": spread([p["synced_s"] for p in pushes]),
        "run_started_after_s": spread([p["run_started_after_s"] for p in pushes if p["run_started_after_s"]]),
        "run_seconds": spread([p["index_job"]["run_seconds"] for p in pushes if p["index_job"]["run_seconds"]]),
        "receive_ms": spread([p["receive_ms"] for p in pushes]),
        "gitlab_calls_per_push": spread([p["gitlab_calls"] for p in pushes]),
        "gitlab_calls_per_push_by_endpoint": {k: v / n for k, v in endpoints.most_common()},
        "embedding_inputs_per_push": spread([p["embedding_inputs"] for p in pushes]),
        "chunks_embedded_per_push": spread([p["index_job"]["chunks_embedded"] for p in pushes]),
        "chunks_reused_per_push": spread([p["index_job"]["chunks_reused"] for p in pushes]),
        "index_job_modes": dict(modes),
        "symbol_lookup_ms": lookup_ms,
        "poll_lookups": len(stack.lookup_ms),
        "poll_lookup_ms": spread(stack.lookup_ms),
    }
    p50 = freshness["p50"]
    return {
        "settings": {
            "files": args.files,
            "pushes": args.pushes,
            "seed": args.seed,
            "poll_every_s": args.poll_every,
            "poll": args.poll,
            "worker_poll_delay_s": args.poll_delay,
            "qdrant": ":memory:" if args.qdrant_memory else "embedded, on disk (temporary folder)",
            "nagle": "left on in the fakes" if args.keep_nagle else "off (TCP_NODELAY) in the fakes",
            "files_per_batch": stack.settings.worker.files_per_batch,
            "max_jobs": stack.settings.worker.max_jobs,
            "api_concurrency": stack.settings.gitlab.api_concurrency,
            "embedding": f"{STUB_MODEL} ({STUB_DIM} dims), FakeEmbeddingServer in a spawned process",
            "redis_db": args.redis_db,
        },
        "environment": {
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "load_average_at_start": la_start,
            "load_average_at_end": os.getloadavg(),
            "platform": f"{os.uname().sysname} {os.uname().release} {os.uname().machine}",
        },
        "initial_index": initial,
        "summary": summary,
        "pushes": pushes,
        "audit": audit,
        "verdict": {
            "target_p50_s": TARGET_P50_S,
            "p50_s": p50,
            "all_searchable": len(fresh) == len(pushes),
            "met": len(fresh) == len(pushes) and p50 < TARGET_P50_S,
        },
    }


def mean_steps(pushes: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Mean seconds per push in each timed step, and the rest of the run (chunking, arq, event loop)."""
    totals: collections.Counter[str] = collections.Counter()
    for p in pushes:
        for label, step in p["steps"].items():
            totals[label] += step["seconds"]
    n = max(1, len(pushes))
    out = {label: seconds / n for label, seconds in totals.most_common()}
    runs = [p["index_job"]["run_seconds"] or 0.0 for p in pushes]
    # project and branch head are read before start_run (outside run_seconds); the run bookkeeping straddles it
    outside = ("GitLab: project", "GitLab: branch head", "PostgreSQL: run bookkeeping")
    inside = sum(v for k, v in out.items() if k not in outside)
    out["rest of run_seconds (chunking, part of the bookkeeping, event loop)"] = sum(runs) / n - inside
    return out


def print_report(report: dict[str, Any]) -> None:
    st, env, init, s = report["settings"], report["environment"], report["initial_index"], report["summary"]
    print()
    print(
        f"repository: {init['files']:,} Java files, {init['bytes'] / 1e6:.1f} MB; Qdrant {st['qdrant']}; "
        f"{st['embedding']}; worker poll {st['worker_poll_delay_s']} s, search poll {st['poll_every_s']} s; "
        f"Nagle {st['nagle']}"
    )
    la0, la1 = env["load_average_at_start"], env["load_average_at_end"]
    print(
        f"python {env['python']}, {env['cpu_count']} cpus, load average at start {la0[0]:.2f} {la0[1]:.2f} "
        f"{la0[2]:.2f}, at end {la1[0]:.2f} {la1[1]:.2f} {la1[2]:.2f}"
    )
    job = init["index_job"]
    print()
    print(
        f"initial index ({job['mode']}): {init['seconds']:.1f} s ({init['files_per_s']:.0f} files/s), "
        f"{init['points']:,} points ({init['manifest_chunks']:,} in the manifest), "
        f"{init['embedding_inputs']:,} embedding inputs, {init['gitlab_calls']:,} GitLab calls "
        f"{init['gitlab_calls_by_endpoint']}; commit of the files took {init['commit_seconds']:.1f} s"
    )
    print()
    print(
        f"{'#':>3} {'searchable s':>12} {'synced s':>9} {'started s':>9} {'run s':>7} {'API':>4} {'inputs':>7} "
        f"{'emb/reuse':>10}  {'mode':<8} method"
    )
    for i, p in enumerate(report["pushes"], 1):
        j = p["index_job"]
        fresh = "TIMEOUT" if p["searchable_s"] is None else f"{p['searchable_s']:.3f}"
        started = math.nan if p["run_started_after_s"] is None else p["run_started_after_s"]
        print(
            f"{i:>3} {fresh:>12} {p['synced_s']:>9.3f} {started:>9.3f} "
            f"{j['run_seconds'] or math.nan:>7.3f} {p['gitlab_calls']:>4} {p['embedding_inputs']:>7} "
            f"{j['chunks_embedded']:>4}/{j['chunks_reused']:<5}  {j['mode']:<8} {p['qualified_name']}"
        )
    fr, sy = s["searchable_s"], s["synced_s"]
    print()
    print(
        f"freshness (delivery -> searchable): p50 {fr['p50']:.3f} s, p90 {fr['p90']:.3f} s, max {fr['max']:.3f} s, "
        f"min {fr['min']:.3f} s ({s['became_searchable']}/{s['pushes']} searchable)"
    )
    if st["poll"] == "probe":
        print(f"symbol() returned the new chunk after the run for {s['symbol_confirmed']}/{s['pushes']} pushes")
    print(f"delivery -> run closed: p50 {sy['p50']:.3f} s, p90 {sy['p90']:.3f} s, max {sy['max']:.3f} s")
    print(
        f"run started (index_jobs.started_at) p50 {s['run_started_after_s']['p50']:.3f} s after the delivery; "
        f"run p50 {s['run_seconds']['p50']:.3f} s; delivery itself p50 {s['receive_ms']['p50']:.1f} ms"
    )
    print(
        f"per push: GitLab API calls p50 {s['gitlab_calls_per_push']['p50']:.0f} "
        f"(max {s['gitlab_calls_per_push']['max']:.0f}) {s['gitlab_calls_per_push_by_endpoint']}; "
        f"embedding inputs p50 {s['embedding_inputs_per_push']['p50']:.0f} "
        f"(max {s['embedding_inputs_per_push']['max']:.0f}); index_jobs modes {s['index_job_modes']}"
    )
    print(
        f"symbol() lookup on this index: {s['symbol_lookup_ms']:.1f} ms alone; while polling p50 "
        f"{s['poll_lookup_ms']['p50']:.1f} ms, max {s['poll_lookup_ms']['max']:.1f} ms over {s['poll_lookups']} polls"
    )
    print("where a push's time goes (mean s per push, from the delivery):")
    print(
        f"  {s['run_started_after_s']['mean']:7.3f}  until index_jobs.started_at (queue pickup, project, branch head)"
    )
    for label, seconds in s["steps_per_push_s"].items():
        print(f"  {seconds:7.3f}  {label}")
    print("initial index, summed time inside calls (8 GitLab calls overlap, so they add up to more than the wall):")
    for label, step in init["steps"].items():
        print(f"  {step['seconds']:8.1f} s  {step['calls']:>6,.0f} calls  {label}")
    if report["audit"]:
        print(f"audit: {report['audit']}")
    v = report["verdict"]
    print(f"\ntarget p50 < {v['target_p50_s']:.0f} s: {'MET' if v['met'] else 'MISSED'} (p50 {v['p50_s']:.3f} s)")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.freshness", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--files", type=int, default=None, help="Java files in the repository (5000; --heal: 500)")
    parser.add_argument("--pushes", type=int, default=20, help="one-file pushes measured (default: 20)")
    parser.add_argument("--seed", type=int, default=20240917, help="generator seed (default: %(default)s)")
    parser.add_argument("--poll-every", type=float, default=0.02, help="search poll interval, s (default: 0.02)")
    parser.add_argument("--poll", choices=("probe", "symbol"), default="probe", help="how to poll (see above)")
    parser.add_argument("--poll-delay", type=float, default=0.05, help="arq worker poll_delay, s (default: 0.05)")
    parser.add_argument("--timeout", type=float, default=60.0, help="per push, s (default: 60)")
    parser.add_argument("--index-timeout", type=float, default=1800.0, help="initial index, s (default: 1800)")
    parser.add_argument("--redis-db", type=int, default=13, help="an EMPTY Redis database index (default: 13)")
    parser.add_argument("--qdrant-memory", action="store_true", help="Qdrant ':memory:' instead of a folder")
    parser.add_argument("--keep-nagle", action="store_true", help="leave Nagle on in the fakes (see above)")
    parser.add_argument("--audit", action="store_true", help="at the end, compare the index with git (slow)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the numbers as JSON")
    parser.add_argument("--heal", action="store_true", help="lost delivery and force push healing (bench/heal.py)")
    parser.add_argument("--projects", type=int, default=1000, help="--heal: projects the sweep lists (default: 1000)")
    parser.add_argument("--reconcile-every", type=int, default=10, help="--heal: sweep interval, s (default: 10)")
    args = parser.parse_args(argv)
    if args.files is None:
        args.files = 500 if args.heal else 5000
    if not 10 <= args.files <= 50_000 or not 1 <= args.pushes <= 500:
        parser.error("--files in [10, 50000], --pushes in [1, 500]")
    if not 0.001 <= args.poll_every <= 5 or not 0.001 <= args.poll_delay <= 5:
        parser.error("--poll-every and --poll-delay in [0.001, 5]")
    if args.timeout <= 0 or args.index_timeout <= 0 or not 0 <= args.redis_db <= 15:
        parser.error("timeouts must be > 0, --redis-db in [0, 15]")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    warnings.filterwarnings("ignore", message=LOCAL_MODE_WARNING)
    tmp = Path(tempfile.mkdtemp(prefix="javakb-bench-freshness-"))
    if args.heal:
        from bench import heal

        try:
            report = heal.run(args, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if args.json is not None:
            args.json.write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
        return 0
    try:
        with bench_database() as dsn:
            report = asyncio.run(measure(args, dsn, tmp))
    except (OSError, psycopg.Error) as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print_report(report)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0 if report["verdict"]["met"] else 1


if __name__ == "__main__":
    sys.exit(main())
