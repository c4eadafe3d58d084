"""Names every agent-facing test agrees on: the MCP tools in their listed order, and citation fields."""

from __future__ import annotations

from typing import Final

SEARCH_TOOL_NAMES: Final = (
    "semantic_search",
    "get_symbol",
    "list_repos",
    "find_by_annotation",
    "get_callers",
    "get_callees",
    "find_endpoint",
    "find_endpoint_callers",
    "find_injections",
    "find_implementations",
    "get_file_outline",
)
STATUS_TOOL_NAMES: Final = ("index_status", "refresh_repo")
"""How fresh the index is, and a refresh (`mcp_server/status_tools.py`): they read PostgreSQL, not the index."""
CONTEXT_TOOL_NAMES: Final = ("auto_context",)
"""The context of a task, chosen for the agent (`app/search/context.py`, issue 16)."""
LIBRARY_TOOL_NAMES: Final = ("find_library_usages",)
"""Which projects use a library (`mcp_server/library_tools.py`): reads PostgreSQL, not the index."""
CODE_TOOL_NAMES: Final = ("read_code", "impact")
"""A file's lines at the indexed commit, and what a change reaches (`mcp_server/code_tools.py`, issue 28)."""
GREP_TOOL_NAMES: Final = ("exact_search",)
"""Lines that contain a string or match a pattern, as git grep (`mcp_server/grep_tool.py`, issue 28)."""
CONFIG_TOOL_NAMES: Final = ("find_config",)
"""Where a Spring configuration key is set and who reads it (`mcp_server/config_tools.py`, issue 29)."""
_SIDE_TOOL_NAMES: Final = LIBRARY_TOOL_NAMES + CODE_TOOL_NAMES + GREP_TOOL_NAMES + CONFIG_TOOL_NAMES
TOOL_NAMES: Final = SEARCH_TOOL_NAMES + STATUS_TOOL_NAMES + CONTEXT_TOOL_NAMES + _SIDE_TOOL_NAMES
MUTATING_TOOLS: Final = frozenset({"refresh_repo"})
"""Tools that ask the service to do something (not `readOnlyHint`); every other tool only reads."""
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
