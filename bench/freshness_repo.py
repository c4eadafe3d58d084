"""The generated Spring repository `bench.freshness` and `bench.heal` push to: domains of entities,
repositories, services, controllers and DTOs, and the methods a push edits (`int limit = N;`).
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from typing import Final

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
