"""The index status an agent and a person can trust (issue 14).

Per project: what is indexed, what GitLab reported and when it was asked, how far behind the index
is, and what the last sync did.

Nothing here is assumed. `gitlab_head` is the default-branch head GitLab's API reported at
`head_checked_at` (a sync reads it before it writes, the reconcile sweep checks it for every project
with activity): a delivery's `after` alone never fills it. A project is `behind` when a request is
waiting (a delivery, a sweep's drift, a refresh) or when the head GitLab reported is not the indexed
commit; `lag_seconds` counts from when that was first known (`projects.behind_since`), `lag_commits`
is what the compare of the running or last sync counted (None while no compare counted it).

A local checkout (issue 27, `app.sync.local_project`) is a project like these, `source` `local`: its
"head" is its working tree's state, checked when the status is asked, so its lag is the tree's.

`status_item` is pure; `index_status` reads PostgreSQL with the caller's readable set inside the query.
"""

from __future__ import annotations

from datetime import datetime

from typing_extensions import TypedDict

from app.auth.access import Access
from app.core.states import ProjectSource, ProjectStatus, RunStatus
from app.db import Database, StatusRow
from app.db.rows import shown_state
from app.sync.local_project import check_local_heads
from pipeline.model import ChunkerConfig


class StatusItem(TypedDict):
    """One project's index status (the MCP tool `index_status` and `GET /api/v1/index-status`)."""

    repo: str
    project_id: int
    source: str
    default_branch: str | None
    state: str
    behind: bool
    indexed_sha: str | None
    indexed_at: str | None
    gitlab_head: str | None
    head_checked_at: str | None
    lag_commits: int | None
    lag_seconds: float | None
    syncing: bool
    last_run: str | None
    last_run_trigger: str | None
    last_run_at: str | None
    last_error: str | None
    files: int
    chunks: int


def is_behind(row: StatusRow) -> bool:
    """A request waits, or GitLab reported a head other than the indexed commit."""
    if row.status == ProjectStatus.OUT_OF_SCOPE:
        return False
    waiting = row.requested_gen > row.done_gen or row.full_sync
    return waiting or (row.head_sha is not None and row.head_sha != row.indexed_sha)


def status_item(row: StatusRow) -> StatusItem:
    """The status of one project from its row (pure; times on PostgreSQL's clock, `row.now`)."""
    behind = is_behind(row)
    lag_s = None if row.behind_since is None else max(0.0, (row.now - row.behind_since).total_seconds())
    return StatusItem(
        repo=row.repo_path,
        project_id=row.id,
        source=row.source,
        default_branch=row.default_branch,
        state=shown_state(row.status, behind=behind),
        behind=behind,
        indexed_sha=row.indexed_sha,
        indexed_at=_iso(row.indexed_at),
        gitlab_head=row.head_sha,
        head_checked_at=_iso(row.head_checked_at),
        lag_commits=row.lag_commits if behind else 0,
        lag_seconds=round(lag_s, 1) if behind and lag_s is not None else (None if behind else 0.0),
        syncing=row.status == ProjectStatus.SYNCING or row.run_status == RunStatus.RUNNING,
        last_run=row.run_status,
        last_run_trigger=row.run_trigger,
        last_run_at=_iso(row.run_finished_at),
        last_error=row.last_error or row.run_error,
        files=row.files,
        chunks=row.chunks,
    )


async def index_status(
    db: Database, access: Access, repo: str | None = None, local: ChunkerConfig | None = None
) -> list[StatusItem]:
    """The status of every project the caller may read (or of `repo`: a path, or a group prefix ending in '/').

    With `local` (the chunker's config) the working trees of local projects on this machine are checked
    first (`check_local_heads`): their lag is the tree's, as of now.
    """
    if local is not None:
        await check_local_heads(db, local)
    terms = access.read_set()
    rows = await db.statuses(
        everything=terms.everything, ids=terms.ids, paths=terms.paths, prefixes=terms.prefixes, repo=repo
    )
    return [status_item(r) for r in rows]


def status_line(item: StatusItem) -> str:
    """One line of text for a person or an agent."""
    head = (item["gitlab_head"] or "-")[:12]
    seen = "worktree" if item["source"] == ProjectSource.LOCAL else "gitlab_head"
    lag = "up to date" if not item["behind"] else f"behind {_or_unknown(item['lag_commits'])} commits"
    if item["behind"] and item["lag_seconds"] is not None:
        lag += f" for {item['lag_seconds']:.0f} s"
    return (
        f"{item['repo']}  state={item['state']} indexed={(item['indexed_sha'] or '-')[:12]} {seen}={head}"
        f" (checked {item['head_checked_at'] or 'never'}) {lag}; files={item['files']} chunks={item['chunks']}"
        + (" syncing" if item["syncing"] else "")
        + (f" last_run={item['last_run']}" if item["last_run"] else "")
        + (f" error={item['last_error']}" if item["last_error"] else "")
    )


def _or_unknown(value: int | None) -> str:
    return "?" if value is None else str(value)


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None
