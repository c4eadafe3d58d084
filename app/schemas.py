"""Pydantic models of the REST and admin requests and answers: each validates, and the OpenAPI is derived from it.

Strict models (no coercion: `true` is not an id, `"no"` is not a boolean; unknown fields refused),
so what the handlers receive is exactly what the schema published at `/openapi.json` says.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from hooks.events import MAX_ID

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


class ReindexRequest(BaseModel):
    """`POST /admin/reindex`: the listed projects, or every project GitLab lists."""

    model_config = ConfigDict(extra="forbid", strict=True)

    projects: list[ProjectId] | None = Field(
        default=None, min_length=1, max_length=MAX_BACKFILL_PROJECTS, description="Project ids to backfill."
    )
    all: bool = Field(default=False, description="Backfill every project GitLab lists instead.")
    full: bool = Field(default=False, description="Walk whole trees instead of comparing with the indexed commit.")

    @model_validator(mode="after")
    def _one_target(self) -> ReindexRequest:
        if (self.projects is None) == (not self.all):
            raise ValueError('give either "projects": [ids] or "all": true')
        return self

    @property
    def project_ids(self) -> list[int] | None:
        """The ids to backfill, None for all (duplicates dropped, order kept)."""
        return None if self.all else list(dict.fromkeys(self.projects or []))


BackfillStatus = Literal["queued", "running", "done", "failed"]
BackfillOutcome = Literal["requested", "not_found", "forbidden", "failed"]


class ReindexAccepted(BaseModel):
    """The answer to an accepted `POST /admin/reindex` (202)."""

    backfill_id: int
    status: BackfillStatus


class BackfillResult(BaseModel):
    """What a backfill did for one project."""

    project_id: int
    outcome: BackfillOutcome
    detail: str | None = None


class BackfillReport(BaseModel):
    """`GET /admin/backfills/{id}`: a backfill's state, with one result per project handled so far."""

    id: int
    status: BackfillStatus
    projects: list[int] | None = Field(description="The ids asked for; null for all projects")
    full: bool
    error: str | None = None
    created_at: datetime
    finished_at: datetime | None = None
    counts: dict[BackfillOutcome, int]
    results: list[BackfillResult]


class ProjectState(BaseModel):
    """One project's sync state (`GET /admin/projects`)."""

    id: int
    repo_path: str
    default_branch: str | None
    indexed_sha: str | None
    target_sha: str | None
    status: str
    last_error: str | None
    indexed_at: datetime | None


class ErrorAnswer(BaseModel):
    """Every 4xx/5xx answer's body."""

    error: str
