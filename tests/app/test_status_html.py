"""The operator's page rendered from a status model (pure): every value escaped, the parts shown, nothing external."""

from __future__ import annotations

import base64
import hashlib
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from typing import Any, cast

from app.console.html import CSP, STYLE, duration, esc, render_sign_in, render_status
from app.console.model import IndexFacts, QueueFacts, StatusModel, attention_first, listing
from app.rest.schemas import BackfillReport, JobState
from app.sync.status import StatusItem

AT = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
EVIL = '<script>alert("x")</script>'


def item(repo: str, **changes: Any) -> StatusItem:
    base = StatusItem(
        repo=repo,
        project_id=abs(hash(repo)) % 10_000,
        source="gitlab",
        default_branch="main",
        state="ok",
        behind=False,
        indexed_sha="a" * 40,
        indexed_at="2026-12-06T11:00:00+00:00",
        gitlab_head="a" * 40,
        head_checked_at=None,
        lag_commits=0,
        lag_seconds=0.0,
        syncing=False,
        last_run="DONE",
        last_run_trigger="push",
        last_run_at=None,
        last_error=None,
        files=3,
        chunks=12,
    )
    return cast(StatusItem, dict(base) | changes)


def job(project_id: int, **changes: Any) -> JobState:
    return JobState.model_validate(
        {
            "id": 7,
            "project_id": project_id,
            "trigger": "push",
            "status": "RUNNING",
            "mode": "compare",
            "from_sha": None,
            "to_sha": None,
            "files_changed": 4,
            "chunks_embedded": 9,
            "chunks_reused": 1,
            "chunks_deleted": 0,
            "error": None,
            "started_at": AT,
            "finished_at": None,
        }
        | changes
    )


def backfill(**changes: Any) -> BackfillReport:
    return BackfillReport.model_validate(
        {
            "id": 3,
            "status": "running",
            "target": {"group": "acme"},
            "projects": None,
            "full": False,
            "created_at": AT,
            "started_at": AT,
            "counts": {},
            "progress": {"done": 2, "running": 1, "queued": 1},
            "files": 40,
            "chunks": 300,
            "files_per_s": 2.5,
            "projects_per_s": 0.1,
            "eta_s": 20.0,
            "results": [],
        }
        | changes
    )


class Tags(HTMLParser):
    """Every start tag, and whether the document parses."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(page)
    return parser.tags


def test_a_project_named_script_is_escaped_everywhere() -> None:
    evil = item(EVIL, state="failed", last_error=EVIL, default_branch=EVIL)
    model = StatusModel(
        at=AT,
        projects=listing([evil]),
        syncs=[job(evil["project_id"], trigger=EVIL, mode=EVIL)],
        backfills=[backfill(target={"group": EVIL}, error=EVIL)],
        queue=QueueFacts(depth=1, oldest_due_s=3.0),
        index=IndexFacts(model=EVIL, points=5),
        unavailable={"queue": EVIL},
    )
    page = render_status(model)
    assert "<script" not in page.lower()
    assert "&lt;script&gt;" in page
    assert [t for t, _ in tags(page)].count("script") == 0
    assert not any(name.startswith("on") for _, attrs in tags(page) for name in attrs)  # no handler smuggled in
    assert "<script" not in render_sign_in(EVIL).lower()


def test_esc_escapes_quotes_and_shows_none_as_a_dash() -> None:
    assert esc('"><img src=x>') == "&quot;&gt;&lt;img src=x&gt;"
    assert esc(None) == "-"
    assert esc(esc("<b>")) == "&lt;b&gt;"  # an escaped fragment is not escaped twice


def test_the_page_shows_states_lag_errors_syncs_backfills_queue_and_index() -> None:
    behind = item("acme/late", state="pending", behind=True, lag_commits=3, lag_seconds=125.0)
    broken = item("acme/broken", state="failed", last_error="GitLab answered 500")
    model = StatusModel(
        at=AT,
        projects=listing([item("acme/fine"), behind, broken]),
        syncs=[job(behind["project_id"])],
        backfills=[backfill()],
        queue=QueueFacts(depth=4, oldest_due_s=61.0),
        index=IndexFacts(model="fake (8 dimensions)", points=1234),
    )
    page = render_status(model)
    for shown in (
        "Projects: 3",
        "1 failed",
        "1 ok",
        "1 pending",
        "3 commits behind for 2 min 5 s",
        "GitLab answered 500",
        "Running syncs: 1",
        "acme/late",
        "4 jobs waiting",
        "oldest due for 1 min 1 s",
        "model: fake (8 dimensions)",
        "1234 chunks",
        '<progress max="4" value="2">',
        "ETA 20 s",
        '<meta http-equiv="refresh" content="5">',
    ):
        assert shown in page, shown
    rows = re.findall(r"<tr><td>([^<]+)</td>", page.rsplit("<h2>Projects: 3</h2>", 1)[1])
    assert rows.index("acme/broken") < rows.index("acme/late") < rows.index("acme/fine")  # attention first


def test_no_external_asset_and_the_style_matches_the_policy() -> None:
    page = render_status(StatusModel(at=AT))
    for tag, attrs in tags(page):
        assert tag not in ("script", "link", "img", "iframe"), tag
        assert "src" not in attrs and "href" not in attrs
        if tag == "form":
            assert (attrs.get("action") or "").startswith("/admin/")
    [style] = re.findall(r"<style>(.*?)</style>", page, re.S)
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert style == STYLE and f"'sha256-{digest}'" in CSP
    assert "default-src 'none'" in CSP and "frame-ancestors 'none'" in CSP
    assert "no project synced yet" in page


def test_an_unreadable_part_is_named_and_the_rest_is_shown() -> None:
    page = render_status(StatusModel(at=AT, projects=listing([item("acme/a")]), unavailable={"queue": "Redis refused"}))
    assert "queue could not be read: Redis refused" in page
    assert "acme/a" in page and "unavailable" in page


def test_many_projects_are_cut_with_a_note() -> None:
    projects = [item(f"acme/p{i:04d}", project_id=i) for i in range(250)]
    page = render_status(StatusModel(at=AT, projects=listing(projects)))
    assert page.count("<tr><td>acme/p") == 200 and "50 more, up to date" in page


def test_attention_first_and_durations() -> None:
    a, b, c = item("a"), item("b", behind=True, lag_seconds=5.0), item("c", behind=True, lag_seconds=50.0)
    assert [p["repo"] for p in attention_first([a, b, c, item("d", state="failed")])] == ["d", "c", "b", "a"]
    assert (duration(59.4), duration(3600 * 2 + 600)) == ("59 s", "2 h 10 min")
