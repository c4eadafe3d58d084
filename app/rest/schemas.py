"""Pydantic models of the REST and admin requests and answers: each validates, and the OpenAPI is derived from it.

Strict models (no coercion: `true` is not an id, `"no"` is not a boolean; unknown fields refused),
so what the handlers receive is exactly what the schema published at `/openapi.json` says.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal, get_type_hints

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)

from app.agents.hook import CONTEXT_PATH as CONTEXT_PATH  # declared where the hook reads it
from app.core.events import MAX_ID
from app.search.code import MAX_LINES, CodeItem
from app.search.context import DEFAULT_MAX_CHARS, MAX_MAX_CHARS, MIN_MAX_CHARS, ContextItem, RelatedItem
from app.search.grep import MAX_CONTEXT, GrepItem
from app.search.impact import DEFAULT_HOPS, MAX_CHANGES, MAX_HOPS
from app.search.impact_items import ImpactItem
from app.search.patterns import MAX_PATTERN_CHARS
from app.search.results import HitItem
from app.search.scoping import SCOPE_HELP, SearchScope
from app.sync.status import StatusItem
from pipeline.model import LANGUAGES, SYMBOL_TYPES

MAX_ERRORS_SHOWN = 5
MAX_LOC_CHARS = 64


def validation_message(exc: ValidationError) -> str:
    """A short, bounded message naming what is wrong where, never echoing the input itself.

    The location of an unknown field is its name, which the client chose: it is cut too.
    """
    parts = []
    for error in exc.errors(include_input=False, include_url=False, include_context=False)[:MAX_ERRORS_SHOWN]:
        where = ".".join(str(part)[:MAX_LOC_CHARS] for part in error["loc"]) or "body"
        parts.append(f"{where}: {error['msg']}")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


ProjectId = Annotated[int, Field(ge=1, le=MAX_ID, description="A GitLab project id")]
MAX_BACKFILL_PROJECTS = 10_000


MAX_PATH_CHARS = 1024
PathRef = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_PATH_CHARS,
        pattern=r"^[\w.][\w.-]*(/[\w.][\w.-]*)*$",
        description="A full path, e.g. acme/platform",
    ),
]
Ref = ProjectId | PathRef


class ReindexRequest(BaseModel):
    """`POST /admin/reindex`: one project, a group (with its subgroups), every project, or a list of ids."""

    model_config = ConfigDict(extra="forbid", strict=True)

    project: Ref | None = Field(default=None, description="A project id or full path (acme/shop).")
    group: Ref | None = Field(default=None, description="A group id or full path (acme/platform).")
    include_subgroups: bool | None = Field(
        default=None, description="With `group`: its subgroups' projects too (the default)."
    )
    all: bool = Field(default=False, description="Backfill every project GitLab lists instead.")
    projects: list[ProjectId] | None = Field(
        default=None, min_length=1, max_length=MAX_BACKFILL_PROJECTS, description="Project ids to backfill."
    )
    full: bool = Field(default=False, description="Walk whole trees instead of comparing with the indexed commit.")
    force: bool = Field(default=False, description="Embed unchanged chunks again too (implies a full walk).")

    @model_validator(mode="after")
    def _one_target(self) -> ReindexRequest:
        given = [self.project is not None, self.group is not None, self.all, self.projects is not None]
        if sum(given) != 1:
            raise ValueError('give exactly one of "project", "group", "all": true or "projects": [ids]')
        if self.include_subgroups is not None and self.group is None:
            raise ValueError('"include_subgroups" goes with "group"')
        if isinstance(self.project, str) and "/" not in self.project:
            raise ValueError('"project" is an id or a full path with its namespace (acme/shop)')
        return self

    @property
    def project_ids(self) -> list[int] | None:
        """The ids of `"projects"` (duplicates dropped, order kept); None for the other targets."""
        return None if self.projects is None else list(dict.fromkeys(self.projects))

    @property
    def target(self) -> dict[str, JsonValue]:
        """What the backfill resolves, as stored with it and reported back."""
        if self.project is not None:
            return {"project": self.project}
        if self.group is not None:
            return {"group": self.group, "include_subgroups": self.include_subgroups is not False}
        if self.all:
            return {"all": True}
        return {"projects": len(self.project_ids or [])}


# The JSON values of `app.core.states`' enums, inline in the OpenAPI (tests/app/test_names.py keeps them equal).
BackfillStatusValue = Literal["queued", "running", "done", "failed"]
BackfillOutcomeValue = Literal["requested", "not_found", "forbidden", "failed", "out_of_scope", "empty", "waiting"]
BackfillProgressValue = Literal["queued", "running", "done", "failed", "skipped"]
RunStatusValue = Literal["PENDING", "RUNNING", "DONE", "FAILED"]
DeliveryOutcomeValue = Literal["enqueued", "deferred", "duplicate", "ignored"]
RequestStateValue = Literal["queued", "running", "done", "failed", "ignored"]


class ReindexAccepted(BaseModel):
    """The answer to an accepted `POST /admin/reindex` (202)."""

    backfill_id: int
    status: BackfillStatusValue


class BackfillResult(BaseModel):
    """What a backfill did for one project, and where that project is now."""

    project_id: int
    repo_path: str | None = None
    outcome: BackfillOutcomeValue
    state: BackfillProgressValue = Field(description="queued, running, done, failed, or skipped (out of scope, empty)")
    detail: str | None = None
    files: int = Field(default=0, description="Files its syncs processed since the backfill asked for them")
    chunks: int = Field(default=0, description="Chunks embedded or kept by those syncs")


class BackfillSummary(BaseModel):
    """One backfill in `GET /admin/backfills`: what was asked for and where it is (its progress: `/{id}`)."""

    id: int
    status: BackfillStatusValue
    target: dict[str, JsonValue] = Field(description='{"project"}, {"group"}, {"all"}, or the sweep\'s {"discovered"}')
    full: bool
    force: bool = False
    error: str | None = None
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None


class BackfillReport(BaseModel):
    """`GET /admin/backfills/{id}`: a backfill's state and progress, with one page of its projects.

    `results` is paginated like every admin list (`?after=<project id>&per_page=`, `Link: rel="next"`),
    and `?state=` keeps one kind (`failed`, ...).
    """

    id: int
    status: BackfillStatusValue
    target: dict[str, JsonValue] = Field(description='What was asked for: {"project"}, {"group"}, {"all"}...')
    projects: list[int] | None = Field(description='The ids of a {"projects": [ids]} backfill, else null')
    full: bool
    force: bool = False
    error: str | None = None
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    counts: dict[BackfillOutcomeValue, int] = Field(description="Projects by what the backfill decided for them")
    progress: dict[BackfillProgressValue, int] = Field(description="Projects by where they are now")
    files: int = Field(description="Files processed so far")
    chunks: int = Field(description="Chunks embedded or kept so far")
    files_per_s: float
    projects_per_s: float = Field(description="Projects settled (done or failed) per second since it started")
    eta_s: float | None = Field(description="Seconds until every queued or running project is settled; null: unknown")
    results: list[BackfillResult]


MAX_PER_PAGE = 1000


class PageParams(BaseModel):
    """Keyset pagination of the admin lists: `per_page` rows after id `after` (strings, as query strings are)."""

    model_config = ConfigDict(extra="ignore")

    after: int = Field(default=0, ge=0, le=MAX_ID, description="The last id of the previous page (0: from the start)")
    per_page: int = Field(default=100, ge=1, le=MAX_PER_PAGE, description="Rows per page (1..1000)")

    @field_validator("after", "per_page", mode="before")
    @classmethod
    def _integer(cls, value: object) -> object:
        if isinstance(value, str):
            if not value.isdigit():
                raise ValueError("must be a whole number")
            return int(value)
        return value


class JobState(BaseModel):
    """One sync run (`GET /admin/jobs`)."""

    id: int
    project_id: int
    trigger: str
    status: RunStatusValue
    mode: str | None
    from_sha: str | None
    to_sha: str | None
    files_changed: int
    chunks_embedded: int
    chunks_reused: int
    chunks_deleted: int
    error: str | None
    started_at: datetime | None
    finished_at: datetime | None


class ProjectState(BaseModel):
    """One project's sync state (`GET /admin/projects`)."""

    id: int
    repo_path: str
    source: str = Field(description="`gitlab`, or `local`: a checkout `javakb serve --watch` or `javakb index` indexed")
    default_branch: str | None
    indexed_sha: str | None
    target_sha: str | None
    status: str = Field(description="`pending` while a requested sync is not indexed, else the last run's outcome")
    behind: bool = Field(description="A requested sync (a delivery, a full reindex) is not indexed yet")
    last_error: str | None
    indexed_at: datetime | None


class ErrorAnswer(BaseModel):
    """Every 4xx/5xx answer's body."""

    error: str


MAX_LIMIT = 50
_SYMBOL_ENUM: list[JsonValue] = [*sorted(SYMBOL_TYPES)]


class SearchParams(BaseModel):
    """`GET /api/v1/search` query parameters (strings, as query strings are; `limit` is clamped to 1..50)."""

    model_config = ConfigDict(extra="ignore")

    q: str = Field(min_length=1, description="What to look for, in words or code.")
    repo: str | None = Field(default=None, description="Repository path, or a group prefix ending in /.")
    path: str | None = Field(default=None, description="Folder or file path prefix.")
    symbol_type: str | None = Field(default=None, json_schema_extra={"enum": _SYMBOL_ENUM})
    stereotype: str | None = Field(default=None, description="service, repository, rest_controller, ...")
    annotation: str | None = Field(default=None, description="Annotation simple name, e.g. Transactional.")
    http_method: str | None = Field(default=None, description="GET, POST, ...")
    language: str | None = Field(default=None, json_schema_extra={"enum": [*LANGUAGES]})
    limit: int = Field(default=10, ge=1, le=MAX_LIMIT, description="How many results (clamped to 1..50).")
    scope: SearchScope = Field(default=SearchScope.CODE, description=SCOPE_HELP)

    @field_validator("q", mode="before")
    @classmethod
    def _query(cls, value: object) -> object:
        if not isinstance(value, str) or not value.strip():
            raise ValueError("q is required")
        return value.strip()

    @field_validator("symbol_type", "language")
    @classmethod
    def _known(cls, value: str | None, info: ValidationInfo) -> str | None:
        allowed = SYMBOL_TYPES if info.field_name == "symbol_type" else LANGUAGES
        if value and value not in allowed:
            raise ValueError(f"{info.field_name} must be one of {sorted(allowed)}")
        return value or None

    @field_validator("limit", mode="before")
    @classmethod
    def _limit(cls, value: object) -> int:
        try:
            limit = int(str(value))
        except ValueError:
            raise ValueError("limit must be an integer") from None
        return min(MAX_LIMIT, max(1, limit))


class SearchAnswer(BaseModel):
    """`GET /api/v1/search`: the query and its ranked results, each cited (`app.search.results.HitItem`)."""

    query: str
    results: list[HitItem]


GREP_PATH = "/api/v1/grep"
MAX_GREP_LIMIT = 200


class GrepParams(BaseModel):
    """`GET /api/v1/grep` query parameters: what the MCP tool `exact_search` takes (issue 28)."""

    model_config = ConfigDict(extra="ignore")

    pattern: str = Field(min_length=1, max_length=MAX_PATTERN_CHARS, description="A literal, or RE2 with regex=true.")
    regex: bool = Field(default=False, description="Read pattern as an RE2 regular expression.")
    case_sensitive: bool = Field(default=True, description="false ignores case.")
    repo: str | None = Field(default=None, description="Repository path, or a group prefix ending in /.")
    path: str | None = Field(default=None, description="Folder or file prefix, or a glob ('*Controller.java').")
    language: str | None = Field(default=None, description="Only code in this language, e.g. java.")
    context: int = Field(default=2, ge=0, le=MAX_CONTEXT, description="Lines shown before and after each match.")
    offset: int = Field(default=0, ge=0, description="Skip this many matching lines: a previous next_offset.")
    limit: int = Field(default=50, ge=1, le=MAX_GREP_LIMIT, description="Matching lines per page.")


class GrepAnswer(BaseModel):
    """`GET /api/v1/grep`: a page of matching lines in file order, counted exactly unless `complete` is false."""

    pattern: str
    total: int = Field(description="Matching lines (a floor when complete is false)")
    files: int = Field(description="Files with a matching line")
    offset: int
    next_offset: int | None
    complete: bool = Field(description="false: the scan stopped (stopped says why); narrow repo or path")
    stopped: str | None
    results: list[GrepItem]


class ContextParams(BaseModel):
    """`GET /api/v1/context` query parameters: what `auto_context` takes (issue 16)."""

    model_config = ConfigDict(extra="ignore")

    task: str = Field(min_length=1, max_length=20_000, description="The task or prompt, as the user wrote it.")
    repo: str | None = Field(default=None, description="Repository path, or a group prefix ending in /.")
    max_chars: int = Field(
        default=DEFAULT_MAX_CHARS, ge=MIN_MAX_CHARS, le=MAX_MAX_CHARS, description="Budget of the context."
    )


class ContextAnswer(BaseModel):
    """`GET /api/v1/context`: the framed text to inject ("" when nothing is relevant enough) and its parts."""

    text: str
    results: list[ContextItem]
    related: list[RelatedItem]
    relevance: float
    threshold: float


CODE_PATH = "/api/v1/code"
IMPACT_PATH = "/api/v1/impact"


class CodeParams(BaseModel):
    """`GET /api/v1/code` query parameters: what the MCP tool `read_code` takes (issue 28)."""

    model_config = ConfigDict(extra="ignore")

    repo: str = Field(min_length=1, max_length=MAX_PATH_CHARS, description="Repository path (group/project).")
    path: str = Field(min_length=1, max_length=MAX_PATH_CHARS, description="The file's path in the repository.")
    start_line: int | None = Field(default=None, ge=1, description=f"1-based; at most {MAX_LINES} lines per call.")
    end_line: int | None = Field(default=None, ge=1, description="The last line wanted (inclusive).")


class ImpactParams(BaseModel):
    """`GET /api/v1/impact` query parameters: what the MCP tool `impact` takes (issue 28); `changes` repeats."""

    model_config = ConfigDict(extra="ignore")
    repeated: ClassVar[tuple[str, ...]] = ("changes",)  # read as lists from the query string (`entry.api.asked`)

    symbol: str | None = Field(default=None, max_length=MAX_PATH_CHARS, description="A method or type.")
    changes: list[Annotated[str, Field(max_length=MAX_PATH_CHARS + 40)]] | None = Field(
        default=None, max_length=MAX_CHANGES, description="Instead of symbol: 'path:start-end', repeated, with repo."
    )
    repo: str | None = Field(default=None, max_length=MAX_PATH_CHARS, description="Repository path.")
    hops: int = Field(default=DEFAULT_HOPS, ge=0, le=MAX_HOPS, description="Levels of callers to follow.")


def _answer_of(item: type[Any], name: str) -> type[BaseModel]:
    """A pydantic model of a TypedDict declared by the search module (the one declaration, for the OpenAPI)."""
    fields: dict[str, Any] = {key: (kind, ...) for key, kind in get_type_hints(item, include_extras=True).items()}
    model: type[BaseModel] = create_model(name, __doc__=item.__doc__, **fields)
    return model


CodeAnswer = _answer_of(CodeItem, "CodeAnswer")
"""`GET /api/v1/code`: `app.search.code.CodeItem`."""
ImpactAnswer = _answer_of(ImpactItem, "ImpactAnswer")
"""`GET /api/v1/impact`: `app.search.impact_items.ImpactItem`."""


class HookEnvelope(BaseModel):
    """What `POST /hooks/gitlab` reads first from a GitLab system or project hook body (documentation only).

    The rest of each event is read by `hooks.events.parse_event`, which answers 400 naming the field.
    """

    model_config = ConfigDict(extra="allow")

    event_name: str | None = Field(default=None, description="push, repository_update, project_destroy, ...")
    object_kind: str | None = Field(default=None, description="Sent by project and group hooks")


class HookAnswer(BaseModel):
    """The answer to a delivery: `enqueued`/`deferred` (202), `duplicate`/`ignored` (200)."""

    status: DeliveryOutcomeValue
    detail: str


RebuildStatusValue = Literal["queued", "building", "switching", "done", "failed"]
RebuildProjectStatusValue = Literal["pending", "done", "skipped", "failed"]


class RebuildAccepted(BaseModel):
    """The answer to an accepted `POST /admin/rebuild` (202)."""

    rebuild_id: int
    status: RebuildStatusValue


class RebuildFailure(BaseModel):
    """A project a rebuild could not fill (it failed the rebuild)."""

    project_id: int
    detail: str | None = None


class RebuildReport(BaseModel):
    """`GET /admin/rebuilds/{id}`: a model rebuild's state and progress."""

    id: int
    status: RebuildStatusValue
    collection: str | None = Field(description="The new generation, once created")
    previous: str | None = Field(description="The generation the alias pointed at before the switch")
    embedding_model: str | None = None
    dimension: int | None = None
    error: str | None = None
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    projects: dict[RebuildProjectStatusValue, int]
    files: int
    chunks: int
    chunks_per_s: float | None = Field(description="Chunks written per second since the start")
    eta_s: float | None = Field(description="Seconds left at the rate so far, while building")
    failed: list[RebuildFailure]


INDEX_JOBS_PATH = "/api/v1/index-jobs"
INDEX_STATUS_PATH = "/api/v1/index-status"

CommitSha = Annotated[
    str, Field(pattern=r"^([0-9a-f]{40}|[0-9a-f]{64})$", description="A full commit id (SHA-1 or SHA-256)")
]


class IndexJobRequest(BaseModel):
    """`POST /api/v1/index-jobs`: a CI job (or an index-job token's holder) asks to index its project's commit."""

    model_config = ConfigDict(extra="forbid", strict=True)

    project_id: ProjectId
    commit_sha: CommitSha


class IndexJobAnswer(BaseModel):
    """One index job (`POST /api/v1/index-jobs` answers 202 with it; `GET /api/v1/index-jobs/{id}`)."""

    id: int
    project_id: int
    commit_sha: str | None
    state: RequestStateValue = Field(description="`done` once a sync covered the request")
    generation: int | None = Field(description="The project's sync generation this request asked for")
    indexed_sha: str | None = Field(description="The commit the project's index equals now")
    error: str | None = Field(description="Why the last run failed (`failed`), or why nothing was asked (`ignored`)")
    created_at: datetime


class IndexStatusParams(BaseModel):
    """`GET /api/v1/index-status`: every readable project, or one repository or group."""

    model_config = ConfigDict(extra="ignore")

    repo: str | None = Field(
        default=None, min_length=1, max_length=1024, description="A repository path, or a group prefix ending in '/'"
    )


class IndexStatusAnswer(BaseModel):
    """`GET /api/v1/index-status`: the index status of the projects the caller may read."""

    results: list[StatusItem]
