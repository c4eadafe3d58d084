"""Gold sets for the set questions, computed from the Java source with our own tree-sitter walk.

Independent of the pipeline (it imports nothing from `pipeline/` or `app/`): a small syntactic model
of every file (types, fields, constructors, methods, annotations, call sites) and four rules.

    annotation X: every method, constructor and type carrying `@X` (simple name).
    injection X: beans (a type carrying a Spring stereotype, or an annotation meta-annotated with one
        declared anywhere in the corpus, or a type instantiated in an `@Bean` method of its
        repository) that receive a declared type X: an `@Autowired`/`@Resource`/
        `@Inject` field, a constructor parameter, an uninitialised `final` field of a Lombok
        `@RequiredArgsConstructor`/`@AllArgsConstructor` class, or a parameter of an `@Bean` method.
    inverse injection C: the set of types bean C receives by the same rule.
    callers X.m: methods and constructors containing a call `recv.m(...)` whose receiver is a field,
        parameter or local of declared type X (or a subtype of X in the corpus), `X` itself (static),
        or, inside X or its subtypes, an unqualified `m(...)` / `this.m(...)`.
    endpoint METHOD PATH: handler methods (of types not annotated `@FeignClient`) whose class-level
        plus method-level mapping matches the concrete path, `{var}` matching one segment; of those,
        only the most specific patterns (fewest variables), as Spring dispatches. Mapping
        annotations are Spring's plus corpus annotations carrying `@RequestMapping(method = X)`.

Method references (`repo::m`) count as calls. What it cannot see (written down in
docs/decisions.md): calls through chained expressions (`a.b().m()`), receivers typed by `var`,
generics or inherited fields, injection through XML, setters or `@Import`ed factories, servlet
context paths set in YAML, commented-out code (seen correctly as absent), overload resolution
(every `m` counts).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import tree_sitter_java
from tree_sitter import Language, Node, Parser

from tests.quality.real.kotlin_names import declared

JAVA: Final = Language(tree_sitter_java.language())
TYPE_NODES: Final = frozenset(
    {
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "annotation_type_declaration",
    }
)
STEREOTYPES: Final = frozenset(
    {"Component", "Service", "Repository", "Controller", "RestController", "Configuration", "ControllerAdvice",
     "RestControllerAdvice", "SpringBootApplication", "FeignClient", "Mapper"}
)  # fmt: skip
INJECT_MARKS: Final = frozenset({"Autowired", "Resource", "Inject"})
LOMBOK_CONSTRUCTORS: Final = frozenset({"RequiredArgsConstructor", "AllArgsConstructor"})
MAPPINGS: Final = {"GetMapping": "GET", "PostMapping": "POST", "PutMapping": "PUT", "DeleteMapping": "DELETE",
                   "PatchMapping": "PATCH", "RequestMapping": None}  # fmt: skip
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_VERB = re.compile(r"RequestMethod\.([A-Z]+)")


@dataclass(slots=True)
class Annotation:
    name: str
    text: str


@dataclass(slots=True)
class Member:
    """A method or constructor: its qualified name, annotations, parameters and call sites."""

    qualified_name: str
    name: str
    annotations: list[Annotation]
    params: dict[str, str]  # name -> simple type
    locals: dict[str, str] = field(default_factory=dict)
    calls: list[tuple[str | None, str]] = field(default_factory=list)  # (receiver text or None, method)
    created: set[str] = field(default_factory=set)  # simple names of the types this body instantiates
    constructor: bool = False


@dataclass(slots=True)
class JavaType:
    """One declared type with what the rules need."""

    repo: str
    file_path: str
    qualified_name: str
    name: str
    kind: str
    annotations: list[Annotation]
    supertypes: list[str]  # simple names
    fields: dict[str, tuple[str, list[Annotation], bool, bool]] = field(default_factory=dict)
    # field name -> (simple type, annotations, final, initialised)
    members: list[Member] = field(default_factory=list)

    def marks(self) -> set[str]:
        return {a.name for a in self.annotations}


def kotlin_types(repo: str, root: Path) -> list[JavaType]:
    """The names Kotlin sources under `src/main/kotlin` declare (`kotlin_names`): no annotation, field or call is
    read, so the rules below find nothing in them; a Kotlin question's answers are written by hand."""
    out: list[JavaType] = []
    for path in sorted(root.rglob("*.kt")):
        rel = path.relative_to(root).as_posix()
        if "src/main/kotlin/" in rel and "/src/test/" not in "/" + rel:
            for t in declared(rel, path.read_text(encoding="utf-8", errors="replace")):
                members = [Member(m, m.rsplit(".", 1)[-1], [], {}) for m in t.members]
                out.append(JavaType(repo, rel, t.qualified_name, t.name, "kotlin", [], [], members=members))
    return out


def simple_type(text: str) -> str:
    """`java.util.List<Foo>` -> `List`; `Foo[]` -> `Foo`; `final Foo` -> `Foo`."""
    base = text.split("<", 1)[0].strip().removesuffix("[]").removesuffix("...").strip()
    return base.rsplit(".", 1)[-1].split()[-1] if base else base


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def _annotations(node: Node) -> list[Annotation]:
    out: list[Annotation] = []
    for child in node.children:
        if child.type == "modifiers":
            for mod in child.children:
                if mod.type in ("marker_annotation", "annotation"):
                    out.append(Annotation(simple_type(_text(mod.child_by_field_name("name"))), _text(mod)))
    return out


def parse_file(repo: str, file_path: str, source: bytes) -> list[JavaType]:
    """Every type declared in one file (nested ones as `Outer.Inner`)."""
    tree = Parser(JAVA).parse(source)
    package = ""
    for child in tree.root_node.children:
        if child.type == "package_declaration":
            package = next((_text(c) for c in child.children if c.type in ("scoped_identifier", "identifier")), "")
    types: list[JavaType] = []
    for child in tree.root_node.children:
        if child.type in TYPE_NODES:
            _walk_type(repo, file_path, package, child, types)
    return types


def _walk_type(repo: str, file_path: str, owner: str, node: Node, out: list[JavaType]) -> None:
    name = _text(node.child_by_field_name("name"))
    qualified = f"{owner}.{name}" if owner else name
    supers: list[str] = []
    for child in node.children:
        if child.type in ("superclass", "super_interfaces", "extends_interfaces"):
            supers.extend(
                simple_type(_text(t))
                for t in _descendants(
                    child, {"type_identifier", "generic_type", "scoped_type_identifier"}, shallow=True
                )
            )
    jtype = JavaType(repo, file_path, qualified, name, node.type, _annotations(node), supers)
    out.append(jtype)
    body = node.child_by_field_name("body")
    if body is None:
        return
    members = list(body.children)
    for child in body.children:
        if child.type == "enum_body_declarations":
            members.extend(child.children)
    for member in members:
        if member.type in TYPE_NODES:
            _walk_type(repo, file_path, qualified, member, out)
        elif member.type == "field_declaration":
            ftype = simple_type(_text(member.child_by_field_name("type")))
            mods = next((c for c in member.children if c.type == "modifiers"), None)
            final = mods is not None and any(c.type == "final" for c in mods.children)
            for decl in member.children:
                if decl.type == "variable_declarator":
                    initialised = decl.child_by_field_name("value") is not None
                    jtype.fields[_text(decl.child_by_field_name("name"))] = (
                        ftype,
                        _annotations(member),
                        final,
                        initialised,
                    )
        elif member.type in ("method_declaration", "constructor_declaration", "compact_constructor_declaration"):
            jtype.members.append(_member(qualified, member))


def _member(owner: str, node: Node) -> Member:
    name = _text(node.child_by_field_name("name")) or owner.rsplit(".", 1)[-1]
    params: dict[str, str] = {}
    plist = node.child_by_field_name("parameters")
    for p in plist.children if plist is not None else ():
        if p.type in ("formal_parameter", "spread_parameter"):
            pname = p.child_by_field_name("name")
            if pname is None:
                pname = next(
                    (c.child_by_field_name("name") for c in p.children if c.type == "variable_declarator"), None
                )
            ptype = p.child_by_field_name("type") or next((c for c in p.children if "type" in c.type), None)
            params[_text(pname)] = simple_type(_text(ptype))
    member = Member(f"{owner}.{name}", name, _annotations(node), params, constructor=node.type != "method_declaration")
    body = node.child_by_field_name("body")
    if body is not None:
        _read_body(member, body)
    return member


_BODY_NODES: Final = {
    "method_invocation",
    "local_variable_declaration",
    "enhanced_for_statement",
    "method_reference",
    "object_creation_expression",
}


def _read_body(member: Member, body: Node) -> None:
    """The call sites and local variable types of a method body (nested types excluded)."""
    for n in _descendants(body, _BODY_NODES):
        if n.type == "method_invocation":
            obj = n.child_by_field_name("object")
            member.calls.append((_text(obj) if obj is not None else None, _text(n.child_by_field_name("name"))))
        elif n.type == "method_reference":  # `userRepository::findOneByLogin`, `this::m`
            named = [c for c in n.children if c.is_named]
            if len(named) >= 2 and named[-1].type == "identifier":
                member.calls.append((_text(named[0]), _text(named[-1])))
        elif n.type == "object_creation_expression":
            member.created.add(simple_type(_text(n.child_by_field_name("type"))))
        elif n.type == "local_variable_declaration":
            ltype = simple_type(_text(n.child_by_field_name("type")))
            for decl in n.children:
                if decl.type == "variable_declarator":
                    member.locals[_text(decl.child_by_field_name("name"))] = ltype
        elif n.type == "enhanced_for_statement":
            member.locals[_text(n.child_by_field_name("name"))] = simple_type(_text(n.child_by_field_name("type")))


def _descendants(node: Node, kinds: set[str], *, shallow: bool = False) -> Iterator[Node]:
    stack = list(reversed(node.children))
    while stack:
        n = stack.pop()
        if n.type in kinds:
            yield n
            if shallow:
                continue
        if n.type in TYPE_NODES or n.type == "class_body":
            continue  # an anonymous or nested type's calls are its own
        stack.extend(reversed(n.children))


@dataclass(slots=True)
class Corpus:
    """Every type of every repository of the suite."""

    types: list[JavaType]

    @classmethod
    def load(cls, roots: Iterable[tuple[str, Path]], include: str = "src/main/java/") -> Corpus:
        types: list[JavaType] = []
        for repo, root in roots:
            for path in sorted(root.rglob("*.java")):
                rel = path.relative_to(root).as_posix()
                if include in rel and "/src/test/" not in "/" + rel:
                    types.extend(parse_file(repo, rel, path.read_bytes()))
            types.extend(kotlin_types(repo, root))
        return cls(types)

    def repos(self) -> set[str]:
        return {t.repo for t in self.types}

    def names(self) -> set[str]:
        """The qualified name of every type, method and constructor."""
        return {t.qualified_name for t in self.types} | {m.qualified_name for t in self.types for m in t.members}

    def in_repo(self, repo: str | None) -> list[JavaType]:
        return [t for t in self.types if repo is None or t.repo == repo]

    def stereotypes(self) -> set[str]:
        """Well-known stereotypes plus annotations declared in the corpus that carry one (transitively)."""
        known = set(STEREOTYPES)
        declared = [t for t in self.types if t.kind == "annotation_type_declaration"]
        while True:
            more = {t.name for t in declared if t.marks() & known} - known
            if not more:
                return known
            known |= more

    def subtypes(self, name: str, repo: str | None) -> set[str]:
        """`name` and every type of the repository that extends or implements it, transitively."""
        found = {name}
        while True:
            more = {t.name for t in self.in_repo(repo) if set(t.supertypes) & found} - found
            if not more:
                return found
            found |= more

    # --- the rules -------------------------------------------------------------------------------

    def annotated(self, annotation: str, repo: str | None) -> set[str]:
        out: set[str] = set()
        for t in self.in_repo(repo):
            if annotation in t.marks():
                out.add(t.qualified_name)
            out.update(m.qualified_name for m in t.members if annotation in {a.name for a in m.annotations})
        return out

    def bean_factories(self) -> set[tuple[str, str]]:
        """(repository, simple name) of each type instantiated in an `@Bean` method: Spring injects it too."""
        return {
            (t.repo, name)
            for t in self.types
            for m in t.members
            if "Bean" in {a.name for a in m.annotations}
            for name in m.created
        }

    def received(self, t: JavaType, stereotypes: set[str], factories: Set[tuple[str, str]] = frozenset()) -> set[str]:
        """The simple type names bean `t` receives by injection (empty when `t` is not a bean)."""
        if not t.marks() & stereotypes and (t.repo, t.name) not in factories:
            return set()
        lombok = bool(t.marks() & LOMBOK_CONSTRUCTORS)
        got = {ftype for ftype, marks, final, init in t.fields.values()
               if {a.name for a in marks} & INJECT_MARKS or (lombok and final and not init)}  # fmt: skip
        for m in t.members:
            if (
                m.constructor
                or "Bean" in {a.name for a in m.annotations}
                or {a.name for a in m.annotations} & INJECT_MARKS
            ):
                got.update(m.params.values())
        return got

    def injectors(self, type_name: str, repo: str | None) -> set[str]:
        marks, made = self.stereotypes(), self.bean_factories()
        return {t.qualified_name for t in self.in_repo(repo) if type_name in self.received(t, marks, made)}

    def dependencies(self, qualified_type: str) -> set[str]:
        marks, made = self.stereotypes(), self.bean_factories()
        return {d for t in self.types if t.qualified_name == qualified_type for d in self.received(t, marks, made)}

    def callers(self, type_name: str, method: str, repo: str | None) -> set[str]:
        family = self.subtypes(type_name, repo)
        out: set[str] = set()
        for t in self.in_repo(repo):
            fields = {n: f[0] for n, f in t.fields.items()}
            for m in t.members:
                scope = {**fields, **m.params, **m.locals}
                for receiver, name in m.calls:
                    if name != method:
                        continue
                    if receiver is None or receiver == "this":
                        hit = t.name in family
                    else:
                        recv = receiver.removeprefix("this.")
                        hit = scope.get(recv) in family or recv in family
                    if hit:
                        out.add(m.qualified_name)
                        break
        return out

    def meta_mappings(self) -> dict[str, str | None]:
        """Mapping annotations: Spring's, and corpus annotations carrying `@RequestMapping(method = X)`."""
        out: dict[str, str | None] = dict(MAPPINGS)
        for t in self.types:
            if t.kind == "annotation_type_declaration":
                for a in t.annotations:
                    if a.name == "RequestMapping" and (verb := _VERB.search(a.text)):
                        out[t.name] = verb.group(1)
        return out

    def handlers(self, http_method: str, path: str, repo: str | None) -> set[str]:
        mappings = self.meta_mappings()
        found: list[tuple[int, str]] = []  # (variable segments of the matching pattern, handler)
        for t in self.in_repo(repo):
            if "FeignClient" in t.marks():
                continue
            prefixes = [p for a in t.annotations if a.name == "RequestMapping" for p in _paths(a.text)] or [""]
            for m in t.members:
                for a in m.annotations:
                    if a.name not in mappings:
                        continue
                    verbs = [mappings[a.name]] if mappings[a.name] else _VERB.findall(a.text)
                    if verbs and http_method not in verbs:
                        continue
                    full = [pre + p for pre in prefixes for p in _paths(a.text) or [""]]
                    found.extend((_variables(f), m.qualified_name) for f in full if route_matches(f, path))
        # Spring dispatches to the most specific pattern: `/update/deleteStatus` beats `/update/{id}`.
        best = min((n for n, _ in found), default=0)
        return {name for n, name in found if n == best}


def _paths(annotation_text: str) -> list[str]:
    """The path strings of a mapping annotation (value/path/bare literal; never `produces` etc.)."""
    args = annotation_text.split("(", 1)[1] if "(" in annotation_text else ""
    keep: list[str] = []
    for part in re.split(r",\s*(?=[a-zA-Z]+\s*=)", args):
        key = part.split("=", 1)[0].strip() if re.match(r"\s*[a-zA-Z]+\s*=", part) else "value"
        if key in ("value", "path"):
            keep.extend(_STRING.findall(part))
    return keep


def _variables(pattern: str) -> int:
    return pattern.count("{") + 100 * pattern.count("*")


def route_matches(pattern: str, path: str) -> bool:
    """`/a/{id}/b` matches `/a/42/b`; `/a/**` matches everything below `/a`; trailing slashes ignored."""
    pat = [s for s in pattern.split("/") if s]
    got = [s for s in path.split("/") if s]
    if pat and pat[-1] == "**":
        head = pat[:-1]
        return len(got) >= len(head) and all(_segment(p, g) for p, g in zip(head, got, strict=False))
    return len(pat) == len(got) and all(_segment(p, g) for p, g in zip(pat, got, strict=True))


def _segment(pattern: str, segment: str) -> bool:
    return pattern == segment or (pattern.startswith("{") and pattern.endswith("}"))
