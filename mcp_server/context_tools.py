"""`auto_context(task)`: the few chunks most useful for a task, thin over `app.search.context` (issue 16)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastmcp.tools import ToolResult
from mcp.types import TextContent
from pydantic import Field

from app.auth.access import Access
from app.search.context import DEFAULT_MAX_CHARS as CONTEXT_MAX_CHARS
from app.search.context import MAX_MAX_CHARS as CONTEXT_MAX_BUDGET
from app.search.context import MIN_MAX_CHARS as CONTEXT_MIN_CHARS
from app.search.context import auto_context, context_items, related_items
from app.search.service import SearchService
from mcp_server.tool_params import Language, Repo, Where


class ContextTools:
    """`auto_context`, reading through `search_in` (`KnowledgeTools.search_in`: the repository checked first)."""

    def __init__(self, search_in: Callable[[Where], Awaitable[tuple[SearchService, Access]]]) -> None:
        self._search_in = search_in

    async def auto_context(
        self,
        task: Annotated[str, Field(description="The task or prompt, as the user wrote it.")],
        repo: Repo = None,
        language: Language = None,
        max_chars: Annotated[
            int, Field(ge=CONTEXT_MIN_CHARS, le=CONTEXT_MAX_BUDGET, description="Budget of the context in characters.")
        ] = CONTEXT_MAX_CHARS,
    ) -> ToolResult:
        """The few chunks most useful for a task (named symbols, relevant search hits, their callers and callees).

        Nothing when nothing in the index is relevant enough: then the task is not about indexed code.
        Example: auto_context(task="make OwnerService.find throw when the owner is missing")
        """
        where = Where(repo, language=language)
        search, access = await self._search_in(where)
        context = await auto_context(search, access, task, where=where.looked_in, max_chars=max_chars)
        text = context.text or (
            f"Nothing indexed is relevant enough to this task (best relevance {context.relevance:.2f}, "
            f"threshold {context.threshold:.2f}). Use semantic_search if it is about the organization's code."
        )
        items = context_items(context)
        data = {
            "results": items,
            "total": len(items),
            "offset": 0,
            "omitted": 0,
            "next_offset": None,
            "related": related_items(context),
            "relevance": context.relevance,
            "threshold": context.threshold,
            "chars": len(context.text),
        }
        return ToolResult(content=[TextContent(type="text", text=text)], structured_content=data)
