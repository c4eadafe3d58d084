"""The Helm chart, linted strictly and rendered for every value set in ci/ on two Kubernetes versions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest

from app.core.settings_doc import chart_schema
from tests.deploy.chart import (
    CHART,
    KUBE_VERSIONS,
    VALUE_SETS,
    Manifest,
    find,
    lint,
    manifests,
    notes,
    pod_specs,
    render,
    validate,
    values_of,
)

FULL = "kb-java-kb-indexer"
HOOK = "helm.sh/hook"
WEIGHT = "helm.sh/hook-weight"


@pytest.fixture(scope="module")
def renderings() -> dict[tuple[str, str], list[Manifest]]:
    return {
        (path.name, version): manifests(render(values_of(path), version))
        for path in VALUE_SETS
        for version in KUBE_VERSIONS
    }


def test_the_value_sets_are_the_ones_ci_promises() -> None:
    names = {p.name for p in VALUE_SETS}
    assert names == {
        "default-values.yaml",
        "ingress-hpa-pdb-values.yaml",
        "existing-secret-values.yaml",
        "keda-values.yaml",
        "monitoring-networkpolicy-values.yaml",
    }


@pytest.mark.parametrize("version", KUBE_VERSIONS)
@pytest.mark.parametrize("values_file", VALUE_SETS, ids=lambda p: p.name)
def test_lint_is_clean_in_strict_mode(values_file: Path, version: str) -> None:
    report = lint(values_of(values_file), version)
    assert report["errors"] == []
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


def test_every_rendered_object_is_valid_for_its_kubernetes_version(
    renderings: dict[tuple[str, str], list[Manifest]],
) -> None:
    for (values_file, version), objects in renderings.items():
        for obj in objects:
            try:
                validate(obj, version)
            except Exception as exc:
                raise AssertionError(f"{values_file} on {version}: {obj['kind']}/{obj['metadata']['name']}") from exc


def test_strict_validation_catches_an_unknown_field() -> None:
    deployment = find(manifests(render({})), "Deployment", f"{FULL}-web")
    deployment["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {}
    with pytest.raises(Exception, match="readinesProbe"):
        validate(deployment, KUBE_VERSIONS[0])


def test_the_custom_resources_are_checked_against_their_own_schema() -> None:
    objects = manifests(render(values_of(CHART / "ci" / "monitoring-networkpolicy-values.yaml")))
    monitor = find(objects, "ServiceMonitor", FULL)
    scaled = find(objects, "ScaledObject", f"{FULL}-worker")
    validate(monitor, KUBE_VERSIONS[0])
    validate(scaled, KUBE_VERSIONS[0])
    monitor["spec"]["endpoints"][0]["intervall"] = "30s"
    with pytest.raises(Exception, match="intervall"):
        validate(monitor, KUBE_VERSIONS[0])
    del scaled["spec"]["triggers"][0]["metadata"]["valueLocation"]
    with pytest.raises(Exception, match="valueLocation"):
        validate(scaled, KUBE_VERSIONS[0])


def test_the_schema_rejects_a_values_file_with_typos() -> None:
    typos = values_of(Path(__file__).parent / "typo-values.yaml")
    with pytest.raises(helm.HelmValuesError) as refused:
        render(typos)
    message = str(refused.value)
    assert "'replica' not allowed" in message
    assert "'ingres' not allowed" in message
    assert "/worker/maxJobs" in message
    assert lint(typos, KUBE_VERSIONS[0])["errors"] != []


@pytest.mark.parametrize(
    ("values", "refusal"),
    [
        ({"config": {"QDRANT_URL": "http://q"}}, "QDRANT_URL"),
        ({"config": {"JAVAKB_GITLAB_URL": "https://gitlab.example.com"}}, "JAVAKB_GITLAB_URL"),  # `_` for `__`
        ({"config": {"JAVAKB_GITLAB__TOKN": "x"}}, "JAVAKB_GITLAB__TOKN"),
        ({"secrets": {"values": {"JAVAKB_GITLAB__WEBHOOK_SECRT": "x" * 32}}}, "JAVAKB_GITLAB__WEBHOOK_SECRT"),
        ({"web": {"livenessProbe": {"enabled": True, "periodSeconds": "10"}}}, "periodSeconds"),
        ({"image": {"pullPolicy": "Sometimes"}}, "pullPolicy"),
    ],
)
def test_the_schema_rejects_wrong_names_and_types(values: dict[str, Any], refusal: str) -> None:
    with pytest.raises(helm.HelmValuesError, match=refusal):
        render(values)


def test_the_setting_names_the_chart_accepts_are_the_settings_model_s() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text(encoding="utf-8"))
    assert schema == chart_schema(schema), "run scripts/settings_doc"
    assert render({"config": {"JAVAKB_GITLAB__URL": "https://gitlab.example.com", "JAVAKB_SCOPE__FORKS": True}})


def test_the_migration_job_reads_configuration_created_before_it_with_the_new_values() -> None:
    # Helm runs pre-install/pre-upgrade hooks before the release's other objects exist or change.
    values = {
        "config": {"JAVAKB_LOG_LEVEL": "DEBUG"},
        "secrets": {"values": {"JAVAKB_POSTGRES__DSN": "postgresql://n"}},
    }
    for upgrade in (False, True):
        objects = manifests(render(values, upgrade=upgrade))
        job = find(objects, "Job", f"{FULL}-migrate")
        hooks = {(o["kind"], o["metadata"]["name"]): o for o in objects if HOOK in o["metadata"].get("annotations", {})}
        sources = job["spec"]["template"]["spec"]["containers"][0]["envFrom"]
        assert len(sources) == 2
        for source in sources:
            kind, ref = (
                ("ConfigMap", source["configMapRef"]) if "configMapRef" in source else ("Secret", source["secretRef"])
            )
            made = hooks[(kind, ref["name"])]  # a hook itself: it exists when the Job starts
            assert "pre-install" in made["metadata"]["annotations"][HOOK]
            assert "pre-upgrade" in made["metadata"]["annotations"][HOOK]
            assert int(made["metadata"]["annotations"][WEIGHT]) < int(job["metadata"]["annotations"][WEIGHT])
        config = hooks[("ConfigMap", f"{FULL}-migrate")]
        assert config["data"] == find(objects, "ConfigMap", FULL)["data"]
        assert config["data"]["JAVAKB_LOG_LEVEL"] == "DEBUG"


def test_with_an_existing_secret_every_pod_requires_it() -> None:
    objects = manifests(render({"secrets": {"existingSecret": "mine"}}))
    assert [o for o in objects if o["kind"] == "Secret"] == []
    for name, spec in pod_specs(objects):
        if name.endswith("test-readyz"):
            continue
        refs = [s["secretRef"] for s in spec["containers"][0]["envFrom"] if "secretRef" in s]
        assert refs == [{"name": "mine", "optional": False}], name


def test_an_existing_secret_and_secret_values_together_fail_clearly() -> None:
    both = {"secrets": {"existingSecret": "mine", "values": {"JAVAKB_GITLAB__TOKEN": "glpat-x"}}}
    with pytest.raises(helm.HelmRenderError, match=r"either secrets\.existingSecret .* or secrets\.values"):
        render(both)


def test_keda_and_a_worker_hpa_together_fail_clearly() -> None:
    both = {"worker": {"keda": {"enabled": True}, "autoscaling": {"enabled": True, "minReplicas": 1, "maxReplicas": 2}}}
    with pytest.raises(helm.HelmRenderError, match="not both"):
        render(both)


def test_an_hpa_without_a_target_fails_clearly() -> None:
    blind = {
        "web": {
            "autoscaling": {"enabled": True, "minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 0}
        }
    }
    with pytest.raises(helm.HelmRenderError, match=r"web\.autoscaling: set targetCPUUtilizationPercentage"):
        render(blind)


def test_a_configuration_change_rolls_the_pods() -> None:
    def checksum(values: dict[str, Any]) -> str:
        web = find(manifests(render(values)), "Deployment", f"{FULL}-web")
        annotation: str = web["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
        return annotation

    base = checksum({})
    assert checksum({}) == base
    assert checksum({"config": {"JAVAKB_LOG_LEVEL": "DEBUG"}}) != base
    assert checksum({"secrets": {"values": {"JAVAKB_GITLAB__TOKEN": "glpat-one"}}}) != checksum(
        {"secrets": {"values": {"JAVAKB_GITLAB__TOKEN": "glpat-two"}}}
    )


def test_every_pod_runs_locked_down_as_the_image_s_numeric_user(
    renderings: dict[tuple[str, str], list[Manifest]],
) -> None:
    for objects in renderings.values():
        for name, spec in pod_specs(objects):
            assert spec["securityContext"]["runAsNonRoot"] is True, name
            assert spec["securityContext"]["runAsUser"] == 10001, name
            assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, name
            assert spec["automountServiceAccountToken"] is False, name
            for container in spec["containers"]:
                context = container["securityContext"]
                assert context["readOnlyRootFilesystem"] is True, name
                assert context["allowPrivilegeEscalation"] is False, name
                assert context["capabilities"] == {"drop": ["ALL"]}, name
            if not name.endswith("test-readyz"):
                assert {"name": "tmp", "mountPath": "/tmp"} in spec["containers"][0]["volumeMounts"], name


def test_probes_are_the_ones_the_service_answers() -> None:
    objects = manifests(render({"web": {"port": 9000}, "worker": {"healthPort": 9001}}))
    web = find(objects, "Deployment", f"{FULL}-web")["spec"]["template"]["spec"]["containers"][0]
    worker = find(objects, "Deployment", f"{FULL}-worker")["spec"]["template"]["spec"]["containers"][0]
    assert web["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert web["livenessProbe"]["httpGet"] == web["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert web["ports"] == [{"name": "http", "containerPort": 9000, "protocol": "TCP"}]
    assert worker["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert worker["ports"] == [{"name": "http", "containerPort": 9001, "protocol": "TCP"}]
    assert "readinessProbe" not in worker
    assert web["lifecycle"]["preStop"]["exec"]["command"][-1] == "import time; time.sleep(10)"
    config = find(objects, "ConfigMap", FULL)["data"]
    assert (config["JAVAKB_PORT"], config["JAVAKB_WORKER__HEALTH_PORT"]) == ("9000", "9001")


def test_probes_are_tunable_and_can_be_turned_off() -> None:
    values = {"web": {"livenessProbe": {"enabled": False}, "readinessProbe": {"enabled": True, "periodSeconds": 3}}}
    web = find(manifests(render(values)), "Deployment", f"{FULL}-web")["spec"]["template"]["spec"]["containers"][0]
    assert "livenessProbe" not in web
    assert web["readinessProbe"] == {
        "httpGet": {"path": "/readyz", "port": "http"},
        "periodSeconds": 3,  # ours; the other tunables keep their defaults
        "timeoutSeconds": 5,
        "failureThreshold": 3,
        "successThreshold": 1,
    }


def test_the_notes_print_the_hook_url_and_cursor_s_mcp_json() -> None:
    text = notes(render(values_of(CHART / "ci" / "ingress-hpa-pdb-values.yaml")))
    assert "URL:          https://kb.example.com/hooks/gitlab" in text
    assert '"url": "https://kb.example.com/mcp"' in text
    assert "WARNING: no secrets" in text
    assert "WARNING" not in notes(render({"secrets": {"existingSecret": "mine"}}))


def test_the_network_policies_open_only_what_is_listed() -> None:
    objects = manifests(render(values_of(CHART / "ci" / "monitoring-networkpolicy-values.yaml")))
    web = find(objects, "NetworkPolicy", f"{FULL}-web")["spec"]
    [ingress] = web["ingress"]
    assert ingress["ports"] == [{"port": "http", "protocol": "TCP"}]
    sources = ingress["from"]
    assert {"ipBlock": {"cidr": "192.0.2.10/32"}} in sources  # GitLab
    assert {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}} in sources
    egress_ports = [sorted(p["port"] for p in rule["ports"]) for rule in web["egress"]]
    assert egress_ports == [[53, 53], [443], [6333, 6334], [6379], [5432], [443]]
    assert all("to" in rule for rule in web["egress"][1:])
    worker = find(objects, "NetworkPolicy", f"{FULL}-worker")["spec"]
    assert worker["ingress"][0]["from"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "keda"}}}
    ]
    migrate = find(objects, "NetworkPolicy", f"{FULL}-migrate")["spec"]
    assert [sorted(p["port"] for p in rule["ports"]) for rule in migrate["egress"]] == [[53, 53], [5432]]


def test_the_helm_test_calls_readyz_through_the_service() -> None:
    objects = manifests(render({}))
    pod = find(objects, "Pod", f"{FULL}-test-readyz")
    assert pod["metadata"]["annotations"][HOOK] == "test"
    assert f"http://{FULL}:8080/readyz" in pod["spec"]["containers"][0]["args"][0]


def test_names_can_be_overridden() -> None:
    objects = manifests(render({"fullnameOverride": "kb-prod"}))
    assert {o["metadata"]["name"] for o in objects if o["kind"] == "Deployment"} == {"kb-prod-web", "kb-prod-worker"}
    renamed = manifests(render({"nameOverride": "javakb"}))
    assert find(renamed, "Service", "kb-javakb")["spec"]["selector"]["app.kubernetes.io/name"] == "javakb"


def test_the_chart_runs_as_the_image_s_user() -> None:
    dockerfile = (CHART.parents[1] / "Dockerfile").read_text(encoding="utf-8")
    [uid] = [line.split("=", 1)[1] for line in dockerfile.splitlines() if line.startswith("ARG UID=")]
    assert "USER ${UID}:${UID}" in dockerfile
    defaults = values_of(CHART / "values.yaml")
    assert defaults["podSecurityContext"]["runAsUser"] == defaults["securityContext"]["runAsUser"] == int(uid)
    compose = (CHART.parents[1] / "docker-compose.yml").read_text(encoding="utf-8")
    assert f'user: "{uid}:{uid}"' in compose


def test_the_service_monitor_scrapes_web_and_workers_with_a_metrics_token() -> None:
    objects = manifests(render(values_of(CHART / "ci" / "monitoring-networkpolicy-values.yaml")))
    spec = find(objects, "ServiceMonitor", FULL)["spec"]
    assert spec["selector"]["matchExpressions"] == [
        {"key": "app.kubernetes.io/component", "operator": "In", "values": ["web", "worker"]}
    ]
    assert spec["endpoints"][0]["authorization"] == {
        "type": "Bearer",
        "credentials": {"name": "javakb-metrics", "key": "token"},
    }
    assert len(find(objects, "NetworkPolicy", f"{FULL}-worker")["spec"]["ingress"]) == 2  # KEDA and Prometheus
    with pytest.raises(Exception, match="bearerTokenSecret"):
        render({"serviceMonitor": {"enabled": True}})
