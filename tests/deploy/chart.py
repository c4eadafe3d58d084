"""Render and validate the Helm chart offline: helm-python-sdk (Helm as a library) and kubernetes-validate.

No helm binary and no cluster: `render` runs Helm's engine with a Kubernetes version of our choosing,
and `validate` checks every rendered object against that version's OpenAPI schemas in strict mode
(an unknown field fails). Custom resources, which kubernetes-validate has no schema for, are checked
against the small schemas in `schemas/`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import helm_python as helm
import jsonschema
import kubernetes_validate
import yaml
from helm_python import _native

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "java-kb-indexer"
VALUE_SETS = sorted((CHART / "ci").glob("*-values.yaml"))
KUBE_VERSIONS = ("1.27.0", "1.37.0")
"""The oldest Kubernetes the chart declares (Chart.yaml kubeVersion) and the newest kubernetes-validate knows."""
RELEASE, NAMESPACE = "kb", "tools"
CUSTOM_SCHEMAS = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"): "servicemonitor-monitoring-v1.json",
    ("monitoring.coreos.com/v1", "PrometheusRule"): "prometheusrule-monitoring-v1.json",
    ("keda.sh/v1alpha1", "ScaledObject"): "scaledobject-keda-v1alpha1.json",
}

Manifest = dict[str, Any]
DSN = "postgresql://javakb:not-a-real-password@postgres:5432/javakb"


def needed(values: dict[str, Any] | None = None) -> dict[str, Any]:
    """`values` plus the chart's one required value (the PostgreSQL DSN in secrets.values), unless it sets secrets."""
    return {"secrets": {"values": {"JAVAKB_POSTGRES__DSN": DSN}}} | (values or {})


def values_of(path: Path) -> dict[str, Any]:
    """A values file as Helm reads it."""
    return helm.values_from_yaml(path.read_text(encoding="utf-8"))


def render(values: dict[str, Any], kube_version: str = KUBE_VERSIONS[-1], *, upgrade: bool = False) -> dict[str, str]:
    """Every template rendered, by path. Helm validates `values` against values.schema.json first.

    `Chart.render` has no Kubernetes version parameter; the library's render call takes one
    (`kube_version`, as `helm template --kube-version`), so it is called directly.
    """
    options: dict[str, str | bool] = {"name": RELEASE, "namespace": NAMESPACE, "kube_version": f"v{kube_version}"}
    options |= {"is_upgrade": True} if upgrade else {"is_install": True}
    with helm.Chart.load(CHART) as chart:
        rendered: dict[str, str] = json.loads(
            _native.call_string("helm_render", chart._raw(), json.dumps(values), json.dumps(options))
        )
    return rendered


def manifests(rendered: dict[str, str]) -> list[Manifest]:
    """The Kubernetes objects of a rendering (NOTES.txt and empty documents left out)."""
    found: list[Manifest] = []
    for path, text in sorted(rendered.items()):
        if path.endswith("NOTES.txt"):
            continue
        found.extend(doc for doc in yaml.safe_load_all(text) if doc)
    return found


def notes(rendered: dict[str, str]) -> str:
    """The rendered NOTES.txt."""
    return next(text for path, text in rendered.items() if path.endswith("NOTES.txt"))


@cache
def _custom_validator(file_name: str) -> jsonschema.protocols.Validator:
    schema = json.loads((Path(__file__).parent / "schemas" / file_name).read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator: jsonschema.protocols.Validator = validator_class(schema)
    return validator


def validate(manifest: Manifest, kube_version: str) -> None:
    """Check one object against its schema: Kubernetes' (strict) or ours for a custom resource.

    Raises:
        jsonschema.ValidationError: the object does not conform.
        kubernetes_validate.utils.SchemaNotFoundError: a kind Kubernetes does not know.
    """
    custom = CUSTOM_SCHEMAS.get((manifest["apiVersion"], manifest["kind"]))
    if custom is not None:
        _custom_validator(custom).validate(manifest)
    else:
        kubernetes_validate.validate(manifest, kube_version, strict=True)


def lint(values: dict[str, Any], kube_version: str) -> dict[str, Any]:
    """`helm lint --strict` of the chart with `values`."""
    return helm.lint(CHART, values, strict=True, kube_version=f"v{kube_version}", namespace=NAMESPACE)


def pod_specs(objects: list[Manifest]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every pod spec of a rendering (Deployments, Jobs, Pods), with its object's name."""
    for obj in objects:
        if obj["kind"] in ("Deployment", "Job"):
            yield obj["metadata"]["name"], obj["spec"]["template"]["spec"]
        elif obj["kind"] == "Pod":
            yield obj["metadata"]["name"], obj["spec"]


def find(objects: list[Manifest], kind: str, name: str) -> Manifest:
    """The object of this kind and name."""
    matches = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(matches) == 1, f"{kind}/{name}: {len(matches)} found"
    return matches[0]
