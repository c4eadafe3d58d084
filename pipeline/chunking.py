"""From one Java file to its chunks: a type skeleton per type, a chunk per method and constructor.

`chunk_source` is the pipeline's entry point: bytes in, a `FileResult` out, never an exception for
bad input. Lambdas and anonymous classes stay inside their enclosing method; methods of nested,
inner, local and enum-constant classes get chunks of their own named `Outer.Inner.method`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache, partial

from tree_sitter import Node, Tree

from pipeline.calls import CallScope, FileCalls
from pipeline.config_files import chunk_config, is_config_file
from pipeline.config_keys import ConfigEntry
from pipeline.config_reads import keyed, member_reads, reads_config, type_reads
from pipeline.declarations import TypeInfo, declared_types, find_types
from pipeline.drafts import Draft, FileUnit, Part, finish
from pipeline.field_values import enclosing_values, file_field_values
from pipeline.generated import mark_generated
from pipeline.http_calls import file_constants, http_calls, mentions_clients, spelt, wants_arguments
from pipeline.java_routes import declares_routers, may_route, read_routes
from pipeline.javadoc import summarize
from pipeline.members import Member, member_name, parameter_types, read_members, signature
from pipeline.model import ChunkerConfig, FileResult, Skipped, SkipReason, SourceContext, SymbolType
from pipeline.native import Parsed, read_outline
from pipeline.outbound import Client, client_of, declared_routes
from pipeline.outline import CONSTRUCTOR_NODE_KINDS, MemberDecl
from pipeline.render import chunk_id_prefix, repo_key
from pipeline.routes import Handler, Placed, Routing, attribute, place
from pipeline.skeleton import type_chunk
from pipeline.source import decode_source
from pipeline.splitting import LineSpan, estimate_tokens, split_rows
from pipeline.spring import EXCHANGE_ANNOTATIONS
from pipeline.syntax import node_at, text
from pipeline.types import read_imports

_NO_METHOD_FILES = ("package-info.java", "module-info.java")
# Lombok's logger annotations and the type of the `log` field each generates (Lombok docs, @Log).
_LOMBOK_LOGGERS = {
    "Slf4j": ("Logger", "org.slf4j.Logger"),
    "XSlf4j": ("XLogger", "org.slf4j.ext.XLogger"),
    "Log4j": ("Logger", "org.apache.log4j.Logger"),
    "Log4j2": ("Logger", "org.apache.logging.log4j.Logger"),
    "CommonsLog": ("Log", "org.apache.commons.logging.Log"),
    "Log": ("Logger", "java.util.logging.Logger"),
    "JBossLog": ("Logger", "org.jboss.logging.Logger"),
    "Flogger": ("FluentLogger", "com.google.common.flogger.FluentLogger"),
}


def chunk_source(raw: bytes, file_path: str, context: SourceContext, config: ChunkerConfig) -> FileResult:
    """Chunk one Java file (or Spring configuration file). Bad input comes back as `Skipped` entries, never raised."""
    if is_config_file(file_path, config):
        return chunk_config(raw, file_path, context, config)
    decoded = decode_source(raw, file_path, config)
    if isinstance(decoded, Skipped):
        return FileResult(file_path=file_path, skipped=(decoded,))
    parsed = read_outline(decoded.data)
    outline, tree = parsed.outline, parsed.tree
    package = outline.package
    types = list(find_types(outline.types))
    unit = FileUnit(
        context=context,
        file_path=file_path,
        package=package,
        imports=read_imports(outline.imports, declared_types(types, package), package),
        data=decoded.data,
        lines=decoded.data.decode("utf-8").split("\n"),
        calls=FileCalls(outline.calls, outline.decls),
        config=config,
        id_prefix=chunk_id_prefix(repo_key(context.repo_path, context.gitlab_project_id), file_path),
        constants=cache(lambda: file_constants(tree().root_node, decoded.data)),
        field_values=cache(lambda: file_field_values(tree().root_node, decoded.data)),
        http_clients=cache(partial(mentions_clients, decoded.data)),
    )
    with_methods = not file_path.endswith(_NO_METHOD_FILES)
    configured = reads_config(decoded.data)
    routing = _routing(unit, types) if with_methods and declares_routers(decoded.data) else None
    drafts: list[Draft] = []
    for info in types:
        members = read_members(info)
        outer = types[info.decl.outer] if info.decl.outer >= 0 else None
        drafts.append(type_chunk(unit, info, outer, members))
        if configured:
            _set_config(drafts[-1], type_reads(info.modifiers.annotations, info.fields))
        if with_methods:
            exchanges = any(m.http_path and m.decl.modifiers.has(*EXCHANGE_ANNOTATIONS) for m in members)
            client = client_of(info.modifiers, info.kind is SymbolType.INTERFACE, exchanges)
            scope = _scope(unit, info, types)
            drafts.extend(_member_drafts(unit, parsed, info, members, scope, client, configured, routing))
    if routing is not None:
        attribute(drafts, routing.attributed)
    return FileResult(
        file_path=file_path,
        chunks=mark_generated(unit.lines, finish(unit, drafts)),
        skipped=tuple(_syntax_gaps(tree().root_node, types, file_path)) if outline.has_error else (),
        encoding=decoded.encoding,
        parse_errors=outline.has_error,
    )


def _scope(unit: FileUnit, info: TypeInfo, types: list[TypeInfo]) -> CallScope:
    # An inner class sees the fields of its enclosing classes; its own fields shadow theirs.
    chain = [info]
    while (outer := chain[-1].decl.outer) >= 0:
        chain.append(types[outer])
    fields: dict[str, str] = {}
    known_fq: dict[str, str] = {}
    for each in reversed(chain):
        logger = next((_LOMBOK_LOGGERS[a.name] for a in each.modifiers.annotations if a.name in _LOMBOK_LOGGERS), None)
        if logger is not None:  # the `log` field Lombok generates
            fields["log"], known_fq[logger[0]] = logger
        fields.update(each.field_types)
    superclass = info.extends[0] if info.extends and info.kind is SymbolType.CLASS else None
    return CallScope(type_name=info.name, superclass=superclass, fields=fields, imports=unit.imports, known_fq=known_fq)


def _member_drafts(
    unit: FileUnit,
    parsed: Parsed,
    info: TypeInfo,
    members: list[Member],
    scope: CallScope,
    client: tuple[Client, str | None] | None,
    configured: bool,
    routing: Routing | None,
) -> Iterator[Draft]:
    # Bodiless ones too (interface, abstract and repository methods, Feign endpoints, annotation
    # elements): a chunk of their own, findable by name, annotation and route; the skeleton still lists them.
    for member in members:
        draft = _callable_draft(unit, parsed, info, member, scope, client, routing)
        if configured:  # the whole method's source: a split method's parts copy the fields
            decl = member.decl
            _set_config(draft, member_reads(decl.modifiers.annotations, unit.between(decl.start, decl.end)))
        yield draft


def _set_config(draft: Draft, entries: list[ConfigEntry]) -> None:
    """The draft's `config_keys` and `config` fields from the configuration it reads (issue 29)."""
    if entries:
        keys, config = keyed(entries)
        _set(draft.chunk, "config_keys", keys)  # a draft's chunk is still being filled
        _set(draft.chunk, "config", config)


_set = object.__setattr__


def _callable_draft(
    unit: FileUnit,
    parsed: Parsed,
    info: TypeInfo,
    member: Member,
    scope: CallScope,
    client: tuple[Client, str | None] | None,
    routing: Routing | None = None,
) -> Draft:
    decl = member.decl
    name = member_name(decl)
    types = parameter_types(decl)
    has_doc = decl.doc_start >= 0
    rows = LineSpan(decl.doc_row if has_doc else decl.start_row, decl.end_row)
    owner = unit.qualified(decl.owner)
    modifiers = decl.modifiers
    annotations = modifiers.annotations
    calls_in = unit.calls.calls_in
    # `size` bytes can never hold more than size/3 estimated tokens: most methods are one part.
    if (decl.end - (decl.doc_start if has_doc else decl.start) + 2) // 3 <= unit.config.max_chunk_tokens:
        parts: tuple[Part, ...] = (Part(rows, *calls_in(rows, rows, scope)),)
    else:
        parts = tuple(Part(span, *calls_in(span, rows, scope)) for span in _part_rows(unit, parsed, rows, decl))
    routes = None
    if routing is not None and may_route(unit.data[decl.start : decl.end]):
        routes = _routed(unit, parsed.tree, decl, scope, parts, routing)
        parts = routes.parts if routes is not None else parts
    parts = _with_outbound(unit, parsed.tree, member, parts, scope, client)
    one = parts[0] if len(parts) == 1 else Part(rows, (), ())
    chunk = unit.blank_chunk()  # `Chunk(...)` with 37 keywords costs 15 times as much (`pipeline._values.blank`)
    chunk.qualified_name = f"{owner}.{name}"
    chunk.symbol_type = SymbolType.CONSTRUCTOR if decl.kind in CONSTRUCTOR_NODE_KINDS else SymbolType.METHOD
    chunk.name = name
    chunk.signature = signature(decl)
    chunk.enclosing_type = owner
    chunk.parameter_types = types
    chunk.modifiers = modifiers.keywords
    chunk.annotations = tuple(a.text for a in annotations) if annotations else ()
    chunk.annotation_names = tuple(a.name for a in annotations) if annotations else ()
    chunk.stereotype = info.stereotype
    chunk.http_method = member.http_method if routes is None else routes.verbs
    chunk.http_path = member.http_path if routes is None else routes.paths
    chunk.routes_if_mapping = member.routes_if_mapping
    chunk.outbound = one.outbound
    chunk.calls = one.calls
    chunk.injects = member.injects
    chunk.calls_fq = one.calls_fq
    chunk.injects_fq = unit.resolve_all(member.injects)
    chunk.injects_if_bean = member.injects_if_bean
    chunk.injects_if_bean_fq = unit.resolve_all(member.injects_if_bean)
    chunk.javadoc_summary = summarize(unit.between(decl.doc_start, decl.doc_end)) if has_doc else None
    chunk.line_start = rows.first + 1
    chunk.line_end = rows.last + 1
    chunk.parse_errors = decl.has_error
    chunk.code = unit.code(rows) if len(parts) == 1 else ""
    return Draft(f"{decl.owner}.{name}({','.join(types)})", chunk, parts if len(parts) > 1 else ())


def _routing(unit: FileUnit, types: list[TypeInfo]) -> Routing:
    """A router file's handlers: every method its types declare, by (qualified type, name)."""
    return Routing(
        frozenset((unit.qualified(m.decl.owner), member_name(m.decl)) for i in types for m in read_members(i)), {}
    )


def _routed(
    unit: FileUnit, tree: Callable[[], Tree], decl: MemberDecl, scope: CallScope, parts: tuple[Part, ...],
    routing: Routing,
) -> Placed | None:  # fmt: skip
    """A method's functional routes (`pipeline.java_routes`), stored by the rule Kotlin's share (`routes.place`)."""
    method = node_at(tree().root_node, decl.start, decl.end, decl.kind)
    routes, _ = read_routes(method, lambda node: spelt(node, unit.data, unit.constants()))
    if not routes:
        return None
    params = {p.name: p.simple for p in decl.params}

    def target(handler: Handler) -> tuple[str, str] | None:
        receiver = handler.receiver
        if not receiver:
            return unit.qualified(decl.owner), handler.name
        kind = params.get(receiver) or scope.fields.get(receiver) or (receiver if receiver[:1].isupper() else None)
        fq = unit.imports.resolve(kind) if kind else None
        return (fq, handler.name) if fq else None

    return place(routes, target, routing, parts, lambda span, rows: unit.calls.calls_in(span, rows, scope))


def _with_outbound(
    unit: FileUnit,
    tree: Callable[[], Tree],
    member: Member,
    parts: tuple[Part, ...],
    scope: CallScope,
    client: tuple[Client, str | None] | None,
) -> tuple[Part, ...]:
    """The parts with their outbound HTTP calls: a declared client's own routes, else its body's client calls.

    Only a method whose outline calls name an HTTP client method is read again from the tree.
    """
    if client is not None and member.http_path:
        routes = declared_routes(client[0], client[1], member.http_method, member.http_path)
        return tuple(p._replace(outbound=routes) for p in parts)
    # The calls first: few methods call an HTTP client method, and the file is scanned once, only for them.
    if not any(wants_arguments(p.calls) for p in parts) or not unit.http_clients():
        return parts
    decl = member.decl
    method = node_at(tree().root_node, decl.start, decl.end, decl.kind)
    known = enclosing_values(method, unit.field_values())
    found = http_calls(method, unit.data, unit.constants(), scope.fields, known)
    if not found:
        return parts
    return tuple(
        p._replace(outbound=tuple(dict.fromkeys(r.encode() for row, r in found if p.rows.first <= row <= p.rows.last)))
        for p in parts
    )


def _part_rows(unit: FileUnit, parsed: Parsed, rows: LineSpan, decl: MemberDecl) -> list[LineSpan]:
    """Rows of each part of a method that may be over the budget: one part when it fits, else the splitter's."""
    budget = unit.config.max_chunk_tokens
    if estimate_tokens("\n".join(unit.lines[rows.first : rows.last + 1])) <= budget:
        return [rows]
    inner = parsed.children(parsed.locate(decl.start, decl.end, decl.kind))
    # A static initializer's block is its last named child; everything else has a `body` field.
    if decl.kind == "static_initializer":
        body = inner[-1] if inner else None
    else:
        body = next((c for c in inner if c.field == "body"), None)
    return split_rows(rows, body, lambda s: parsed.children(s.path), unit.lines, budget) if body is not None else [rows]


def _syntax_gaps(root: Node, types: list[TypeInfo], file_path: str) -> Iterator[Skipped]:
    """Code that tree-sitter could not place in any declaration: it is in no chunk, so say so."""
    if root.has_error and not types:
        yield Skipped(
            file_path=file_path,
            reason=SkipReason.SYNTAX_ERROR,
            detail="no type declaration could be parsed",
            line_start=1,
            line_end=root.end_point.row + 1,
        )
        return
    containers = [root] if root.has_error else []
    for info in types:
        if info.decl.body_error:
            body = node_at(root, info.decl.start, info.decl.end, info.decl.kind).child_by_field_name("body")
            containers.extend(() if body is None else (body,))
    for container in containers:
        for child in container.named_children:
            if child.type == "ERROR":
                snippet = " ".join(text(child).split())[:60]
                yield Skipped(
                    file_path=file_path,
                    reason=SkipReason.SYNTAX_ERROR,
                    detail=f"unparsable code: {snippet}",
                    line_start=child.start_point.row + 1,
                    line_end=child.end_point.row + 1,
                )
