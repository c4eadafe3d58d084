"""`javakb admin reindex` and `javakb admin status`: the admin API over HTTP, with progress on a terminal.

The CLI talks to a running service (`JAVAKB_ADMIN__URL`, default `http://HOST:PORT`) with an admin
token (`JAVAKB_ADMIN__TOKEN`), never to PostgreSQL directly: what it shows is what the API answers.
On a terminal each report redraws progress bars in place; otherwise one plain line is printed per
change, so a log or a CI job gets a readable history. Rendering is pure (`render`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

import httpx

from app.core.errors import ConfigError, ServiceError
from app.core.settings import Settings
from app.core.states import BackfillProgress, BackfillStatus, ProjectStatus

BAR_WIDTH = 30
FINISHED = frozenset({BackfillStatus.DONE.value, BackfillStatus.FAILED.value})
SETTLED = (BackfillProgress.DONE, BackfillProgress.FAILED, BackfillProgress.SKIPPED)


class AdminApiError(ServiceError):
    """The admin API refused or failed a request (its message is shown as is)."""


def base_url(settings: Settings) -> str:
    """Where the admin API is: the setting, else this host's own web server."""
    return (settings.admin.url or f"http://{settings.host}:{settings.port}").rstrip("/")


def admin_client(settings: Settings) -> httpx.Client:
    """An HTTP client for the admin API with the admin token (refused without one)."""
    if settings.admin.token is None:
        raise ConfigError("set JAVAKB_ADMIN__TOKEN to an admin token (one of JAVAKB_ADMIN_TOKENS, in clear)")
    headers = {"Authorization": f"Bearer {settings.admin.token.get_secret_value()}"}
    return httpx.Client(base_url=base_url(settings), headers=headers, timeout=30.0)


def call(http: httpx.Client, method: str, path: str, **kwargs: Any) -> Any:
    """One admin request; its JSON body, or `AdminApiError` with the API's own message."""
    try:
        response = http.request(method, path, **kwargs)
    except httpx.HTTPError as exc:
        raise AdminApiError(f"cannot reach the admin API at {http.base_url}: {exc}") from exc
    if response.status_code >= 400:
        try:
            message = response.json().get("error", response.text)
        except ValueError:
            message = response.text[:200]
        raise AdminApiError(f"HTTP {response.status_code}: {message}")
    return response.json()


def reindex_body(project: str | None, group: str | None, every: bool, *, full: bool, force: bool) -> dict[str, Any]:
    """The `POST /admin/reindex` body for the CLI's flags (a numeric value is an id, anything else a path)."""
    body: dict[str, Any] = {"full": full, "force": force}
    if project is not None:
        body["project"] = int(project) if project.isdigit() else project
    elif group is not None:
        body["group"] = int(group) if group.isdigit() else group
    elif every:
        body["all"] = True
    return body


def bar(done: int, total: int, width: int = BAR_WIDTH) -> str:
    """`[#####.....]` for `done` of `total`."""
    filled = width if total <= 0 else min(width, round(width * done / total))
    return "[" + "#" * filled + "." * (width - filled) + "]"


def pace(report: Mapping[str, Any]) -> str:
    """Throughput, with the ETA while the backfill runs (a queued one is still listing its projects)."""
    if report["status"] == BackfillStatus.QUEUED.value:
        return "listing the projects"
    rate = f"{report.get('files_per_s', 0):.1f} files/s"
    if report["status"] in FINISHED:
        return rate
    eta = report.get("eta_s")
    return f"{rate}, ETA {'?' if eta is None else f'{eta:.0f}s'}"


def render(report: Mapping[str, Any], *, tty: bool) -> list[str]:
    """The lines that show a backfill report: bars and rates on a terminal, one plain line otherwise."""
    progress: Mapping[str, int] = report.get("progress") or {}
    total = sum(progress.values())
    settled = sum(progress.get(p, 0) for p in SETTLED)
    counts = ", ".join(f"{progress.get(p, 0)} {p}" for p in BackfillProgress)
    head = f"backfill {report['id']} {report['status']}"
    error = f"error: {report['error']}" if report.get("error") else None
    if not tty:
        line = f"{head}: {settled}/{total} projects ({counts}); {report['files']} files, {report['chunks']} chunks"
        return [f"{line}; {pace(report)}" + (f"; {error}" if error else "")]
    lines = [
        f"{head}  {bar(settled, total if total or report['status'] in FINISHED else 1)} {settled}/{total} projects",
        f"  {counts}",
        f"  {report['files']} files, {report['chunks']} chunks, {pace(report)}",
    ]
    return [*lines, f"  {error}"] if error else lines


@dataclass
class Screen:
    """Writes successive renderings: redrawn in place on a terminal, appended when changed otherwise."""

    out: TextIO
    tty: bool
    _shown: list[str] | None = None

    def show(self, lines: list[str]) -> None:
        """Show `lines`, replacing what was shown before on a terminal."""
        if lines == self._shown:
            return
        if self.tty and self._shown:
            self.out.write(f"\x1b[{len(self._shown)}F\x1b[J")  # back to the first line shown, clear below
        self.out.write("".join(f"{line}\n" for line in lines))
        self.out.flush()
        self._shown = lines


def watch(
    fetch: Callable[[], Mapping[str, Any]],
    screen: Screen,
    *,
    follow: bool,
    every_s: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
) -> Mapping[str, Any]:
    """Show a backfill report, and with `follow` keep showing it until the backfill is finished."""
    while True:
        report = fetch()
        screen.show(render(report, tty=screen.tty))
        if not follow or report["status"] in FINISHED:
            return report
        sleep(every_s)


def render_projects(counts: Mapping[str, int], running: int, *, tty: bool) -> list[str]:
    """The lines of `javakb admin status`: projects by state and the syncs running; a bar of the up-to-date ones."""
    shown = ", ".join(f"{n} {state}" for state, n in sorted(counts.items())) or "no projects yet"
    if not tty:
        return [f"projects: {shown}; {running} syncs running"]
    total, current = sum(counts.values()), counts.get(ProjectStatus.OK, 0)
    return [f"projects  {bar(current, total)} {current}/{total} up to date", f"  {shown}", f"  {running} syncs running"]


def watch_status(
    http: httpx.Client,
    screen: Screen,
    *,
    follow: bool,
    every_s: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Show the projects' states and each running backfill's progress once, or with `follow` until Ctrl-C."""
    while True:
        running = call(http, "GET", "/admin/jobs", params={"status": "running", "per_page": 1000})
        lines = render_projects(project_summary(http), len(running), tty=screen.tty)
        for backfill in call(http, "GET", "/admin/backfills", params={"status": "running", "per_page": 1000}):
            report = call(http, "GET", f"/admin/backfills/{backfill['id']}", params={"per_page": 1})
            lines += render(report, tty=screen.tty)
        screen.show(lines)
        if not follow:
            return
        sleep(every_s)


def failures(report: Mapping[str, Any]) -> Iterable[str]:
    """One line per project the report lists as failed (the report's `?state=failed` page)."""
    for result in report.get("results", []):
        where = result.get("repo_path") or result["project_id"]
        yield f"  failed: {where} ({result['outcome']}): {result.get('detail') or ''}"


def project_summary(http: httpx.Client, per_page: int = 1000) -> dict[str, int]:
    """Every project counted by state, walking `GET /admin/projects` page by page."""
    counts: dict[str, int] = {}
    after = 0
    while True:
        page: list[dict[str, Any]] = call(http, "GET", "/admin/projects", params={"after": after, "per_page": per_page})
        for project in page:
            counts[project["status"]] = counts.get(project["status"], 0) + 1
        if len(page) < per_page:
            return counts
        after = page[-1]["id"]
