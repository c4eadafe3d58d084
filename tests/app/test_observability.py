"""Issue 14, observability: JSON log lines with the delivery, project, job and request ids, no secret in
any line, and `/metrics` of the web app and of the worker parsed by prometheus-client's own parser."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import logging.config
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr
from starlette.testclient import TestClient

from app.core import metrics
from app.core.context import bound
from app.core.logs import REDACTED, log_config
from app.core.metrics import LAG_TOP, gitlab_endpoint
from app.core.settings import EmbeddingSettings, Settings
from app.core.startup_checks import secret_values
from app.ops.scrape import guarded
from app.ops.worker_health import health_endpoint
from entry.web import create_app
from testkit.fake_embedder import FakeEmbeddingServer
from testkit.payloads import system_hook_push
from testkit.sync_env import sync_env
from tests.app.test_sync_scenarios import SRC
from tests.hooks.test_receiver import SECRET, fetch, make_settings, post
from tests.mcp_server.test_http import STREAMABLE, Session2025
from tests.support.pg_outage import set_outage
from tests.support.sources import repo_service_java as service
from tests.support.tokens import admin_token, service_token

METRICS = "metrics-token-for-tests-0123"
EMBED_KEY = "sk-embedding-key-for-tests-0123"
ADMIN = "admin-token-for-tests-0123"
OUR_LOGGERS = ("entry", "app", "hooks", "mcp_server", "arq")


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """Our loggers through the handler `log_config` builds (JSON, redacting), into a buffer."""
    yield io.StringIO()


def capture(out: io.StringIO, settings: Settings) -> None:
    config = log_config("INFO", "json", secret_values(settings))
    config["handlers"]["stderr"]["stream"] = out
    config["loggers"] = {name: {"level": "INFO", "handlers": ["stderr"], "propagate": False} for name in OUR_LOGGERS}
    del config["root"]
    logging.config.dictConfig(config)


def release() -> None:
    for name in OUR_LOGGERS:
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True


def records(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]  # every line is one JSON object


def scrape(text: str) -> dict[str, float]:
    """`name{label=value,...}` → value of every sample, through prometheus-client's parser."""
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
            samples[f"{s.name}{{{labels}}}"] = s.value
    return samples


def test_a_delivery_logs_a_json_line_with_its_ids_and_no_secret(
    clean_db: str, clean_redis: str, json_lines: io.StringIO
) -> None:
    settings = make_settings(clean_db, clean_redis).model_copy(
        update={"embedding": EmbeddingSettings(api_key=SecretStr(EMBED_KEY)), "metrics_tokens": []}
    )
    capture(json_lines, settings)
    try:
        with TestClient(create_app(settings)) as client:
            answer = client.post(
                "/hooks/gitlab",
                content=json.dumps(system_hook_push()),
                headers={"X-Gitlab-Token": SECRET, "X-Request-Id": "req-7", "Idempotency-Key": "d-1"},
            )
            assert answer.status_code == 202 and answer.headers["x-request-id"] == "req-7"
            assert client.get("/healthz").headers["x-request-id"] != "req-7"  # a new id for each request
            logging.getLogger("app.test").warning("quoting %s and %s", EMBED_KEY, SECRET)
    finally:
        release()
    lines = records(json_lines)
    delivery = next(r for r in lines if r["message"].startswith("delivery d-1"))
    project_id = str(system_hook_push()["project_id"])
    assert (delivery["delivery_id"], delivery["request_id"], delivery["project_id"]) == ("d-1", "req-7", project_id)
    assert {"time", "level", "logger", "message"} <= set(delivery)
    assert EMBED_KEY not in json_lines.getvalue() and SECRET not in json_lines.getvalue()
    assert json_lines.getvalue().count(REDACTED) == 2  # the line that quoted both


async def test_a_sync_logs_json_lines_with_its_project_and_job_ids_and_no_secret(
    tmp_path: Path, clean_db: str, clean_redis: str, json_lines: io.StringIO
) -> None:
    async with sync_env(tmp_path, clean_db, clean_redis) as env:
        project = env.gitlab.create_project("acme/shop")
        capture(json_lines, env.settings)
        try:
            await env.push(project, {SRC + "A.java": service("A")})
            await env.work()
        finally:
            release()
        token = env.settings.gitlab.token
    lines = records(json_lines)
    synced = next(r for r in lines if r["message"].startswith(f"sync {project.id} "))
    assert synced["project_id"] == str(project.id) and synced["job_id"].startswith("sync:")
    assert token is not None and token.get_secret_value() not in json_lines.getvalue()


def test_ids_follow_the_context_and_text_lines_name_them(json_lines: io.StringIO) -> None:
    config = log_config("INFO", "text")
    config["handlers"]["stderr"]["stream"] = json_lines
    config["loggers"] = {"tests.ids": {"level": "INFO", "handlers": ["stderr"], "propagate": False}}
    del config["root"]
    logging.config.dictConfig(config)
    logger = logging.getLogger("tests.ids")
    try:
        with bound(project_id=12, job_id="sync:12:3"):
            logger.info("inside")
        logger.info("outside")
    finally:
        logger.handlers.clear()
    inside, outside = json_lines.getvalue().splitlines()
    assert inside.endswith("inside [project_id=12 job_id=sync:12:3]")
    assert outside.endswith("outside")


def test_gitlab_endpoints_are_templates() -> None:
    assert gitlab_endpoint("/api/v4/projects/12/repository/blobs/0123abcd0123abcd/raw") == (
        "/projects/:id/repository/blobs/:sha/raw"
    )
    assert gitlab_endpoint("/api/v4/projects/acme%2Fshop/repository/files/src%2FA.java/raw?ref=x") == (
        "/projects/:id/repository/files/:path/raw"
    )
    assert gitlab_endpoint("/api/v4/projects/12/repository/branches/feature%2Fx") == (
        "/projects/:id/repository/branches/:branch"
    )
    assert gitlab_endpoint("/api/v4/projects/12/repository/compare") == "/projects/:id/repository/compare"
    assert gitlab_endpoint("/api/v4/projects") == "/projects"


def test_the_web_apps_metrics_parse_and_show_deliveries_queue_and_lag(clean_db: str, clean_redis: str) -> None:
    settings = make_settings(clean_db, clean_redis).model_copy(
        update={"metrics_tokens": [admin_token(METRICS, "prometheus")]}
    )
    with TestClient(create_app(settings)) as client:
        assert client.get("/metrics").status_code == 401
        assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
        before = scrape(client.get("/metrics", headers={"Authorization": f"Bearer {METRICS}"}).text)
        post(client, system_hook_push(), key="m-1")
        assert post(client, system_hook_push(), key="m-2", token="a-rotated-secret").status_code == 401
        assert client.post("/hooks/gitlab", content=b"{", headers={"X-Gitlab-Token": SECRET}).status_code == 400
        web = client.get("/metrics", headers={"Authorization": f"Bearer {METRICS}"})
    assert web.status_code == 200 and web.headers["content-type"].startswith("text/plain")
    samples = scrape(web.text)
    key = "javakb_deliveries_total{event=push,outcome=enqueued}"
    assert samples[key] == before.get(key, 0) + 1
    for outcome in ("unauthorized", "malformed"):  # refusals are deliveries too: a rotated secret shows here
        key = f"javakb_deliveries_total{{event=unread,outcome={outcome}}}"
        assert samples[key] == before.get(key, 0) + 1
    assert samples["javakb_queue_depth{}"] == 1  # nobody works the queue here
    assert samples["javakb_queue_oldest_age_seconds{}"] >= 0
    assert samples["javakb_projects{state=pending}"] == 1
    assert samples["javakb_projects_lagging{ge=0}"] == 1 and samples["javakb_projects_lagging{ge=3600}"] == 0
    lagging = [k for k in samples if k.startswith("javakb_project_index_lag_seconds{")]
    assert lagging == [
        f"javakb_project_index_lag_seconds{{project={system_hook_push()['project']['path_with_namespace']}}}"
    ]


ISSUE_FAMILIES = {  # every family issue 14 names, as prometheus-client's parser names them
    "javakb_deliveries": "counter",  # by event and outcome
    "javakb_queue_depth": "gauge",
    "javakb_queue_oldest_age_seconds": "gauge",
    "javakb_sync_runs": "counter",  # by mode and outcome
    "javakb_sync_duration_seconds": "histogram",  # by mode
    "javakb_files_processed": "counter",
    "javakb_chunks_processed": "counter",
    "javakb_embedding_requests": "counter",
    "javakb_embedding_inputs": "counter",
    "javakb_embedding_tokens": "counter",
    "javakb_embedding_errors": "counter",
    "javakb_embedding_request_seconds": "histogram",
    "javakb_gitlab_requests": "counter",  # by endpoint template and status
    "javakb_rate_limit_waits": "counter",
    "javakb_rate_limit_wait_seconds": "counter",
    "javakb_tool_duration_seconds": "histogram",  # search and tool latency by tool
    "javakb_projects_lagging": "gauge",  # index lag, bounded: buckets ...
    "javakb_index_lag_max_seconds": "gauge",
    "javakb_project_index_lag_seconds": "gauge",  # ... and the LAG_TOP projects furthest behind
}
SEARCHER = "service-token-for-metrics-0123"


def test_every_family_the_issue_names_parses_and_tools_and_lag_are_bounded(clean_db: str, clean_redis: str) -> None:
    lagging = LAG_TOP + 5
    values = ", ".join(f"({i}, 'acme/lag{i}', 1, now() - interval '{i} minutes')" for i in range(1, lagging + 1))
    fetch(clean_db, f"INSERT INTO projects (id, repo_path, requested_gen, behind_since) VALUES {values} RETURNING id")
    settings = make_settings(clean_db, clean_redis).model_copy(
        update={
            "metrics_tokens": [admin_token(METRICS, "prometheus")],
            "service_tokens": [service_token(SEARCHER, name="agent")],
        }
    )
    with TestClient(create_app(settings)) as client:
        before = scrape(client.get("/metrics", headers={"Authorization": f"Bearer {METRICS}"}).text)
        assert client.get("/api/v1/search", params={"q": "owner"}, headers={"Authorization": f"Bearer {SEARCHER}"})
        session = Session2025(cast("httpx.Client", client))  # TestClient speaks httpx's API (starlette's own copy)
        session.headers = STREAMABLE | {"Authorization": f"Bearer {SEARCHER}"}
        session.start()
        session.request("tools/call", {"name": "index_status", "arguments": {}})
        session.request("tools/call", {"name": "get_symbol", "arguments": {"name": "Nothing.here"}})
        text = client.get("/metrics", headers={"Authorization": f"Bearer {METRICS}"}).text
    families = {f.name: f.type for f in text_string_to_metric_families(text)}
    assert {name: families.get(name) for name in ISSUE_FAMILIES} == ISSUE_FAMILIES
    samples = scrape(text)
    for tool, outcome in (("rest_search", "ok"), ("index_status", "ok"), ("get_symbol", "error")):
        key = f"javakb_tool_duration_seconds_count{{outcome={outcome},tool={tool}}}"
        assert samples.get(key) == before.get(key, 0) + 1, key  # index_status was `unknown` before the audit
    per_project = sorted(k for k in samples if k.startswith("javakb_project_index_lag_seconds{"))
    assert len(per_project) == LAG_TOP  # not one series per project: the furthest behind only
    assert per_project == sorted(
        f"javakb_project_index_lag_seconds{{project=acme/lag{i}}}" for i in range(lagging, lagging - LAG_TOP, -1)
    )
    assert samples["javakb_projects_lagging{ge=0}"] == lagging and samples["javakb_projects_lagging{ge=300}"] == 11
    assert samples["javakb_index_lag_max_seconds{}"] >= lagging * 60


def test_without_a_metrics_token_there_is_no_metrics_endpoint(clean_db: str, clean_redis: str) -> None:
    with TestClient(create_app(make_settings(clean_db, clean_redis))) as client:
        assert client.get("/metrics").status_code == 404


async def test_the_workers_metrics_on_its_health_port_count_syncs_embeddings_and_gitlab_calls(
    tmp_path: Path, clean_db: str, clean_redis: str
) -> None:
    with FakeEmbeddingServer(dim=16) as embedder:
        async with sync_env(tmp_path, clean_db, clean_redis, embedding_url=embedder.base_url) as env:
            worker = env.settings.worker.model_copy(update={"health_port": _free_port()})
            settings = env.settings.model_copy(
                update={"metrics_tokens": [admin_token(METRICS, "prometheus")], "worker": worker}
            )
            deps = replace(env.deps, settings=settings)  # the worker's own settings, with its metrics token
            project = env.gitlab.create_project("acme/shop")
            before = scrape(metrics.exposition().decode())
            env.gitlab.fail_next(1, status=500, path_contains="/repository/archive")  # the first sync walks the tree
            env.gitlab.fail_next(1, status=429, retry_after="0", path_contains="/repository/tree")
            embedder.fail_next(1, status=429, retry_after="0")
            await env.push(project, {SRC + "A.java": service("A"), SRC + "B.java": service("B")})
            await env.work()
            async with health_endpoint(settings, deps.queue, guarded(deps)):
                url = f"http://127.0.0.1:{worker.health_port}/metrics"
                async with httpx.AsyncClient() as client:
                    refused = await client.get(url)
                    answer = await client.get(url, headers={"Authorization": f"Bearer {METRICS}"})
    assert refused.status_code == 401
    assert answer.status_code == 200
    samples = scrape(answer.text)
    assert samples["javakb_sync_runs_total{mode=tree,outcome=done}"] >= 1
    assert samples["javakb_sync_duration_seconds_count{mode=tree}"] >= 1
    assert samples["javakb_chunks_processed_total{action=embedded}"] > 0
    assert samples["javakb_files_processed_total{result=parsed}"] >= 2
    assert samples["javakb_embedding_requests_total{outcome=ok}"] >= 1
    assert samples["javakb_embedding_inputs_total{}"] > 0 and samples["javakb_embedding_tokens_total{}"] > 0
    assert samples["javakb_embedding_request_seconds_count{}"] >= 1
    assert samples["javakb_gitlab_requests_total{endpoint=/projects/:id,status=200}"] >= 1
    assert samples["javakb_projects{state=ok}"] == 1
    assert "javakb_queue_depth{}" in samples
    for upstream in ("gitlab", "embedding"):  # each 429 is a wait, counted once
        key = f"javakb_rate_limit_waits_total{{upstream={upstream}}}"
        assert samples[key] == before.get(key, 0) + 1
    assert samples["javakb_gitlab_requests_total{endpoint=/projects/:id/repository/tree,status=429}"] >= 1
    assert samples["javakb_embedding_errors_total{kind=429}"] >= 1


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_readiness_shows_states_to_anyone_and_reasons_to_a_metrics_or_admin_token(
    clean_db: str, clean_redis: str
) -> None:
    settings = make_settings(clean_db, clean_redis).model_copy(
        update={"metrics_tokens": [admin_token(METRICS, "prometheus")], "admin_tokens": [admin_token(ADMIN)]}
    )
    database = clean_db.rsplit("/", 1)[1]
    with TestClient(create_app(settings)) as client:
        asyncio.run(set_outage(clean_db, down=True))  # the driver's error names the database and server
        try:
            anyone = client.get("/readyz")
            wrong = client.get("/readyz", headers={"Authorization": "Bearer not-a-token"})
            detailed = [client.get("/readyz", headers={"Authorization": f"Bearer {t}"}) for t in (METRICS, ADMIN)]
        finally:
            asyncio.run(set_outage(clean_db, down=False))

    assert anyone.status_code == 200 and anyone.json() == {
        "ready": True,
        "degraded": True,
        "checks": {"postgres": "error", "redis": "ok", "qdrant": "ok"},
    }
    assert database not in anyone.text
    assert wrong.json() == anyone.json()
    for answer in detailed:
        reason = answer.json()["checks"]["postgres"]
        assert reason.startswith("error: PostgreSQL") and database in reason, reason
