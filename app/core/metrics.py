"""The Prometheus metrics of the service, each declared once, in one registry per process.

Module-level metric objects are prometheus-client's own idiom (a metric is a process-wide counter,
as a logger is a process-wide sink); they live in `REGISTRY`, not the library's global one, so
`/metrics` shows exactly these and the process collectors. Web and worker are separate processes
with separate registries: the web app serves its own at `GET /metrics` on its port, the worker its
own at `GET /metrics` on its health port (`JAVAKB_WORKER__HEALTH_PORT`), and Prometheus scrapes
both (docs/decisions.md, "Metrics"). `javakb serve` is one process: one registry, one endpoint.

Label values are bounded by construction: event and outcome names are enums, GitLab endpoints are
URL templates (`gitlab_endpoint`), tools are the MCP tools' names. The per-project index lag is
not a label per project: a gauge per lag bucket counts projects, and only the `LAG_TOP` projects
furthest behind get a labelled gauge of their own.
"""

from __future__ import annotations

import re

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.platform_collector import PlatformCollector

from app.core.events import GitLabEvent

_EVENTS = frozenset(GitLabEvent)
REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(registry=REGISTRY)
PlatformCollector(registry=REGISTRY)

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
SYNC_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)
LAG_BUCKETS_S = (1.0, 5.0, 30.0, 60.0, 300.0, 900.0, 3600.0, 21600.0, 86400.0)
LAG_TOP = 10

DELIVERIES = Counter(
    "javakb_deliveries",
    "Webhook deliveries by event and outcome (refusals too: unauthorized, malformed, ...)",
    ["event", "outcome"],
    registry=REGISTRY,
)
QUEUE_DEPTH = Gauge("javakb_queue_depth", "Jobs in the arq queue, deferred retries included", registry=REGISTRY)
QUEUE_AGE = Gauge(
    "javakb_queue_oldest_age_seconds", "How long the oldest job that is due has waited (0: none due)", registry=REGISTRY
)
SYNC_RUNS = Counter("javakb_sync_runs", "Sync runs by mode and outcome", ["mode", "outcome"], registry=REGISTRY)
SYNC_SECONDS = Histogram(
    "javakb_sync_duration_seconds", "Seconds per sync run, by mode", ["mode"], buckets=SYNC_BUCKETS, registry=REGISTRY
)
FILES = Counter("javakb_files_processed", "Files a sync handled, by result", ["result"], registry=REGISTRY)
CHUNKS = Counter("javakb_chunks_processed", "Chunks a sync wrote, by action", ["action"], registry=REGISTRY)
EMBED_REQUESTS = Counter(
    "javakb_embedding_requests", "Requests to the embedding endpoint, by outcome", ["outcome"], registry=REGISTRY
)
EMBED_INPUTS = Counter("javakb_embedding_inputs", "Texts sent to be embedded", registry=REGISTRY)
EMBED_TOKENS = Counter(
    "javakb_embedding_tokens",
    "Tokens embedded, as estimated before sending (`estimate_tokens`; usage would mean parsing answers twice)",
    registry=REGISTRY,
)
EMBED_ERRORS = Counter(
    "javakb_embedding_errors", "Failed embedding attempts, by kind (HTTP status or error)", ["kind"], registry=REGISTRY
)
EMBED_SECONDS = Histogram(
    "javakb_embedding_request_seconds", "Seconds per embedding request", buckets=LATENCY_BUCKETS, registry=REGISTRY
)
GITLAB_REQUESTS = Counter(
    "javakb_gitlab_requests", "GitLab API responses, by endpoint template and status", ["endpoint", "status"],
    registry=REGISTRY,
)  # fmt: skip
RATE_LIMIT_WAITS = Counter(
    "javakb_rate_limit_waits", "Times an upstream's 429 made us wait, by upstream", ["upstream"], registry=REGISTRY
)
RATE_LIMIT_SECONDS = Counter(
    "javakb_rate_limit_wait_seconds", "Seconds waited on upstreams' 429, by upstream", ["upstream"], registry=REGISTRY
)
TOOL_SECONDS = Histogram(
    "javakb_tool_duration_seconds", "Seconds per MCP tool call or REST search, by tool and outcome",
    ["tool", "outcome"], buckets=LATENCY_BUCKETS, registry=REGISTRY,
)  # fmt: skip
PROJECTS = Gauge("javakb_projects", "Projects by shown state", ["state"], registry=REGISTRY)
LAGGING = Gauge(
    "javakb_projects_lagging", "Projects behind for at least `ge` seconds (0: every project behind)", ["ge"],
    registry=REGISTRY,
)  # fmt: skip
LAG_MAX = Gauge("javakb_index_lag_max_seconds", "How long the project furthest behind has been", registry=REGISTRY)
PROJECT_LAG = Gauge(
    "javakb_project_index_lag_seconds", f"Lag of the {LAG_TOP} projects furthest behind", ["project"],
    registry=REGISTRY,
)  # fmt: skip

_NUMBER = re.compile(r"^\d+$")
_SHA = re.compile(r"^[0-9a-f]{7,64}$")


def gitlab_endpoint(path: str) -> str:
    """The template of a GitLab API path: ids, shas and encoded names become placeholders (bounded labels).

    `/api/v4/projects/12/repository/blobs/ab12.../raw` → `/projects/:id/repository/blobs/:sha/raw`.
    """
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    if parts[:2] == ["api", "v4"]:
        parts = parts[2:]
    out: list[str] = []
    for i, part in enumerate(parts):
        previous = parts[i - 1] if i else ""
        if _NUMBER.match(part) or (previous == "projects" and "%2F" in part.upper()) or previous == "groups":
            out.append(":id")  # a group is named by id or path (a backfill's `GET /groups/acme/projects`)
        elif previous == "files":  # `repository/files/<path>`: the path is one URL-encoded segment
            out.append(":path")
        elif _SHA.match(part) and previous in ("blobs", "commits"):
            out.append(":sha")
        elif previous == "branches":
            out.append(":branch")
        else:
            out.append(part)
    return "/" + "/".join(out)


UNREAD = "unread"
"""The `event` of a refused delivery whose body was not read or not parsed (refused before its event was known)."""


def event_label(name: str | None) -> str:
    """A delivery's event as a label: one of ours, else `other` (an ignored event keeps any name GitLab sent)."""
    if name is None:
        return UNREAD
    return name if name in _EVENTS else "other"


def exposition() -> bytes:
    """The text exposition of every metric of this process."""
    return generate_latest(REGISTRY)
