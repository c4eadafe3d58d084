"""`/openapi.json` is served and derived from the models that validate the requests (issue 9)."""

from __future__ import annotations

import re

import schemathesis
from starlette.testclient import TestClient

from app.rest.openapi import openapi_document, public_document
from app.rest.schemas import ReindexRequest, SearchParams
from app.search.results import HitItem
from entry.web import create_app
from tests.hooks.test_receiver import make_settings
from tests.support.tokens import admin_token

ADMIN = "admin-token-for-openapi-0123"


def test_anyone_reads_the_public_part_and_an_admin_token_the_whole(clean_db: str, clean_redis: str) -> None:
    settings = make_settings(clean_db, clean_redis).model_copy(update={"admin_tokens": [admin_token(ADMIN)]})
    with TestClient(create_app(settings)) as client:
        anyone = client.get("/openapi.json")
        wrong = client.get("/openapi.json", headers={"Authorization": "Bearer not-the-admin"})
        admin = client.get("/openapi.json", headers={"Authorization": f"Bearer {ADMIN}"})

    version = admin.json()["info"]["version"]
    assert admin.status_code == 200 and admin.json() == openapi_document(version)
    assert anyone.status_code == 200 and anyone.json() == public_document(openapi_document(version))
    assert wrong.json() == anyone.json()
    assert set(anyone.json()["paths"]) == {
        "/hooks/gitlab", "/api/v1/search", "/api/v1/index-jobs", "/api/v1/index-jobs/{job_id}",
        "/api/v1/index-status", "/api/v1/context", "/api/v1/code", "/api/v1/impact", "/api/v1/grep", "/api/v1/config",
    }  # fmt: skip
    assert "/admin" not in anyone.text
    schemas = anyone.json()["components"]["schemas"]
    assert "ReindexRequest" not in schemas and "BackfillReport" not in schemas and "SearchAnswer" in schemas
    assert set(re.findall(r"#/components/schemas/(\w+)", anyone.text)) <= set(schemas)  # every reference resolves
    assert len(list(schemathesis.openapi.from_dict(anyone.json()).get_all_operations())) == 10


def test_every_route_is_described_and_the_document_loads() -> None:
    document = openapi_document("1")
    assert set(document["paths"]) == {
        "/hooks/gitlab", "/api/v1/search", "/api/v1/grep", "/admin/reindex", "/admin/backfills",
        "/admin/backfills/{backfill_id}", "/admin/projects",
        "/admin/projects/{project_id}", "/admin/jobs",
        "/admin/rebuild", "/admin/rebuilds/{rebuild_id}",
        "/api/v1/index-jobs", "/api/v1/index-jobs/{job_id}", "/api/v1/index-status", "/api/v1/context",
        "/api/v1/code", "/api/v1/impact", "/api/v1/config",
    }  # fmt: skip
    operations = list(schemathesis.openapi.from_dict(document).get_all_operations())
    assert len(operations) == 18


def test_schemas_are_the_validating_models_own() -> None:
    document = openapi_document("1")
    reindex = document["components"]["schemas"]["ReindexRequest"]
    assert reindex["properties"] == ReindexRequest.model_json_schema()["properties"]
    assert reindex["additionalProperties"] is False
    search = {p["name"]: p for p in document["paths"]["/api/v1/search"]["get"]["parameters"]}
    assert set(search) == set(SearchParams.model_fields)
    assert search["q"]["required"] is True
    assert search["limit"]["schema"]["maximum"] == 50
    assert "method" in search["symbol_type"]["schema"]["enum"]


def test_the_search_answer_is_described_by_the_hit_declaration() -> None:
    document = openapi_document("1")
    ok = document["paths"]["/api/v1/search"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/SearchAnswer"}
    hit = document["components"]["schemas"]["HitItem"]
    assert set(hit["properties"]) == set(HitItem.__annotations__)
    if_present = {"part", "outbound", "code", "library", "declared_in"}
    assert set(hit["required"]) == set(HitItem.__annotations__) - if_present
