"""The operator's page as HTML, from a `StatusModel` (pure): no script, one inline stylesheet, no external asset.

Every value is escaped: `fill` substitutes a `string.Template` with each value passed through `esc`,
and only a fragment `fill` itself produced (`Html`) goes in as it is. Project paths, branch names and
error texts come from GitLab and from failures: they are data, never markup. The page reloads itself
every `REFRESH_S` seconds (`<meta http-equiv="refresh">`), so it needs no script at all, and the
Content-Security-Policy (`HEADERS`) allows nothing but its own stylesheet (by hash) and forms to itself.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Iterable
from datetime import datetime
from string import Template

from app.console.model import StatusModel
from app.ops.admin_client import SETTLED
from app.rest.schemas import BackfillReport, JobState
from app.sync.status import StatusItem

REFRESH_S = 5
SIGN_IN_PATH = "/admin/sign-in"
SIGN_OUT_PATH = "/admin/sign-out"

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em;margin:0}h2{font-size:1.1em;margin:1.4em 0 .4em}
header{display:flex;gap:1em;align-items:baseline;flex-wrap:wrap}
.muted{color:#666}.cards{display:flex;gap:1em;flex-wrap:wrap;margin-top:1em}
.card{border:1px solid #ccc;border-radius:6px;padding:.6em 1em;min-width:12em}.card h2{margin:.2em 0 .4em}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.25em .6em;border-bottom:1px solid #eee}
td.error{color:#a00;max-width:40em;overflow-wrap:anywhere}.alert{background:#fee;border:1px solid #c66;padding:.5em}
.state{font-weight:600}.state-ok{color:#070}.state-failed{color:#a00}.state-pending,.state-syncing{color:#a60}
code{font-size:.9em}form{display:inline}
"""
_STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
CSP = (
    f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class Html(str):
    """A fragment of markup that `fill` built: put in as it is, never escaped again."""

    __slots__ = ()


def esc(value: object) -> Html:
    """`value` as text in HTML (an `Html` fragment stays as it is; None shows as a dash)."""
    if isinstance(value, Html):
        return value
    return Html(html.escape("-" if value is None else str(value), quote=True))


def fill(template: Template, **values: object) -> Html:
    """`template` with every value escaped (`esc`)."""
    return Html(template.substitute({name: esc(value) for name, value in values.items()}))


def join(parts: Iterable[Html]) -> Html:
    """Fragments one after the other."""
    return Html("".join(parts))


_DOCUMENT = Template("""<!doctype html>
<html lang="en"><head><meta charset="utf-8">$refresh
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>$title</title><style>$style</style></head>
<body>$body</body></html>
""")
_REFRESH = Template('\n<meta http-equiv="refresh" content="$seconds">')


def document(title: str, body: Html, *, refresh_s: int | None = None) -> str:
    """A whole page."""
    refresh = fill(_REFRESH, seconds=refresh_s) if refresh_s else Html("")
    return fill(_DOCUMENT, title=title, body=body, refresh=refresh, style=Html(STYLE))


_SIGN_IN = Template("""<h1>java-kb-indexer: sign in</h1>$message
<form method="post" action="$action"><p><label>Admin token
<input type="password" name="token" autocomplete="off" required autofocus></label>
<button type="submit">Sign in</button></p></form>
<p class="muted">An admin token (one of JAVAKB_ADMIN_TOKENS, in clear). The session lasts a working day.</p>""")
_ALERT = Template('<p class="alert" role="alert">$text</p>')


def render_sign_in(message: str | None = None) -> str:
    """The sign-in form, with why the last try was refused."""
    alert = fill(_ALERT, text=message) if message else Html("")
    return document("java-kb-indexer: sign in", fill(_SIGN_IN, message=alert, action=SIGN_IN_PATH))


_HEADER = Template("""<header><h1>java-kb-indexer</h1><span class="muted">as of $at, refreshed every $refresh s</span>
<form method="post" action="$sign_out"><button type="submit">Sign out</button></form></header>$alerts
<div class="cards">$cards</div>""")
_CARD = Template('<div class="card"><h2>$title</h2>$body</div>')
_LINE = Template("<div>$text</div>")


def render_status(model: StatusModel, *, refresh_s: int = REFRESH_S) -> str:
    """The status page of `model`."""
    alerts = join(
        fill(_ALERT, text=f"{part} could not be read: {why}") for part, why in sorted(model.unavailable.items())
    )
    cards = join([_projects_card(model.projects.states), _queue_card(model), _index_card(model)])
    header = fill(_HEADER, at=_moment(model.at), refresh=refresh_s, sign_out=SIGN_OUT_PATH, alerts=alerts, cards=cards)
    table = _project_table(model.projects.listed, model.projects.total)
    sections = join([_syncs(model.syncs, model.projects.repos), _backfills(model.backfills), table])
    return document("java-kb-indexer: status", join([header, sections]), refresh_s=refresh_s)


def _projects_card(states: dict[str, int]) -> Html:
    lines = [fill(_LINE, text=f"{n} {state}") for state, n in sorted(states.items())] or [fill(_LINE, text="none yet")]
    return fill(_CARD, title=f"Projects: {sum(states.values())}", body=join(lines))


def _queue_card(model: StatusModel) -> Html:
    if model.queue is None:
        return fill(_CARD, title="Queue", body=fill(_LINE, text="unavailable"))
    lines = [fill(_LINE, text=f"{model.queue.depth} {'job' if model.queue.depth == 1 else 'jobs'} waiting")]
    if model.queue.depth:
        lines.append(fill(_LINE, text=f"oldest due for {duration(model.queue.oldest_due_s)}"))
    return fill(_CARD, title="Queue", body=join(lines))


def _index_card(model: StatusModel) -> Html:
    if model.index is None:
        return fill(_CARD, title="Index", body=fill(_LINE, text="unavailable"))
    lines = [fill(_LINE, text=f"model: {model.index.model}"), fill(_LINE, text=f"{model.index.points} chunks")]
    return fill(_CARD, title="Index", body=join(lines))


_SECTION = Template("<section><h2>$title</h2>$content</section>")
_TABLE = Template("<table><thead><tr>$head</tr></thead><tbody>$rows</tbody></table>")
_TH = Template("<th>$text</th>")
_TD = Template("<td>$text</td>")
_TD_CLASS = Template('<td class="$cls">$text</td>')
_TR = Template("<tr>$cells</tr>")
_NONE = Template('<p class="muted">$text</p>')


def _table(head: list[str], rows: list[list[Html]]) -> Html:
    cells = join(fill(_TR, cells=join(row)) for row in rows)
    return fill(_TABLE, head=join(fill(_TH, text=h) for h in head), rows=cells)


def _td(value: object) -> Html:
    return fill(_TD, text=value)


def _syncs(syncs: list[JobState], repos: dict[int, str]) -> Html:
    if not syncs:
        return fill(_SECTION, title="Running syncs", content=fill(_NONE, text="none"))
    rows = [
        [
            _td(repos.get(s.project_id, f"project {s.project_id}")),
            _td(s.trigger),
            _td(s.mode),
            _td(_moment(s.started_at)),
            _td(s.files_changed),
            _td(f"{s.chunks_embedded} embedded, {s.chunks_reused} reused, {s.chunks_deleted} deleted"),
        ]
        for s in syncs
    ]
    head = ["project", "trigger", "mode", "started", "files changed", "chunks"]
    return fill(_SECTION, title=f"Running syncs: {len(syncs)}", content=_table(head, rows))


_PROGRESS = Template('<progress max="$total" value="$done"></progress> $done/$total projects')


def _backfills(backfills: list[BackfillReport]) -> Html:
    if not backfills:
        return fill(_SECTION, title="Backfills", content=fill(_NONE, text="none running"))
    rows = []
    for b in backfills:
        total = sum(b.progress.values())
        done = sum(n for state, n in b.progress.items() if state in SETTLED)
        eta = "-" if b.eta_s is None else duration(b.eta_s)
        rows.append(
            [
                _td(b.id),
                _td(b.status),
                _td(json.dumps(b.target, sort_keys=True)),
                _td(fill(_PROGRESS, total=max(total, 1), done=done)),
                _td(", ".join(f"{n} {state}" for state, n in sorted(b.progress.items())) or "listing the projects"),
                _td(f"{b.files} files, {b.files_per_s:.1f} files/s, ETA {eta}"),
                fill(_TD_CLASS, cls="error", text=b.error),
            ]
        )
    head = ["id", "status", "target", "progress", "projects", "files", "error"]
    return fill(_SECTION, title=f"Backfills: {len(backfills)}", content=_table(head, rows))


def _project_table(shown: list[StatusItem], total: int) -> Html:
    if not shown:
        return fill(_SECTION, title="Projects", content=fill(_NONE, text="no project synced yet"))
    rows = [
        [
            _td(p["repo"]),
            fill(_TD_CLASS, cls=f"state state-{p['state']}", text=p["state"] + (" (syncing)" if p["syncing"] else "")),
            _td(lag(p)),
            _td((p["indexed_sha"] or "-")[:12]),
            _td(_moment_text(p["indexed_at"])),
            _td(f"{p['files']} files, {p['chunks']} chunks"),
            _td(p["last_run"] and f"{p['last_run']} ({p['last_run_trigger'] or '-'})"),
            fill(_TD_CLASS, cls="error", text=p["last_error"]),
        ]
        for p in shown
    ]
    more = total - len(shown)
    note = fill(_NONE, text=f"{more} more, up to date: GET /admin/projects lists every one") if more else Html("")
    head = ["project", "state", "lag", "indexed", "indexed at", "size", "last run", "last error"]
    return fill(_SECTION, title=f"Projects: {total}", content=join([_table(head, rows), note]))


def lag(item: StatusItem) -> str:
    """How far behind GitLab a project is, in words."""
    if not item["behind"]:
        return "up to date"
    commits = "?" if item["lag_commits"] is None else str(item["lag_commits"])
    since = "" if item["lag_seconds"] is None else f" for {duration(item['lag_seconds'])}"
    return f"{commits} commits behind{since}"


def duration(seconds: float) -> str:
    """`42 s`, `3 min 5 s`, `2 h 10 min`."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def _moment(at: datetime | None) -> str:
    return "-" if at is None else at.strftime("%Y-%m-%d %H:%M:%S %Z").strip()


def _moment_text(iso: str | None) -> str:
    return "-" if iso is None else _moment(datetime.fromisoformat(iso))
