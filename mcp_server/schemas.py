"""The MCP tools' answers as types: each tool's output schema is derived from one of these.

Every answer is a page with its entries under `results` (`mcp_server.render.Rendered.data`).
"""

from __future__ import annotations

from typing import Any, NotRequired

from pydantic import TypeAdapter
from typing_extensions import TypedDict

from app.search.code import CodeItem
from app.search.config import ConfigItem
from app.search.context import ContextItem, RelatedItem
from app.search.grep import GrepItem
from app.search.hits import Citation
from app.search.impact_items import ImpactItem
from app.search.near import MissingName
from app.search.results import HitItem
from app.sync.status import StatusItem


class Page(TypedDict):
    """Where a page of entries sits in the whole answer."""

    total: int
    offset: int
    omitted: int
    next_offset: int | None


class HitsAnswer(Page):
    """Code hits (search, symbols, sets); a search's code names that no symbol has, with the names near them."""

    results: list[HitItem]
    missing: NotRequired[list[MissingName]]


class InjectionsAnswer(HitsAnswer):
    """Who receives a type, and what the type itself receives."""

    depends_on: list[str]


class CallerItem(HitItem):
    """A caller of a method; for a bare name several types declare, which type's method it calls and how matched."""

    declared_by: NotRequired[str]
    match: NotRequired[str]  # `receiver type`: resolved through its receiver's type; `type name`: its simple name only


class MethodCallersAnswer(Page):
    """Who calls a method (`get_callers`); the declaring types when a bare name is ambiguous."""

    results: list[CallerItem]
    declared_by: NotRequired[list[str]]


class CallSiteItem(HitItem):
    """A client call site of an endpoint: the calls that reach it, and the declared client it goes through."""

    reaches_with: list[str]
    through: str | None
    evidence: NotRequired[list[str]]  # an unresolved candidate: why it may call the endpoint


class CallersAnswer(Page):
    """Who calls an endpoint over HTTP (`find_endpoint_callers`)."""

    results: list[CallSiteItem]


class EndpointItem(HitItem):
    """A handler of a route; for a call site's calls, the call it serves, the caller and the evidence."""

    called_as: NotRequired[str]
    caller: NotRequired[str]
    evidence: NotRequired[list[str]]


class EndpointAnswer(Page):
    """Handlers of a route, or of a client call site's calls (`find_endpoint`)."""

    results: list[EndpointItem]
    unresolved: NotRequired[list[str]]


class ConfigAnswer(Page):
    """Where a configuration key is set and who reads it (`find_config`)."""

    results: list[ConfigItem]


class CallItem(TypedDict):
    """One call as written in the method, with the indexed symbols it resolves to."""

    call: str
    targets: list[Citation]


class CalleesAnswer(Page):
    """What a method calls."""

    results: list[CallItem]


class OutlineItem(Citation):
    """One declaration of a file."""

    symbol_type: str
    generated: bool


class OutlineAnswer(Page):
    """A file's declarations in line order."""

    results: list[OutlineItem]


class RepoItem(TypedDict):
    """One indexed repository and its sync state."""

    repo: str
    project_id: int | None
    chunks: int
    generated_chunks: int
    default_branch: str | None
    indexed_sha: str | None
    indexed_at: str | None
    status: str
    last_error: str | None


class ReposAnswer(Page):
    """The repositories the caller may read."""

    results: list[RepoItem]


class LibraryUsageItem(TypedDict):
    """One declaration of a library by a readable project (`find_library_usages`)."""

    library: str
    version: str | None
    unresolved: str | None
    repo: str
    project_id: int
    build_file: str
    scope: str
    kind: str
    sources: str | None
    repo_path: str | None


class LibraryUsagesAnswer(Page):
    """Which readable projects use a library, at which versions."""

    results: list[LibraryUsageItem]


class IndexStatusAnswer(Page):
    """The index status of the repositories the caller may read."""

    results: list[StatusItem]


class RefreshItem(TypedDict):
    """What a refresh asked for: a new request, or the sync already waiting."""

    repo: str
    project_id: int
    state: str
    generation: int | None
    request_id: int | None
    detail: str


class RefreshAnswer(Page):
    """The answer of `refresh_repo` (one entry)."""

    results: list[RefreshItem]


class ContextAnswer(Page):
    """The answer of `auto_context`: the chunks chosen for a task (none when nothing is relevant enough)."""

    results: list[ContextItem]
    related: list[RelatedItem]
    relevance: float
    threshold: float
    chars: int


class CodeAnswer(Page, CodeItem):
    """`read_code`'s answer (`app.search.code.CodeItem`): its declarations are the page's results, all shown."""


class ImpactAnswer(Page, ImpactItem):
    """`impact`'s answer (`app.search.impact_items.ImpactItem`): the calling methods are its results, all shown."""


class GrepAnswer(Page):
    """Matching lines (`exact_search`): counted exactly unless `complete` is false (`stopped` says why)."""

    results: list[GrepItem]
    files: int
    complete: bool
    stopped: str | None


def output_schema(answer: type[Any]) -> dict[str, Any]:
    """The JSON schema a tool declares for its structured content."""
    schema: dict[str, Any] = TypeAdapter(answer).json_schema()
    return schema
