"""Names every agent-facing test agrees on: the MCP tools in their listed order, and citation fields."""

from __future__ import annotations

from typing import Final

TOOL_NAMES: Final = (
    "semantic_search",
    "get_symbol",
    "list_repos",
    "find_by_annotation",
    "get_callers",
    "get_callees",
    "find_endpoint",
    "find_injections",
    "find_implementations",
    "get_file_outline",
)
CITATION_FIELDS: Final = frozenset(
    {
        "repo_path",
        "file_path",
        "line_start",
        "line_end",
        "qualified_name",
        "signature",
        "commit_sha",
        "indexed_at",
        "permalink",
    }
)
