"""docker-compose.yml against the Compose specification's JSON schema (as check-jsonschema ships it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import check_jsonschema
import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_SCHEMA = Path(check_jsonschema.__file__).parent / "builtin_schemas" / "vendor" / "compose-spec.json"


def compose_validator() -> jsonschema.protocols.Validator:
    schema = json.loads(COMPOSE_SCHEMA.read_text(encoding="utf-8"))
    validator: jsonschema.protocols.Validator = jsonschema.validators.validator_for(schema)(schema)
    return validator


def compose_file() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    return loaded


def test_the_compose_file_follows_the_compose_specification() -> None:
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in compose_validator().iter_errors(compose_file())
    ]
    assert errors == []


def test_the_schema_check_catches_a_misspelt_key() -> None:
    broken = compose_file()
    broken["services"]["web"]["dependson"] = broken["services"]["web"].pop("depends_on")
    with pytest.raises(jsonschema.ValidationError, match="dependson"):
        compose_validator().validate(broken)


def test_the_stack_is_qdrant_postgres_redis_and_the_service_as_web_and_worker() -> None:
    services = compose_file()["services"]
    assert set(services) == {"qdrant", "postgres", "redis", "migrate", "web", "worker"}
    assert [services[name]["command"] for name in ("migrate", "web", "worker")] == [["migrate"], ["web"], ["worker"]]
    for name in ("migrate", "web", "worker"):
        environment = services[name]["environment"]
        assert environment["JAVAKB_QDRANT__URL"] == "http://qdrant:6333"  # the server: embedded Qdrant is one process
        assert services[name]["user"] == "10001:10001"
        assert services[name]["read_only"] is True
    assert services["web"]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
    assert "8081/healthz" in services["worker"]["healthcheck"]["test"][-1]
