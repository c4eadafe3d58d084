"""The admin lists are paginated by keyset (`?after=&per_page=`, `Link: rel="next"`), and the CLI reads them."""

from __future__ import annotations

import argparse
import io
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from app.ops.admin_client import Screen, bar, reindex_body, render, watch
from entry.cli_admin import run_admin_reindex, run_admin_status
from entry.web import create_app
from tests.hooks.test_receiver import fetch, make_settings
from tests.support.tokens import admin_token

ADMIN = "admin-token-for-lists-0123456"
AUTH = {"Authorization": f"Bearer {ADMIN}"}


@pytest.fixture
def client(clean_db: str, clean_redis: str) -> Iterator[TestClient]:
    settings = make_settings(clean_db, clean_redis, url="https://gitlab.example.com")
    with TestClient(create_app(settings.model_copy(update={"admin_tokens": [admin_token(ADMIN)]}))) as c:
        yield c


@pytest.fixture
def projects(client: TestClient, clean_db: str) -> list[int]:
    """Five projects, each with one finished sync run (the third failed), written straight to PostgreSQL."""
    ids = [10, 20, 30, 40, 50]
    values = ", ".join(f"({i}, 'acme/p{i // 10}', 1)" for i in ids)
    runs = ", ".join(f"({i}, 'push', '{'FAILED' if i == 30 else 'DONE'}', now(), now())" for i in ids)
    fetch(
        clean_db,
        f"""
        WITH p AS (INSERT INTO projects (id, repo_path, requested_gen) VALUES {values})
        INSERT INTO index_jobs (project_id, trigger, status, started_at, finished_at) VALUES {runs} RETURNING id
        """,
    )
    return ids


def test_projects_come_in_pages_with_a_next_link(client: TestClient, projects: list[int]) -> None:
    first = client.get("/admin/projects", params={"per_page": 2}, headers=AUTH)
    assert [p["id"] for p in first.json()] == [10, 20]
    assert first.headers["link"].endswith('rel="next"') and "after=20" in first.headers["link"]
    rest = client.get("/admin/projects", params={"per_page": 10, "after": 20}, headers=AUTH)
    assert [p["id"] for p in rest.json()] == [30, 40, 50] and "link" not in rest.headers
    one = client.get("/admin/projects/30", headers=AUTH)
    assert one.json()["repo_path"] == "acme/p3"
    assert client.get("/admin/projects/31", headers=AUTH).status_code == 404


@pytest.mark.parametrize("query", [{"per_page": "0"}, {"per_page": "1001"}, {"after": "-1"}, {"after": "x"}])
def test_bad_page_parameters_are_400(client: TestClient, query: dict[str, str]) -> None:
    response = client.get("/admin/projects", params=query, headers=AUTH)
    assert response.status_code == 400 and response.json()["error"]


def test_jobs_filter_by_status(client: TestClient, projects: list[int]) -> None:
    failed = client.get("/admin/jobs", params={"status": "failed"}, headers=AUTH).json()
    assert [j["project_id"] for j in failed] == [30]
    done = client.get("/admin/jobs", params={"status": "done", "per_page": 2}, headers=AUTH)
    assert [j["status"] for j in done.json()] == ["DONE", "DONE"] and 'rel="next"' in done.headers["link"]
    pages = [done.json()]
    while "link" in done.headers:  # the Link keeps the filter: every DONE run once, in id order, nothing else
        done = client.get(done.headers["link"].split(">")[0].lstrip("<"), headers=AUTH)
        pages.append(done.json())
    assert [len(p) for p in pages] == [2, 2, 0] and [j["project_id"] for p in pages for j in p] == [10, 20, 40, 50]
    assert client.get("/admin/jobs", params={"status": "nope"}, headers=AUTH).status_code == 400


def test_backfills_are_listed_by_status_and_admin_status_shows_the_running_ones(
    client: TestClient, projects: list[int], clean_db: str
) -> None:
    fetch(
        clean_db,
        """
        INSERT INTO backfills (status, full_sync, target, started_at) VALUES
            ('done', false, '{"all": true}', now()), ('running', false, '{"discovered": 5}', now()),
            ('running', true, '{"group": "acme"}', now())
        RETURNING id
        """,
    )
    listed = client.get("/admin/backfills", params={"per_page": 2}, headers=AUTH)
    assert [(b["status"], b["target"]) for b in listed.json()] == [
        ("done", {"all": True}),
        ("running", {"discovered": 5}),
    ]
    assert 'rel="next"' in listed.headers["link"]
    running = client.get("/admin/backfills", params={"status": "running"}, headers=AUTH).json()
    assert [(b["target"], b["full"]) for b in running] == [({"discovered": 5}, False), ({"group": "acme"}, True)]
    assert client.get("/admin/backfills", params={"status": "nope"}, headers=AUTH).status_code == 400

    client.headers.update(AUTH)
    out = io.StringIO()
    assert (
        run_admin_status(argparse.Namespace(backfill=None, watch=False), make_settings("", ""), out, _unclosed(client))
        == 0
    )
    lines = out.getvalue().splitlines()
    assert lines[0] == "projects: 5 pending; 0 syncs running"
    assert [line.split(":")[0] for line in lines[1:]] == [f"backfill {b['id']} running" for b in running]


@pytest.mark.parametrize("path", ["/admin/projects", "/admin/projects/1", "/admin/jobs", "/admin/backfills"])
def test_the_lists_need_the_admin_token(client: TestClient, path: str) -> None:
    assert client.get(path).status_code == 401


def report(**progress: int) -> dict[str, Any]:
    return {
        "id": 7, "status": "running", "progress": progress, "files": 120, "chunks": 300, "files_per_s": 12.5,
        "eta_s": 40.0, "error": None,
    }  # fmt: skip


def test_render_shows_bars_on_a_terminal_and_one_line_otherwise() -> None:
    shown = render(report(done=3, queued=1), tty=True)
    assert shown[0] == f"backfill 7 running  {bar(3, 4)} 3/4 projects" and "ETA 40s" in shown[2]
    [line] = render(report(done=3, queued=1), tty=False)
    assert line.startswith("backfill 7 running: 3/4 projects (1 queued, 0 running, 3 done")
    assert bar(1, 2, width=4) == "[##..]" and bar(0, 0, width=2) == "[##]"
    [queued] = render(report() | {"status": "queued"}, tty=False)
    assert queued.endswith("0 chunks; listing the projects")  # not "ETA 0s" before a project is known
    assert render(report() | {"status": "queued"}, tty=True)[0].endswith(f"{bar(0, 1)} 0/0 projects")  # not full
    done = render(report(done=4) | {"status": "failed", "error": "listing failed"}, tty=True)
    assert done[2].endswith("12.5 files/s") and done[3] == "  error: listing failed"


def test_watch_redraws_in_place_on_a_terminal_until_the_backfill_ends() -> None:
    reports = iter([report(queued=2), report(done=1, running=1), report(done=2) | {"status": "done"}])
    out = io.StringIO()
    last = watch(lambda: next(reports), Screen(out, tty=True), follow=True, sleep=lambda s: None)
    assert last["status"] == "done"
    assert out.getvalue().count("\x1b[3F\x1b[J") == 2  # two redraws of the three lines


def test_reindex_body_tells_ids_from_paths() -> None:
    assert reindex_body("12", None, False, full=False, force=True) == {"project": 12, "full": False, "force": True}
    assert reindex_body(None, "acme/platform", False, full=True, force=False)["group"] == "acme/platform"
    assert reindex_body(None, None, True, full=False, force=False)["all"] is True


def test_the_cli_posts_a_reindex_and_prints_the_backfill(client: TestClient, clean_redis: str) -> None:
    client.headers.update(AUTH)
    args = argparse.Namespace(project="acme/shop", group=None, all=False, full=False, force=False, watch=False)
    out = io.StringIO()
    settings = make_settings("", clean_redis)
    assert run_admin_reindex(args, settings, out, http=_unclosed(client)) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("backfill ") and lines[0].endswith(" queued")
    assert lines[1].startswith(f"backfill {lines[0].split()[1]} queued: 0/0 projects")


def test_the_cli_status_counts_projects_by_state(client: TestClient, projects: list[int]) -> None:
    client.headers.update(AUTH)
    out = io.StringIO()
    args = argparse.Namespace(backfill=None, watch=False)
    assert run_admin_status(args, make_settings("", ""), out, http=_unclosed(client)) == 0
    assert out.getvalue() == "projects: 5 pending; 0 syncs running\n"


def test_the_cli_status_watch_redraws_bars_on_a_terminal_until_interrupted(
    client: TestClient, projects: list[int], clean_db: str
) -> None:
    client.headers.update(AUTH)
    out = Terminal()
    naps: list[float] = []

    def sleep(seconds: float) -> None:
        naps.append(seconds)
        if len(naps) == 2:
            raise KeyboardInterrupt  # Ctrl-C: how a watch ends
        fetch(clean_db, "UPDATE projects SET status = 'ok', done_gen = requested_gen WHERE id IN (10, 20) RETURNING id")

    args = argparse.Namespace(backfill=None, watch=True)
    assert run_admin_status(args, make_settings("", ""), out, http=_unclosed(client), sleep=sleep) == 0
    assert naps == [2.0, 2.0]
    assert out.getvalue() == (
        f"projects  {bar(0, 5)} 0/5 up to date\n  5 pending\n  0 syncs running\n"
        f"\x1b[3F\x1b[J"  # redrawn in place once the state changed; the third round showed nothing new
        f"projects  {bar(2, 5)} 2/5 up to date\n  2 ok, 3 pending\n  0 syncs running\n"
    )


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _unclosed:
    def __init__(self, client: TestClient) -> None:
        self.client = client

    def __enter__(self) -> TestClient:
        return self.client

    def __exit__(self, *exc: object) -> None:
        return None
