"""`find_config(key)`: where a Spring configuration key is set (per profile) and which code reads it (issue 29).

Thin over `app.search.config.find_config`, which reads inside the caller's filter: a key or value of a
project the caller may not read is never shown, and an unreadable repository answers as an unknown one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastmcp.exceptions import ToolError
from fastmcp.tools import ToolResult
from pydantic import Field

from app.auth.access import Access
from app.runtime import Deps
from app.search.config import config_item, config_line
from mcp_server.render import echo
from mcp_server.schemas import ConfigAnswer
from mcp_server.status_tools import MISS_LEVEL
from mcp_server.tool_pages import lines_page, tool_result
from mcp_server.tool_params import FIRST_PAGE, Page, PathPrefix, Repo

ConfigKey = Annotated[
    str,
    Field(
        min_length=1,
        max_length=300,
        description="A property key in any relaxed form (payment.timeout-ms, payment.timeoutMs, PAYMENT_TIMEOUTMS),"
        " or a @ConfigurationProperties field as Type.field (PaymentProperties.timeoutMs).",
    ),
]


def add_config_tools(
    add: Callable[[Callable[..., Any], type[Any]], None], get_deps: Callable[[], Deps], access: Callable[[], Access]
) -> None:
    """Register `find_config` with `create_server`'s `add` (its tool and answer type)."""
    add(ConfigTools(get_deps, access).find_config, ConfigAnswer)


class ConfigTools:
    """`find_config`, thin over `app.search.config`."""

    def __init__(self, get_deps: Callable[[], Deps], access: Callable[[], Access]) -> None:
        self.get_deps = get_deps
        self._access = access

    async def find_config(
        self, key: ConfigKey, repo: Repo = None, path_prefix: PathPrefix = None, page: Page = FIRST_PAGE
    ) -> ToolResult:
        """Where a Spring configuration key is set, per profile, and the code that reads it.

        Settings come from application*/bootstrap* .yml/.yaml/.properties files (file:line, value); readers
        are @Value, @ConfigurationProperties fields and prefixes, and Environment.getProperty calls.
        Secret values (passwords, tokens, keys, URL credentials) are never indexed: they show as <secret>.
        Example: find_config(key="server.servlet.context-path") or find_config(key="payment.timeout", repo="acme/shop")
        """
        access = self._access()
        search = self.get_deps().search
        if repo and not repo.endswith("/") and not await search.knows_repository(access, repo):
            raise ToolError(f"Unknown repository {echo(repo)!r}.", log_level=MISS_LEVEL)
        answer = await search.find_config(access, key, repo, path_prefix=path_prefix)
        items = [config_item(u) for u in (*answer.settings, *answer.readers)]
        if not items:
            message = f"No readable configuration file sets {echo(key)!r} and no code reads it."
            raise ToolError(message, log_level=MISS_LEVEL)
        header = f"{echo(key)} ({answer.key}): set {len(answer.settings)} times, read {len(answer.readers)} times:"
        lines = [config_line(i) for i in items]
        return tool_result(lines_page(lines, items, page.offset, page.max_chars, header=header))
