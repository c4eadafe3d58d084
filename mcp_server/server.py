"""The MCP server: thin tools over the shared search module, each answering with cited code.

`create_server(get_deps, auth)` builds the FastMCP server; `get_deps` returns the running process's `Deps` (the web
app's lifespan fills it). Every tool reads with the caller's `Access` (its verified token, `mcp_server.auth`): a
repository the caller cannot read answers exactly as one that does not exist. Without `auth` (in-memory transport)
tools read with `unauthenticated`, and refuse when that is None. Tools raise `ToolError` with a message for the model
(unknown repository, nothing indexed, a bad filter), logged at INFO (`miss`: a miss is not a server error); anything
else is masked and logged as an error. Messages and headers echo at most `ECHO_CHARS` of the caller's input. Every
answer is a page (`mcp_server.render`) whose structured content has its output schema's shape (`mcp_server.schemas`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.auth import AuthProvider
from fastmcp.tools import ToolResult
from pydantic import Field

from app.auth.access import Access
from app.core.errors import PayloadError
from app.libraries.usage import with_users
from app.runtime import Deps
from app.search.endpoints import asked_route
from app.search.hits import Hit, SetWindow
from app.search.links import EndpointLinks
from app.search.near import missing_names, near_symbols, said_missing
from app.search.scoping import SearchScope
from app.search.service import SearchService
from mcp_server.arguments import TextArguments
from mcp_server.auth import caller_access
from mcp_server.code_tools import CodeTools
from mcp_server.config_tools import add_config_tools
from mcp_server.context_tools import ContextTools
from mcp_server.grep_tool import GrepTools
from mcp_server.instructions import INSTRUCTIONS, tool_description
from mcp_server.library_tools import LibraryTools
from mcp_server.render import echo, render_hits
from mcp_server.schemas import (
    CalleesAnswer,
    CallersAnswer,
    CodeAnswer,
    ContextAnswer,
    EndpointAnswer,
    GrepAnswer,
    HitsAnswer,
    ImpactAnswer,
    IndexStatusAnswer,
    InjectionsAnswer,
    LibraryUsagesAnswer,
    MethodCallersAnswer,
    OutlineAnswer,
    RefreshAnswer,
    ReposAnswer,
    output_schema,
)
from mcp_server.status_tools import StatusTools
from mcp_server.timing import ToolTiming
from mcp_server.tool_pages import (
    call_site_notes,
    callers_by_type_page,
    candidates_said,
    cite,
    cited_place,
    lines_page,
    match_notes,
    repo_item,
    route_header,
    set_page,
    set_window_page,
    shows_within,
    targets_page,
    tool_result,
)
from mcp_server.tool_params import (
    CALLER,
    EVERYWHERE,
    FIRST_PAGE,
    FIRST_SET_PAGE,
    HttpMethod,
    Language,
    MethodName,
    OneRepo,
    Page,
    Repo,
    ScopeArg,
    SetPage,
    TypeName,
    Where,
    bad_language,
    flat,
)
from pipeline.model import SYMBOL_TYPES

MISS = logging.INFO
"""The log level of a tool's refusal or miss (unknown name, bad argument): the caller's business, not an error."""
_ANSWERS: dict[str, type[Any]] = {
    "get_callers": MethodCallersAnswer,
    "list_repos": ReposAnswer,
    "get_callees": CalleesAnswer,
    "find_injections": InjectionsAnswer,
    "get_file_outline": OutlineAnswer,
    "find_endpoint": EndpointAnswer,
    "find_endpoint_callers": CallersAnswer,
}


def create_server(
    get_deps: Callable[[], Deps], auth: AuthProvider | None = None, *, unauthenticated: Access | None = None
) -> FastMCP:
    """The FastMCP server with every tool registered (in a stable order), each with its output schema."""
    mcp = FastMCP("java-kb", instructions=INSTRUCTIONS, auth=auth, mask_error_details=True)
    tools = KnowledgeTools(get_deps, authenticated=auth is not None, unauthenticated=unauthenticated)
    status = StatusTools(get_deps, tools.access)
    libraries = LibraryTools(get_deps, tools.access)
    code = CodeTools(get_deps, tools.access)
    grep = GrepTools(tools.search_in)
    context = ContextTools(tools.search_in)
    names: list[str] = []

    def add(tool: Callable[..., Any], answer: type[Any], **annotations: bool) -> None:
        hints = annotations or {"readOnlyHint": True}
        mcp.tool(flat(tool), annotations=hints, description=tool_description(tool), output_schema=output_schema(answer))
        names.append(tool.__name__)

    for tool in (
        tools.semantic_search,
        tools.get_symbol,
        tools.list_repos,
        tools.find_by_annotation,
        tools.get_callers,
        tools.get_callees,
        tools.find_endpoint,
        tools.find_endpoint_callers,
        tools.find_injections,
        tools.find_implementations,
        tools.get_file_outline,
    ):
        add(tool, _ANSWERS.get(tool.__name__, HitsAnswer))
    add(status.index_status, IndexStatusAnswer)
    add(status.refresh_repo, RefreshAnswer, readOnlyHint=False, idempotentHint=True, destructiveHint=False)
    add(context.auto_context, ContextAnswer)
    add(libraries.find_library_usages, LibraryUsagesAnswer)
    add(code.read_code, CodeAnswer)
    add(code.impact, ImpactAnswer)
    add(grep.exact_search, GrepAnswer)
    add_config_tools(add, get_deps, tools.access)
    mcp.add_middleware(ToolTiming(frozenset(names)))  # every registered tool by name; anything else is `unknown`
    mcp.add_middleware(TextArguments())
    return mcp


def miss(message: str) -> ToolError:
    """A refusal or a miss, told to the model and logged at `MISS` (fastmcp logs a ToolError at its level)."""
    return ToolError(message, log_level=MISS)


class KnowledgeTools:
    """The tools, each a thin call into the shared search module."""

    def __init__(self, get_deps: Callable[[], Deps], *, authenticated: bool, unauthenticated: Access | None) -> None:
        self.get_deps = get_deps
        self._authenticated = authenticated
        self._unauthenticated = unauthenticated

    def access(self) -> Access:
        """The caller's access; a `ToolError` when there is none."""
        return self._access()

    def _access(self) -> Access:
        access = caller_access(authenticated=self._authenticated)
        if access is None and not self._authenticated:
            access = self._unauthenticated
        if access is None:
            raise miss("Unauthorized.")
        return access

    async def search_in(self, where: Where) -> tuple[SearchService, Access]:
        """The search module within `where` and the caller's access (`_search`), for the tools of other modules."""
        return await self._search(where)

    async def _search(self, where: Where) -> tuple[SearchService, Access]:
        """The search module within `where.scope` and the caller's access, once `where.repo` (if any) is readable."""
        repo, scope = where.repo, where.scope
        if (bad := bad_language(where.language)) is not None:
            raise miss(bad)
        deps = self.get_deps()
        access = self._access()
        search = deps.search.within(SearchScope(scope))
        repos = await search.repositories(access) or await search.repositories(access, fresh=True)
        if not repos:
            if scope == SearchScope.LIBRARIES:
                raise miss("No library is indexed: find_library_usages tells whether a library's sources were found.")
            raise miss("Nothing is indexed yet: no repository has been synced. Try again after the first sync.")
        if repo and not repo.endswith("/") and not await search.knows_repository(access, repo):
            listed = ", ".join(sorted(await search.repositories(access))[:50])
            raise miss(f"Unknown repository {echo(repo)!r}. Indexed: {listed}")
        return search, access

    async def _set_page(
        self, access: Access, search: SearchService, found: SetWindow, title: str, page: SetPage, excerpt_lines: int,
        exact: Sequence[str] | None = None,
    ) -> ToolResult:  # fmt: skip
        """A set answer's page from its window: only the shown members become hits; a scan that stopped says so.

        `exact`: a callers answer's `calls_fq` keys, each caller marked by whether it matched one (`match_notes`).
        """
        capped = f" (the scan stopped at {found.total}: narrow with repo or path_prefix for the rest)"
        header = f"{title}{capped if found.scanned else ''}:"
        window = await self._users(access, search.hits_of(found.members))
        notes = None if exact is None else match_notes(window, exact)
        args = (window, found.total, header, page.offset, page.code, page.max_chars)
        return tool_result(set_window_page(*args, excerpt_lines=excerpt_lines, notes=notes))

    async def _users(self, access: Access, hits: Sequence[Hit]) -> list[Hit]:
        """The hits, those on library code with the readable projects that use their version."""
        return await with_users(self.get_deps().db, access, hits)

    async def _hits_page(
        self, access: Access, hits: Sequence[Hit], header: str, page: SetPage, *, excerpt_lines: int | None,
        **extra: Any,
    ) -> ToolResult:  # fmt: skip
        """A set answer's page of `hits` (with their users), `extra` added to its data."""
        shown = await self._users(access, hits)
        rendered = set_page(shown, header, page.offset, page.code, page.max_chars, excerpt_lines=excerpt_lines)
        return tool_result(rendered, **extra)

    async def semantic_search(
        self,
        query: Annotated[str, Field(description="What you are looking for, in words or identifiers.")],
        where: Where = EVERYWHERE,
        symbol_type: Annotated[str | None, Field(description="method, constructor, method_part, class, ...")] = None,
        stereotype: Annotated[str | None, Field(description="service, repository, rest_controller, ...")] = None,
        annotation: Annotated[str | None, Field(description="Annotation simple name, e.g. Transactional.")] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="How many ranked results, offset included.")] = 10,
        page: Page = FIRST_PAGE,
    ) -> ToolResult:
        """Hybrid (meaning + keyword) search over all indexed Java code; the first tool for a question in words.

        Example: semantic_search(query="where are owners reminded about upcoming visits", stereotype="component")
        """
        if symbol_type and symbol_type not in SYMBOL_TYPES:
            raise miss(f"Bad symbol_type {symbol_type!r}; use one of {', '.join(sorted(SYMBOL_TYPES))}.")
        search, access = await self._search(where)
        filters = dataclasses.replace(
            where.looked_in.as_filters(), symbol_type=symbol_type, stereotype=stereotype, annotation=annotation
        )
        try:
            hits = await search.search(access, query, filters, limit)
        except PayloadError as exc:
            raise miss(str(exc)) from exc  # the refusal `app.search.query_limits` words for every interface
        missing = await missing_names(search, access, query, filters, hits)  # said first: issue 28
        header = f"{said_missing(missing)}Results for {echo(query)!r}:"
        hits = await self._users(access, hits)
        extra = {"missing": missing} if missing else {}
        return tool_result(render_hits(hits, budget=page.max_chars, header=header, offset=page.offset), extra)

    async def get_symbol(
        self,
        name: Annotated[str, Field(description="Qualified or simple name; add (Types) to pick an overload.")],
        where: Where = EVERYWHERE,
        page: Page = FIRST_PAGE,
    ) -> ToolResult:
        """The full code and metadata of a method or type; every overload when the name is ambiguous.

        Example: get_symbol(name="OwnerService.find") or get_symbol(name="com.acme.shop.core.service.OwnerService")
        """
        search, access = await self._search(where)
        hits = await search.symbol(access, name, where.looked_in)
        if not hits:
            near = await near_symbols(search, access, name, where.looked_in.as_filters())
            offer = f" Near names: {', '.join(near)}." if near else " No indexed name is near it."
            raise miss(f"No symbol named {echo(name)!r}.{offer} Try semantic_search with the name in words.")
        hits = await self._users(access, hits)
        return tool_result(render_hits(hits, budget=page.max_chars, excerpt_lines=None, offset=page.offset))

    async def list_repos(self, scope: ScopeArg = SearchScope.CODE, page: Page = FIRST_PAGE) -> ToolResult:
        """Indexed repositories with default branch, indexed commit, time, chunk counts and sync status.

        `chunks` counts every chunk; `generated_chunks` how many of them a code generator wrote.
        Example: list_repos()
        """
        deps = self.get_deps()
        access = self._access()
        search = deps.search.within(SearchScope(scope))
        counts = await search.repositories(access)
        generated = await search.generated_counts(access) if counts else {}
        projects = await deps.db.projects() if deps.db is not None and scope != SearchScope.LIBRARIES else []
        rows = {r.repo_path: r for r in projects if access.may_read(r.repo_path, r.id)}
        items = [
            repo_item(path, counts.get(path, 0), generated.get(path, 0), rows.get(path))
            for path in sorted(set(counts) | set(rows))
        ]
        if not items:
            raise miss("Nothing is indexed yet: no repository has been synced.")
        lines = [
            f"{i['repo']}  branch={i['default_branch']} sha={(i['indexed_sha'] or '-')[:12]} "
            f"chunks={i['chunks']} (generated {i['generated_chunks']}) status={i['status']}"
            + (f" error={i['last_error']}" if i["last_error"] else "")
            for i in items
        ]
        return tool_result(lines_page(lines, items, page.offset, page.max_chars))

    async def find_by_annotation(
        self,
        annotation: Annotated[str, Field(description="Annotation name, with or without @ and arguments.")],
        where: Where = EVERYWHERE,
        page: SetPage = FIRST_SET_PAGE,
    ) -> ToolResult:
        """Every type or method carrying an annotation: one line each, the first few with code.

        Example: find_by_annotation(annotation="@Transactional")
        or find_by_annotation(annotation="GetMapping", path_prefix="mall-admin")
        """
        search, access = await self._search(where)
        shows = shows_within(page.max_chars)
        found = await search.annotation_window(access, annotation, where.looked_in, page.offset, shows)
        return await self._set_page(access, search, found, f"Carrying {echo(annotation)}", page, 8)

    async def get_callers(
        self, name: MethodName, where: Where = EVERYWHERE, page: SetPage = FIRST_SET_PAGE
    ) -> ToolResult:
        """Methods whose bodies call the named method (resolved through declared receiver types).

        A bare name several types declare (`getName`) is answered per declaring type, each caller marked.

        Example: get_callers(name="NotificationService.notifyOwner")
        """
        search, access = await self._search(where)
        declared = await search.declaring_types(access, name, where.repo)
        if len(declared) > 1:  # a bare name several types declare: per type, never one silent union (issue 28)
            groups = await search.callers_by_type(access, name, declared, where.looked_in)
            return tool_result(*callers_by_type_page(name, declared, groups, page.offset, page.code, page.max_chars))
        shows = shows_within(page.max_chars)
        found = await search.callers_window(access, name, where.looked_in, page.offset, shows)
        exact, _ = await search.call_keys(access, name, where.looked_in.in_repo())
        return await self._set_page(access, search, found, f"Callers of {echo(name)}", page, 12, exact)

    async def get_callees(self, name: MethodName, where: Where = EVERYWHERE, page: Page = FIRST_PAGE) -> ToolResult:
        """What the named method calls, each call with the indexed symbols it resolves to.

        Example: get_callees(name="OwnerController.findOwner")
        """
        search, access = await self._search(where)
        pairs = await search.callees(access, name, where.looked_in)
        if not pairs:
            raise miss(f"No method named {echo(name)!r}, or it calls nothing.")
        lines = [
            f"{call} -> " + (", ".join(cite(h) for h in hits) if hits else "(not indexed)") for call, hits in pairs
        ]
        items = [{"call": call, "targets": [h.citation() for h in hits]} for call, hits in pairs]
        return tool_result(lines_page(lines, items, page.offset, page.max_chars))

    async def find_endpoint(
        self,
        path: Annotated[
            str | None,
            Field(description="A path or pattern (/owners/42 matches /owners/{id}); GET /owners/42 and URLs are read."),
        ] = None,
        http_method: HttpMethod = None,
        where: Where = EVERYWHERE,
        page: SetPage = FIRST_SET_PAGE,
        caller: Annotated[str | None, Field(description=CALLER)] = None,
    ) -> ToolResult:
        """The handler (Spring MVC, JAX-RS) or Feign client method for an HTTP route, the likeliest first.

        With `caller` instead of `path`: the handlers in other services that a client call site reaches,
        each with its evidence (path, method, service name); `repo` then narrows where the caller is.
        Example: find_endpoint(path="/api/owners/42/pets/new", http_method="GET")
        or find_endpoint(caller="StatisticsServiceClient.updateStatistics")
        """
        if caller:
            search, access = await self._search(Where(where.repo))
            found = await EndpointLinks(search).targets(access, caller, where.repo)
            if not found.calls:
                raise miss(
                    f"{echo(caller)!r} makes no HTTP call the index knows of (no such method, or no client call)."
                )
            return tool_result(*targets_page(found, caller, page.offset, page.code, page.max_chars))
        if not path:
            raise miss("Give the route's path, or a client call site as caller.")
        search, access = await self._search(where)
        route = asked_route(path, http_method)
        hits = await search.endpoint(access, route.path, route.method, where.looked_in)
        header = f"Handlers of {route_header(route, path)}:"
        return await self._hits_page(access, hits, header, page, excerpt_lines=None)

    async def find_endpoint_callers(
        self,
        path: Annotated[
            str,
            Field(
                description="The path or pattern (/accounts/demo matches /accounts/{name}); GET /x and URLs are read."
            ),
        ],
        http_method: HttpMethod = None,
        repo: Repo = None,
        language: Language = None,
        page: SetPage = FIRST_SET_PAGE,
    ) -> ToolResult:
        """Who calls an HTTP endpoint from other services: client call sites across repositories.

        Feign and @HttpExchange client methods (each followed by the methods calling it), and RestTemplate,
        RestClient and WebClient calls whose URI the code fixes; `repo` and `language` narrow where the callers are.
        Example: find_endpoint_callers(path="/accounts/demo", http_method="GET")
        """
        search, access = await self._search(Where(repo, language=language))
        route = asked_route(path, http_method)
        sites = await EndpointLinks(search).callers(access, route.path, route.method, repo)
        sites = [s for s in sites if language is None or s.hit.chunk.language == language]
        header = f"Callers of {route_header(route, path)}{candidates_said(sites)}:"
        hits = [s.hit for s in sites]
        notes = call_site_notes(sites)
        return tool_result(
            set_page(hits, header, page.offset, page.code, page.max_chars, excerpt_lines=12, notes=notes)
        )

    async def find_injections(
        self, type: TypeName, where: Where = EVERYWHERE, page: SetPage = FIRST_SET_PAGE
    ) -> ToolResult:
        """Which classes receive a type by dependency injection, and what that type itself depends on.

        `path_prefix` narrows who receives it; what the type depends on is read from the type wherever it is.
        Example: find_injections(type="OwnerRepository")
        """
        search, access = await self._search(where)
        injectors = await search.injectors(access, type, where.looked_in)
        depends_on = await search.dependencies(access, type, where.repo)
        header = f"{echo(type)} depends on: {', '.join(depends_on) or 'nothing injected'}\nInjected into:"
        return await self._hits_page(access, injectors, header, page, excerpt_lines=6, depends_on=depends_on)

    async def find_implementations(
        self, type: TypeName, where: Where = EVERYWHERE, page: SetPage = FIRST_SET_PAGE
    ) -> ToolResult:
        """Classes, records and enums that implement an interface or extend a class, directly first, then below those.

        Example: find_implementations(type="PricingPolicy")
        """
        search, access = await self._search(where)
        hits = await search.implementations(access, type, where.looked_in)
        return await self._hits_page(access, hits, f"Implementations of {echo(type)}:", page, excerpt_lines=10)

    async def get_file_outline(
        self,
        repo: OneRepo,
        path: Annotated[str, Field(description="The file's path in the repository, as results cite it.")],
        scope: ScopeArg = SearchScope.CODE,
        page: Page = FIRST_PAGE,
    ) -> ToolResult:
        """Every type, method and constructor of one file, in line order, with signatures.

        Example: get_file_outline(repo="acme/shop", path="core/src/main/java/com/acme/OwnerService.java")
        """
        search, access = await self._search(Where(repo, scope))
        hits = await search.outline(access, repo, path)
        if not hits:
            raise miss(f"No indexed file {echo(path)!r} in {echo(repo)!r}.")
        lines = [
            f"{h.line_start:>5}-{h.line_end:<5} {h.symbol_type:<11} {h.signature}"
            + (" (generated)" * h.chunk.generated)
            for h in hits
        ]
        items = [{**h.citation(), "symbol_type": h.symbol_type, "generated": h.chunk.generated} for h in hits]
        header = cited_place(hits[0], f"{hits[0].repo_path}:{hits[0].file_path}")
        return tool_result(lines_page(lines, items, page.offset, page.max_chars, header=header))


__all__: Sequence[str] = ["create_server"]
