"""The chart's PrometheusRule and Grafana dashboard: valid shapes, parseable PromQL, only metrics the service exports.

The exported names come from the service's own registry (`app.core.metrics.REGISTRY`, the single
declaration of every metric), expanded by type as the exposition writes them: a counter `x` as
`x_total`, a histogram as `x_bucket`, `x_sum` and `x_count`. Expressions are parsed with
promql-parser (Prometheus' grammar and function list), so a typo in a function, an unbalanced
parenthesis or a range where an instant vector belongs fails here, not in Prometheus.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import promql_parser
import pytest

from app.core import metrics
from tests.deploy.chart import CHART, NAMESPACE, Manifest, find, manifests, needed, render, validate, values_of

FULL = "kb-java-kb-indexer"
DASHBOARD = CHART / "dashboards" / "java-kb-indexer.json"
OPERATIONS = CHART.parents[1] / "docs" / "operations.md"
MONITORING_VALUES = CHART / "ci" / "monitoring-networkpolicy-values.yaml"
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",), "info": ("_info",)}
PROMETHEUS_SERIES = frozenset({"up"})
"""Series Prometheus itself writes for every scrape target (not the service's)."""
GRAFANA_BUILTINS = {"__rate_interval": "5m", "__interval": "1m", "__range": "1h"}
_VARIABLE = re.compile(r"\$\{(\w+)\}|\$(\w+)")


def exported() -> frozenset[str]:
    """Every series name the service's /metrics can show, from its registry."""
    return frozenset(family.name + suffix for family in metrics.REGISTRY.collect() for suffix in SUFFIXES[family.type])


def metric_names(expr: str) -> set[str]:
    """The metric names an expression selects. Raises ValueError when it does not parse."""
    names: set[str] = set()

    def visit(node: promql_parser.Expr) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            assert node.name, f"a selector without a metric name in {expr!r}"
            names.add(node.name)

    promql_parser.walk(promql_parser.parse(expr), visit)
    return names


def unknown_metrics(exprs: list[str]) -> set[str]:
    return set().union(*(metric_names(e) for e in exprs)) - exported() - PROMETHEUS_SERIES


def rule_objects(values: dict[str, Any] | None = None) -> list[Manifest]:
    return [o for o in manifests(render(needed(values))) if o["kind"] == "PrometheusRule"]


def enabled_rules() -> list[dict[str, Any]]:
    [rule] = rule_objects({"prometheusRule": {"enabled": True}})
    return [r for group in rule["spec"]["groups"] for r in group["rules"]]


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return loaded


def panels(board: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in board["panels"]:
        yield panel
        yield from panel.get("panels", [])


def grafana_expr(expr: str, variables: set[str]) -> str:
    """`expr` with Grafana's variables replaced, as Grafana does before sending it. KeyError: an unknown variable."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name in GRAFANA_BUILTINS:
            return GRAFANA_BUILTINS[name]
        if name not in variables:
            raise KeyError(f"${name} is not a variable of the dashboard")
        return "x"

    return _VARIABLE.sub(value, expr)


def dashboard_exprs(board: dict[str, Any]) -> list[str]:
    """Every PromQL expression of the dashboard: its panels' targets and its query variables' selectors."""
    variables = {v["name"] for v in board["templating"]["list"]}
    exprs = [t["expr"] for p in panels(board) for t in p.get("targets", [])]
    for variable in board["templating"]["list"]:
        if variable["type"] == "query":
            inner = re.fullmatch(r"label_values\((.+), *\w+\)", variable["query"]["query"])
            assert inner, variable["name"]
            exprs.append(inner.group(1))
    return [grafana_expr(e, variables) for e in exprs]


def test_the_rule_and_the_dashboard_are_off_by_default() -> None:
    objects = manifests(render(needed()))
    assert [o["kind"] for o in objects if o["kind"] == "PrometheusRule"] == []
    assert [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-dashboard")] == []


def test_the_rule_is_checked_against_the_prometheus_rule_schema() -> None:
    objects = manifests(render(values_of(MONITORING_VALUES)))
    rule = find(objects, "PrometheusRule", FULL)
    validate(rule, "1.37.0")
    assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    rule["spec"]["groups"][0]["rules"][0]["fore"] = "5m"
    with pytest.raises(Exception, match="fore"):
        validate(rule, "1.37.0")
    del rule["spec"]["groups"][0]["rules"][0]["fore"]
    rule["spec"]["groups"][0]["rules"][0]["for"] = "five minutes"
    with pytest.raises(Exception, match="five minutes"):
        validate(rule, "1.37.0")


def test_every_alert_parses_and_names_only_metrics_the_service_exports() -> None:
    rules = enabled_rules()
    assert len(rules) >= 7
    assert unknown_metrics([r["expr"] for r in rules]) == set()
    named = set().union(*(metric_names(r["expr"]) for r in rules))
    assert {"javakb_projects_lagging", "javakb_queue_oldest_age_seconds", "javakb_sync_runs_total"} <= named


def test_the_check_fails_on_a_misspelt_metric_or_function_and_unbalanced_parentheses() -> None:
    assert unknown_metrics(["rate(javakb_sync_run_total[5m]) > 0"]) == {"javakb_sync_run_total"}
    assert unknown_metrics(["histogram_quantile(0.9, rate(javakb_sync_duration_seconds_bucket[5m]))"]) == set()
    assert unknown_metrics(["javakb_sync_duration_seconds_total"]) == {"javakb_sync_duration_seconds_total"}
    broken = ("sum(rate(javakb_sync_runs_total[5m])", "rat(javakb_sync_runs_total[5m])", "rate(javakb_queue_depth)")
    for expr in broken:
        with pytest.raises(ValueError):
            metric_names(expr)


def test_every_alert_has_a_severity_a_summary_and_a_runbook_section_in_operations_md() -> None:
    headings = {
        re.sub(r"[^a-z0-9 -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in OPERATIONS.read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    }
    for rule in enabled_rules():
        assert rule["labels"]["severity"] in {"critical", "warning", "info"}, rule["alert"]
        assert rule["annotations"]["summary"], rule["alert"]
        assert rule["annotations"]["runbook_url"] == f"docs/operations.md#{rule['alert'].lower()}"
        assert rule["alert"].lower() in headings, f"docs/operations.md has no section {rule['alert']}"


def test_the_rules_select_the_release_s_scrape_jobs_or_the_given_selector() -> None:
    objects = manifests(render(values_of(MONITORING_VALUES)))
    services = sorted(o["metadata"]["name"] for o in objects if o["kind"] == "Service")
    expected = f'namespace="{NAMESPACE}", job=~"{"|".join(services)}"'  # the ServiceMonitor's jobs: Service names
    rules = [r for g in find(objects, "PrometheusRule", FULL)["spec"]["groups"] for r in g["rules"]]
    for rule in rules:
        assert expected in rule["expr"], rule["alert"]
        assert rule["labels"]["team"] == "platform"
    custom = {"prometheusRule": {"enabled": True, "selector": 'cluster="eu", job="javakb"'}}
    [rule] = rule_objects(custom)
    exprs = [r["expr"] for g in rule["spec"]["groups"] for r in g["rules"]]
    assert all('cluster="eu", job="javakb"' in e and "namespace=" not in e for e in exprs)
    assert unknown_metrics(exprs) == set()


def test_the_dashboard_has_what_grafana_requires() -> None:
    board = dashboard()
    assert isinstance(board["schemaVersion"], int) and board["schemaVersion"] >= 36
    assert board["uid"] and board["title"]
    [source] = [v for v in board["templating"]["list"] if v["type"] == "datasource"]
    assert source["query"] == "prometheus"
    uid = "${" + source["name"] + "}"
    ids = [p["id"] for p in panels(board)]
    assert len(ids) == len(set(ids))
    graphs = [p for p in panels(board) if p["type"] != "row"]
    assert graphs
    for panel in graphs:
        assert panel["datasource"] == {"type": "prometheus", "uid": uid}, panel["title"]
        assert set(panel["gridPos"]) == {"h", "w", "x", "y"}, panel["title"]
        assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24, panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert refs and len(refs) == len(set(refs)), panel["title"]
        assert all(t["expr"] and t["datasource"]["uid"] == uid for t in panel["targets"]), panel["title"]


def test_the_dashboard_parses_names_only_exported_metrics_and_shows_every_one_of_ours() -> None:
    exprs = dashboard_exprs(dashboard())
    assert unknown_metrics(exprs) == set()
    shown = set().union(*(metric_names(e) for e in exprs))
    ours = {f.name: SUFFIXES[f.type] for f in metrics.REGISTRY.collect() if f.name.startswith("javakb_")}
    missing = {name for name, suffixes in ours.items() if not shown & {name + s for s in suffixes}}
    assert missing == set(), "a metric without a panel"
    with pytest.raises(KeyError, match="nope"):
        grafana_expr('javakb_queue_depth{namespace="$nope"}', {"namespace"})


def test_the_dashboard_configmap_carries_the_file_and_the_sidecar_label() -> None:
    objects = manifests(render(values_of(MONITORING_VALUES)))
    config = find(objects, "ConfigMap", f"{FULL}-dashboard")
    assert config["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(config["data"]["java-kb-indexer.json"]) == dashboard()
    assert Path(DASHBOARD).read_text(encoding="utf-8") == config["data"]["java-kb-indexer.json"]
