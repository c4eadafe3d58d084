"""`exact_search(pattern)`: `git grep` over the indexed code, a literal or an RE2 pattern (issue 28).

Thin over `SearchService.grep` (`app.search.grep`), which reads with the caller's `Access` inside the
query: lines, counts and files come only from projects the caller may read, and a repository it may
not read answers as one that does not exist (`KnowledgeTools` checks `repo` first, as every tool does).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Final

from fastmcp.exceptions import ToolError
from fastmcp.tools import ToolResult
from pydantic import Field

from app.auth.access import Access
from app.search.grep import MAX_CONTEXT, GrepQuery, grep_block, grep_item, summary
from app.search.patterns import MAX_PATTERN_CHARS, PatternError, PatternSpec
from app.search.scoping import SearchScope
from app.search.service import SearchService
from mcp_server import render
from mcp_server.render import Entry, echo
from mcp_server.status_tools import MISS_LEVEL
from mcp_server.tool_pages import tool_result
from mcp_server.tool_params import FIRST_PAGE, Language, Page, Repo, ScopeArg, Where

WINDOW: Final = 200
"""Matching lines asked of the search for one page: more than any output budget shows."""

Pattern = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_PATTERN_CHARS,
        description="What to find on a line: a literal string (the default) or, with regex=true, an RE2 pattern.",
    ),
]
Regex = Annotated[
    bool, Field(description="Read pattern as an RE2 regular expression (no backreferences or lookaround).")
]
CaseSensitive = Annotated[bool, Field(description="Match case exactly (default); false ignores case.")]
PathGlob = Annotated[
    str | None,
    Field(
        description="A folder or file prefix, or a glob on the repository path ('**/web/*Controller.java'); "
        "a glob without '/' matches file names at any depth ('*Repository.java')."
    ),
]
ContextLines = Annotated[
    int, Field(ge=0, le=MAX_CONTEXT, description="Lines shown before and after each match, within its symbol.")
]
Searcher = Callable[[Where], Awaitable[tuple[SearchService, Access]]]


class GrepTools:
    """`exact_search`, thin over `SearchService.grep`."""

    def __init__(self, search: Searcher) -> None:
        self._search = search

    async def exact_search(
        self,
        pattern: Pattern,
        regex: Regex = False,
        case_sensitive: CaseSensitive = True,
        repo: Repo = None,
        path: PathGlob = None,
        language: Language = None,
        scope: ScopeArg = SearchScope.CODE,
        context_lines: ContextLines = 2,
        page: Page = FIRST_PAGE,
    ) -> ToolResult:
        r"""Every line of the indexed code that contains a string or matches a pattern, as git grep: file:line.

        Each match names its enclosing symbol and shows a few lines around it; the counts are exact
        (an answer that says "at least" stopped early: narrow it with repo or path). Use it for an exact
        identifier, string literal, annotation or config key; semantic_search for a behaviour.

        Example: exact_search(pattern="findById(", path="*Service.java")
        Example: exact_search(pattern="@Value\("\$\{mail\.", regex=true, repo="acme/shop")
        """
        search, access = await self._search(Where(repo=repo, scope=scope, language=language))
        query = GrepQuery(
            pattern=PatternSpec(pattern, regex=regex, case_sensitive=case_sensitive),
            repo=repo,
            path=path,
            language=language,
            context=context_lines,
        )
        try:
            found = await search.grep(access, query, offset=page.offset, limit=WINDOW)
        except PatternError as exc:
            raise ToolError(f"{exc} (pattern {echo(pattern)!r}).", log_level=MISS_LEVEL) from exc
        entries = [Entry(grep_block(m), grep_item(m)) for m in found.matches]
        header = f"{summary(found)} for {echo(pattern)!r}:"
        rendered = render.page(entries, total=found.total, offset=page.offset, budget=page.max_chars, header=header)
        return tool_result(rendered, files=found.files, complete=found.complete, stopped=found.stopped)
