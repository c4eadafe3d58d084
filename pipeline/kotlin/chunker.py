"""From one Kotlin file to its chunks, the same records as Java's (`pipeline.model.Chunk`).

A type gets its skeleton chunk (declaration, KDoc, members' signatures, bodies elided); each function,
constructor (a non-empty primary constructor too) and property with accessors or annotations gets its
own. Top-level functions and properties belong to the file's JVM facade class, `<File>Kt`, the name
Java code calls them by. The Spring rules are the Java side's (`pipeline.spring`, `pipeline.members`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import cache, partial
from pathlib import PurePosixPath

from tree_sitter import Node

from pipeline.calls import CallScope, Unqualified
from pipeline.client_calls import mentions_clients, wants_arguments
from pipeline.drafts import Draft, FileUnit, Part, finish
from pipeline.field_values import NO_VALUES
from pipeline.generated import mark_generated
from pipeline.javadoc import summarize
from pipeline.kotlin.calls import read_calls
from pipeline.kotlin.http import Scope, enclosing_values, file_constants, http_calls, type_values
from pipeline.kotlin.interop import file_jvm_name
from pipeline.kotlin.reader import (
    CONSTRUCTOR,
    FUNCTION,
    PRIMARY,
    PROPERTY,
    KFile,
    KMember,
    KType,
    error_nodes,
    read_file,
)
from pipeline.kotlin.recovery import Piece, parse_recovering
from pipeline.kotlin.routes import declares_routers, read_routes
from pipeline.members import param_injections
from pipeline.model import LANGUAGES, Chunk, ChunkerConfig, FileResult, Skipped, SkipReason, SourceContext, SymbolType
from pipeline.outbound import Client, client_of, declared_routes, spelt_out
from pipeline.render import chunk_id_prefix, repo_key
from pipeline.routes import Handler, Routing, attribute, place
from pipeline.source import decode_source
from pipeline.splitting import LineSpan, estimate_tokens, split_rows
from pipeline.spring import (
    BEAN_STEREOTYPES,
    EXCHANGE_ANNOTATIONS,
    HANDLER_STEREOTYPES,
    injected_type,
    is_injected_member,
    method_routes,
    route_prefixes,
    routes_if_mapping,
    stereotype_of,
)
from pipeline.syntax import Span, squash, text
from pipeline.types import read_imports, with_aliases

LANGUAGE = LANGUAGES[1]
_ELIDED = " { ... }"
_INDENT = "    "
_MAX_LINE = 240
_OBJECT_WORDS = frozenset({"companion", "object"})


def chunk_kotlin(raw: bytes, file_path: str, context: SourceContext, config: ChunkerConfig) -> FileResult:
    """Chunk one Kotlin file. Bad input comes back as `Skipped` entries, never as an exception."""
    decoded = decode_source(raw, file_path, config)
    if isinstance(decoded, Skipped):
        return FileResult(file_path=file_path, skipped=(decoded,))
    tree, broken = parse_recovering(decoded.data)
    root = tree.root_node
    found = read_file(root)
    package = found.package
    declared: dict[str, str] = {}
    for info in found.types:
        declared.setdefault(info.name, f"{package}.{info.nested_name}" if package else info.nested_name)
    unit = FileUnit(
        context=context, file_path=file_path, package=package,
        imports=with_aliases(read_imports(found.imports, declared, package), found.aliases), data=decoded.data,
        lines=decoded.data.decode("utf-8").split("\n"), calls=read_calls(root), config=config,
        id_prefix=chunk_id_prefix(repo_key(context.repo_path, context.gitlab_project_id), file_path),
        constants=cache(partial(file_constants, root)), http_clients=cache(partial(mentions_clients, decoded.data)),
        field_values=cache(lambda: {info.node.start_byte: type_values(info) for info in found.types}),
    )  # fmt: skip
    routing = _routing(unit, found) if declares_routers(decoded.data) else None
    drafts = list(_drafts(unit, found, file_path, routing))
    if routing is not None:
        attribute(drafts, routing.attributed)
    chunks = mark_generated(unit.lines, finish(unit, drafts))
    for chunk in chunks:
        object.__setattr__(chunk, "language", LANGUAGE)
    return FileResult(
        file_path=file_path,
        chunks=chunks,
        skipped=(*_broken(unit, broken), *_syntax_gaps(root, found, file_path)),
        encoding=decoded.encoding,
        parse_errors=bool(broken) or root.has_error,
    )


def facade_name(file_path: str) -> str:
    """The JVM class of a file's top-level declarations: `owner-utils.kt` → `Owner_utilsKt` (kotlinc's rule)."""
    stem = PurePosixPath(file_path).stem
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in stem)
    return (cleaned[:1].upper() + cleaned[1:] or "_") + "Kt"


def found_facade(found: KFile, file_path: str) -> str:
    """The file's facade class: `@file:JvmName("Names")`'s, else `facade_name`."""
    return file_jvm_name(found.file_annotations) or facade_name(file_path)


def _drafts(unit: FileUnit, found: KFile, file_path: str, routing: Routing | None) -> Iterator[Draft]:
    facade = found_facade(found, file_path)
    top = Unqualified(
        members=frozenset(), top_level=frozenset(m.name for m in found.top_level if m.kind == FUNCTION),
        facade=facade, facade_fq=unit.qualified(facade),
        packages=(*((unit.package,) if unit.package else ()), *(i.name for i in found.imports if i.wildcard)),
    )  # fmt: skip
    for info in found.types:
        stereotype = stereotype_of(info.modifiers, (*info.extends, *info.implements), info.kind is SymbolType.INTERFACE)
        prefixes = route_prefixes(info.modifiers)
        exchanges = any(m.modifiers.has(*EXCHANGE_ANNOTATIONS) for m in info.members)
        client = client_of(info.modifiers, info.kind is SymbolType.INTERFACE, exchanges)
        calls = replace(top, members=frozenset(m.name for m in info.members if m.kind == FUNCTION))
        drafts = (
            _member_chunk(unit, m, info.nested_name, stereotype, prefixes, info, client, calls, routing)
            for m in info.members
        )
        members = [m for m in drafts if m is not None]
        yield _type_chunk(unit, info, stereotype, members)
        yield from members
    for member in found.top_level:
        draft = _member_chunk(unit, member, facade, None, (), None, None, top, routing, top_level=True)
        if draft is not None:
            yield draft


def _injects(member: KMember, info: KType | None, stereotype: str | None) -> tuple[str, ...]:
    """Bean types a member receives: a bean's sole or `@Autowired` constructor, an injected property or setter."""
    if member.kind in (PRIMARY, CONSTRUCTOR):
        if info is None or stereotype not in BEAN_STEREOTYPES:
            return ()
        # Spring constructs a Kotlin bean through its primary constructor unless another one is `@Autowired`.
        marked = [m for m in info.members if m.kind == CONSTRUCTOR and m.modifiers.has("Autowired", "Inject")]
        if member.kind == PRIMARY:
            return () if marked else param_injections(member.params)
        has_primary = any(m.kind == PRIMARY and m.params for m in info.members)
        sole = not has_primary and sum(1 for m in info.members if m.kind == CONSTRUCTOR) == 1
        return param_injections(member.params) if sole or member in marked else ()
    if member.modifiers.annotations and (is_injected_member(member.modifiers) or member.modifiers.has("Bean")):
        if member.kind == PROPERTY:
            p = member.params[0]
            return (injected_type(p.simple, p.type_arg),) if p.simple else ()
        return param_injections(member.params)
    return ()


def _member_chunk(
    unit: FileUnit, member: KMember, owner_nested: str, stereotype: str | None, prefixes: Sequence[str],
    info: KType | None, client: tuple[Client, str | None] | None, unqualified: Unqualified,
    routing: Routing | None, *,
    top_level: bool = False,
) -> Draft | None:  # fmt: skip
    if member.kind == PRIMARY and not member.params:
        return None
    if member.kind == PROPERTY and not (top_level or member.accessors or member.modifiers.annotations):
        return None  # a plain property: its type's chunk lists it
    mods = member.modifiers
    owner = unit.qualified(owner_nested)
    annotations = mods.annotations
    verbs, paths = method_routes(mods, prefixes) if annotations else ((), ())
    rows = LineSpan(*member.rows)
    injects = _injects(member, info, stereotype)
    chunk = unit.blank_chunk()
    constructor = member.kind in (PRIMARY, CONSTRUCTOR)
    name = owner_nested.rsplit(".", 1)[-1] if constructor else member.name  # Java's name for a constructor
    chunk.qualified_name = f"{owner}.{name}"
    chunk.symbol_type = SymbolType.CONSTRUCTOR if constructor else SymbolType.METHOD
    chunk.name = name
    chunk.signature = member.signature.replace("constructor(", f"{name}(", 1) if constructor else member.signature
    chunk.enclosing_type = owner
    chunk.parameter_types = tuple(p.type for p in member.params) if member.kind != PROPERTY else ()
    chunk.modifiers = mods.keywords
    chunk.annotations = tuple(a.text for a in annotations)
    chunk.annotation_names = tuple(a.name for a in annotations)
    chunk.stereotype = stereotype
    chunk.http_method, chunk.http_path = verbs, paths
    # A Feign or `@HttpExchange` client's method: its own routes are the calls it makes (`pipeline.outbound`).
    chunk.outbound = declared_routes(client[0], client[1], verbs, paths) if client is not None and paths else ()
    chunk.routes_if_mapping = (
        routes_if_mapping(mods, prefixes) if annotations and not paths and stereotype in HANDLER_STEREOTYPES else ()
    )
    chunk.injects = tuple(unit.imports.unaliased(t) for t in injects)
    chunk.injects_fq = unit.resolve_all(injects)
    chunk.javadoc_summary = summarize(text(member.doc)) if member.doc is not None else None
    chunk.line_start, chunk.line_end = rows.first + 1, rows.last + 1
    chunk.parse_errors = member.node.has_error
    scope = _scope(unit, info, owner_nested, unqualified)
    parts = tuple(Part(span, *unit.calls.calls_in(span, rows, scope)) for span in _parts(unit, rows, member.body))
    if routing is not None and member.kind != PRIMARY:
        parts = _routed(unit, member, owner_nested, scope, parts, routing, chunk)
    if not chunk.outbound and member.kind != PRIMARY:
        parts = _with_outbound(unit, member, info, parts, scope)
        chunk.outbound = parts[0].outbound if len(parts) == 1 else ()
    chunk.calls, chunk.calls_fq = (parts[0].calls, parts[0].calls_fq) if len(parts) == 1 else ((), ())
    chunk.code = unit.code(rows) if len(parts) == 1 else ""
    key = f"{owner_nested}.{name}({','.join(chunk.parameter_types)})"
    return Draft(key, chunk, parts if len(parts) > 1 else ())


def _routing(unit: FileUnit, found: KFile) -> Routing:
    named = {info.node.id: unit.qualified(info.nested_name) for info in found.types}
    handlers = {(named[i.node.id], m.name) for i in found.types for m in i.members if m.kind == FUNCTION}
    return Routing(frozenset(handlers), {})


def _routed(
    unit: FileUnit, member: KMember, owner_nested: str, scope: CallScope, parts: tuple[Part, ...], routing: Routing,
    chunk: Chunk,
) -> tuple[Part, ...]:  # fmt: skip
    """A router function's routes, stored by the rule both languages share (`pipeline.routes.place`)."""
    pattern = Scope(unit.constants(), {}, NO_VALUES).pieces
    routes, _ = read_routes(member.node, lambda node: spelt_out(pattern(node)))
    calls_in = partial(_calls_in, unit, scope)
    placed = place(routes, lambda h: _handler_of(unit, h, member, scope, owner_nested), routing, parts, calls_in)
    if placed is None:
        return parts
    _set(chunk, "http_method", placed.verbs)  # a draft's chunk is being filled
    _set(chunk, "http_path", placed.paths)
    return placed.parts


def _calls_in(
    unit: FileUnit, scope: CallScope, span: tuple[int, int], rows: tuple[int, int]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return unit.calls.calls_in(span, rows, scope)


def _handler_of(
    unit: FileUnit, handler: Handler, member: KMember, scope: CallScope, owner: str
) -> tuple[str, str] | None:
    """The (qualified type, function) a route's method reference names, when the file tells its type."""
    receiver = handler.receiver
    if not receiver:
        return unit.qualified(owner), handler.name
    kind = next((p.simple for p in member.params if p.name == receiver), None) or scope.fields.get(receiver)
    kind = kind or (receiver if receiver[:1].isupper() else None)
    fq = unit.imports.resolve(kind) if kind else None
    return (fq, handler.name) if fq else None


_set = object.__setattr__


def _with_outbound(
    unit: FileUnit, member: KMember, info: KType | None, parts: tuple[Part, ...], scope: CallScope
) -> tuple[Part, ...]:
    """The parts with the HTTP client calls made on their rows (`pipeline.kotlin.http`), read only when called."""
    if not any(wants_arguments(p.calls) for p in parts) or not unit.http_clients():
        return parts
    known = enclosing_values(info, unit.field_values())
    found = http_calls(member.node, Scope(unit.constants(), scope.fields, known))
    if not found:
        return parts
    return tuple(
        p._replace(outbound=tuple(dict.fromkeys(r.encode() for row, r in found if p.rows.first <= row <= p.rows.last)))
        for p in parts
    )


def _scope(unit: FileUnit, info: KType | None, owner_nested: str, unqualified: Unqualified) -> CallScope:
    """What a member's body sees: its type's properties and primary constructor parameters, by simple type.

    An unqualified call resolves through `unqualified`: the type's own functions, the file's top-level ones,
    imports, and candidates for another file's top-level function (`pipeline.calls.Unqualified`).
    """
    fields = {p.name: p.simple for m in (info.members if info is not None else ()) if m.kind in (PRIMARY, PROPERTY)
              for p in m.params if p.simple}  # fmt: skip
    superclass = info.extends[0] if info is not None and info.extends else None
    name = owner_nested.rsplit(".", 1)[-1]
    return CallScope(
        type_name=name, superclass=superclass, fields=fields, imports=unit.imports, unqualified=unqualified
    )


def _parts(unit: FileUnit, rows: LineSpan, body: Node | None) -> list[LineSpan]:
    """One part when the member fits the token budget; else the Java splitter's parts over the Kotlin block."""
    budget = unit.config.max_chunk_tokens
    if body is None or estimate_tokens(unit.code(rows)) <= budget:
        return [rows]
    nodes: dict[int, Node] = {}

    def span(node: Node) -> Span:
        nodes[node.id] = node
        start, end = node.start_point.row, node.end_point.row
        return Span(node.type, None, node.start_byte, node.end_byte, start, end, (node.id,))

    def inner(of: Span) -> list[Span]:
        return [span(c) for c in nodes[of.path[0]].named_children]

    spans: Callable[[Span], Sequence[Span]] = inner
    return split_rows(rows, span(body), spans, unit.lines, budget)


def _type_chunk(unit: FileUnit, info: KType, stereotype: str | None, members: list[Draft]) -> Draft:
    qualified = unit.qualified(info.nested_name)
    annotations = info.modifiers.annotations
    injects = tuple(dict.fromkeys(t for d in members for t in d.chunk.injects))
    node = info.node
    rows = LineSpan((info.doc or node).start_point.row, node.end_point.row)
    chunk = unit.blank_chunk()
    chunk.qualified_name = qualified
    chunk.symbol_type = info.kind
    chunk.name = info.name
    chunk.signature = _head(unit, info)
    chunk.enclosing_type = qualified.rsplit(".", 1)[0] if info.outer is not None else None
    keywords = info.modifiers.keywords  # `object` and `companion object` are kinds of class: say which
    chunk.modifiers = (*keywords, *(k for k in info.keyword.split() if k in _OBJECT_WORDS and k not in keywords))
    chunk.annotations = tuple(a.text for a in annotations)
    chunk.annotation_names = tuple(a.name for a in annotations)
    chunk.stereotype = stereotype
    unaliased = unit.imports.unaliased
    chunk.extends, chunk.implements = tuple(map(unaliased, info.extends)), tuple(map(unaliased, info.implements))
    chunk.extends_fq, chunk.implements_fq = unit.resolve_all(info.extends), unit.resolve_all(info.implements)
    chunk.injects = injects  # its members' (an alias written as the name it stands for), resolved as they were
    chunk.injects_fq = tuple(dict.fromkeys(t for d in members for t in d.chunk.injects_fq))
    chunk.javadoc_summary = summarize(text(info.doc)) if info.doc is not None else None
    chunk.line_start, chunk.line_end = rows.first + 1, rows.last + 1
    chunk.parse_errors = node.has_error
    chunk.code = _skeleton(unit, info)
    return Draft(f"type:{info.nested_name}", chunk)


def _head(unit: FileUnit, info: KType) -> str:
    """The declaration up to its body, annotations left out: `data class Owner(val id: Int) : Person()`."""
    node = info.node
    mods = next((c for c in node.named_children if c.type == "modifiers"), None)
    start = mods.end_byte if mods is not None and info.modifiers.annotations else node.start_byte
    end = info.body.start_byte if info.body is not None else node.end_byte
    return squash(unit.between(start, end))


def _skeleton(unit: FileUnit, info: KType) -> str:
    """KDoc, annotations and declaration, then each member's declaration with its body elided."""
    node = info.node
    start = (info.doc or node).start_byte
    if info.body is None:
        return unit.between(start, node.end_byte)
    lines = [unit.between(start, info.body.start_byte).rstrip() + " {"]
    for each in info.body.named_children:
        shown = _member_line(unit, each)
        if shown:
            lines.append(_INDENT + (shown if len(shown) <= _MAX_LINE else shown[:_MAX_LINE] + " ..."))
    lines.append("}")
    return "\n".join(lines)


def _member_line(unit: FileUnit, node: Node) -> str:
    if node.type in ("line_comment", "block_comment"):
        return ""
    body = next((c for c in node.named_children if c.type in _BODIES), None)
    if body is None:
        return squash(text(node))
    return squash(unit.between(node.start_byte, body.start_byte)) + _ELIDED


_BODIES = frozenset(
    {"function_body", "class_body", "enum_class_body", "block", "getter", "setter", "property_delegate"}
)


def _broken(unit: FileUnit, pieces: list[Piece]) -> Iterator[Skipped]:
    """The top-level pieces that did not parse (`pipeline.kotlin.recovery`): in no chunk."""
    for piece in pieces:
        snippet = " ".join(unit.between(piece.start, piece.end).split())[:60]
        yield Skipped(
            file_path=unit.file_path, reason=SkipReason.SYNTAX_ERROR, detail=f"unparsable code: {snippet}",
            line_start=piece.first_row + 1, line_end=piece.last_row + 1,
        )  # fmt: skip


def _syntax_gaps(root: Node, found: KFile, file_path: str) -> Iterator[Skipped]:
    """Code tree-sitter could not place in any declaration: it is in no chunk (or in one marked), so say so."""
    if not root.has_error:
        return
    if not found.types and not found.top_level:
        yield Skipped(
            file_path=file_path, reason=SkipReason.SYNTAX_ERROR, detail="no declaration could be parsed",
            line_start=1, line_end=root.end_point.row + 1,
        )  # fmt: skip
        return
    for node in error_nodes(root):
        snippet = " ".join(text(node).split())[:60] or f"missing {node.type}"
        yield Skipped(
            file_path=file_path, reason=SkipReason.SYNTAX_ERROR, detail=f"unparsable code: {snippet}",
            line_start=node.start_point.row + 1, line_end=node.end_point.row + 1,
        )  # fmt: skip
