"""The parameters the tools share, each declared once with the description the model reads.

A tool takes the parameters it shares with others as one group (`Where`, `Page`, `SetPage`), a frozen
dataclass whose fields are the parameters; `flat(tool)` is the tool as FastMCP sees it, each group's
fields in the group's place as parameters of their own. So MCP clients see flat arguments
(`repo`, `scope`, `offset`...) while each tool's signature names each group once.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, fields, is_dataclass
from typing import Annotated, Any, get_type_hints

from fastmcp.tools import ToolResult
from pydantic import Field

from app.search import scoping
from app.search.scoping import SCOPE_HELP, SearchScope
from mcp_server.render import DEFAULT_BUDGET, SET_CODE_FIRST
from pipeline.model import LANGUAGES

Budget = Annotated[int, Field(ge=500, le=100_000, description="Output budget in characters; whole results are cut.")]

_REPO = "Repository path (group/project)"
_REPO_OR_GROUP = f"{_REPO}, or a group prefix ending in '/'"

Repo = Annotated[str | None, Field(description=f"{_REPO_OR_GROUP}.")]
"""A repository or a group of them, to narrow a search to."""

StatusRepo = Annotated[str | None, Field(description=f"{_REPO_OR_GROUP}; all when omitted.")]
"""A repository or a group of them, every readable one when omitted."""

OneRepo = Annotated[str, Field(description=f"{_REPO}.")]
"""Exactly one repository."""

PathPrefix = Annotated[
    str | None,
    Field(description="Only results under this folder or file of the repository, e.g. a Maven module: 'mall-admin'."),
]

Language = Annotated[
    str | None, Field(description=f"Only code in this language: {' or '.join(LANGUAGES)} (chunks carry theirs).")
]
"""A language to narrow an answer's code to (`pipeline.model.LANGUAGES`; checked where a search starts)."""


def bad_language(language: str | None) -> str | None:
    """What to tell a caller about a `language` the index does not know, None when it is known or not given."""
    if language and language not in LANGUAGES:
        return f"Bad language {language!r}; use one of {', '.join(LANGUAGES)}."
    return None


Offset = Annotated[int, Field(ge=0, description="Skip this many results: the next_offset of a previous answer.")]


Code = Annotated[bool, Field(description=f"Show every member's code, not only the first {SET_CODE_FIRST} members'.")]


MethodName = Annotated[str, Field(description="Method as Type.method, qualified, or a bare method name.")]


TypeName = Annotated[str, Field(description="A type's simple or qualified name.")]


HttpMethod = Annotated[str | None, Field(description="GET, POST, ...")]


ScopeArg = Annotated[
    SearchScope,
    Field(description=SCOPE_HELP),
]


CALLER = (
    "Instead of path: a client call site (a method calling over RestTemplate, RestClient or WebClient, "
    "a Feign or @HttpExchange method, or a method calling one): the handlers its calls reach."
)


@dataclass(frozen=True)
class Where:
    """Where a search tool looks: a repository or group, the scope, a folder, a language.

    `path_prefix` and `language` narrow the answer's code, never the symbol asked about: the callers of a
    Java method with `language="kotlin"` are its Kotlin callers.
    """

    repo: Repo = None
    scope: ScopeArg = SearchScope.CODE
    path_prefix: PathPrefix = None
    language: Language = None

    @property
    def looked_in(self) -> scoping.Where:
        """Where the search looks, as its lookups take it (the scope picks the search: `SearchService.within`)."""
        return scoping.Where(repo=self.repo, path_prefix=self.path_prefix, language=self.language)


@dataclass(frozen=True)
class Page:
    """Which part of an answer a tool shows: from `offset`, within `max_chars`."""

    offset: Offset = 0
    max_chars: Budget = DEFAULT_BUDGET


@dataclass(frozen=True)
class SetPage:
    """`Page` of a set answer, whose members show their code only with `code` (after the first few)."""

    offset: Offset = 0
    code: Code = False
    max_chars: Budget = DEFAULT_BUDGET


EVERYWHERE = Where()
FIRST_PAGE = Page()
FIRST_SET_PAGE = SetPage()

Tool = Callable[..., Awaitable[ToolResult]]


def flat(tool: Tool) -> Tool:
    """`tool` with each parameter group (a dataclass) spread into its fields, in place, as FastMCP reads it."""
    hints = get_type_hints(tool, include_extras=True)
    groups: dict[str, type[Any]] = {}
    params: list[inspect.Parameter] = []
    for param in inspect.signature(tool).parameters.values():
        kind = hints[param.name]
        if not (is_dataclass(kind) and isinstance(kind, type)):
            params.append(param.replace(annotation=kind, kind=inspect.Parameter.KEYWORD_ONLY))
            continue
        groups[param.name] = kind
        field_hints = get_type_hints(kind, include_extras=True)
        params += [
            inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=field_hints[f.name])
            for f in fields(kind)
        ]

    @functools.wraps(tool)
    async def spread(**arguments: Any) -> ToolResult:
        for name, kind in groups.items():
            arguments[name] = kind(**{f.name: arguments.pop(f.name) for f in fields(kind) if f.name in arguments})
        return await tool(**arguments)

    spread.__annotations__ = {p.name: p.annotation for p in params} | {"return": hints["return"]}
    vars(spread)["__signature__"] = inspect.Signature(params, return_annotation=hints["return"])
    return spread
