"""The OpenAPI 3.1 description of the webhook, REST and admin API, served at `GET /openapi.json`.

Derived, not restated: request bodies, query parameters and answers are the JSON schemas of the
pydantic models in `app.rest.schemas` that validate and build them. MCP describes itself (`tools/list`).

Anyone gets the public part (`public_document`: the webhook and `/api/v1/*`, and only the schemas
they use); an admin token gets the whole document, admin routes included (docs/decisions.md).
"""

from __future__ import annotations

import json
import re
from typing import Any, get_args

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from app.ops.system_hook import RECEIVER_PATH
from app.rest.config_schemas import CONFIG_PATH, ConfigAnswer, ConfigParams
from app.rest.schemas import (
    CODE_PATH,
    CONTEXT_PATH,
    GREP_PATH,
    IMPACT_PATH,
    INDEX_JOBS_PATH,
    INDEX_STATUS_PATH,
    BackfillProgressValue,
    BackfillReport,
    BackfillStatusValue,
    BackfillSummary,
    CodeAnswer,
    CodeParams,
    ContextAnswer,
    ContextParams,
    ErrorAnswer,
    GrepAnswer,
    GrepParams,
    HookAnswer,
    HookEnvelope,
    ImpactAnswer,
    ImpactParams,
    IndexJobAnswer,
    IndexJobRequest,
    IndexStatusAnswer,
    IndexStatusParams,
    JobState,
    PageParams,
    ProjectState,
    RebuildAccepted,
    RebuildReport,
    ReindexAccepted,
    ReindexRequest,
    RunStatusValue,
    SearchAnswer,
    SearchParams,
)

_REF = "#/components/schemas/{model}"
ADMIN_ONLY: list[dict[str, list[str]]] = [{"admin": []}]
"""The security of an operation only an admin token may call (left out of `public_document`)."""
_MODELS: list[tuple[type[BaseModel], JsonSchemaMode]] = [
    (ReindexRequest, "validation"),
    (HookEnvelope, "validation"),
    (ReindexAccepted, "serialization"),
    (BackfillReport, "serialization"),
    (BackfillSummary, "serialization"),
    (ProjectState, "serialization"),
    (JobState, "serialization"),
    (RebuildAccepted, "serialization"),
    (RebuildReport, "serialization"),
    (HookAnswer, "serialization"),
    (ErrorAnswer, "serialization"),
    (SearchAnswer, "serialization"),
    (GrepAnswer, "serialization"),
    (IndexJobRequest, "validation"),
    (IndexJobAnswer, "serialization"),
    (IndexStatusAnswer, "serialization"),
    (ContextAnswer, "serialization"),
    (ConfigAnswer, "serialization"),
    (CodeAnswer, "serialization"),
    (ImpactAnswer, "serialization"),
]
_HOOK_HEADERS = {
    "Idempotency-Key": "Deduplication key of unsigned deliveries (at most 256 printable characters)",
    "webhook-id": "Standard Webhooks message id: the deduplication key of signed deliveries",
    "webhook-timestamp": "Standard Webhooks timestamp, seconds since the epoch",
    "webhook-signature": "Standard Webhooks signatures, `v1,<base64>` separated by spaces",
}


def _ref(model: type[BaseModel]) -> dict[str, Any]:
    return {"$ref": _REF.format(model=model.__name__)}


def _json(model: type[BaseModel], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref(model)}}}


def _list(model: type[BaseModel], description: str) -> dict[str, Any]:
    schema = {"type": "array", "items": _ref(model)}
    link = {"description": 'rel="next": the next page, when this one is full', "schema": {"type": "string"}}
    return {"description": description, "headers": {"Link": link}, "content": {"application/json": {"schema": schema}}}


def _error(description: str) -> dict[str, Any]:
    return _json(ErrorAnswer, description)


def _id_in_path(name: str) -> dict[str, Any]:
    """The path parameter `name`: a record's id (a whole number from 0)."""
    return {"name": name, "in": "path", "required": True, "schema": {"type": "integer", "minimum": 0}}


def _query_parameters(model: type[BaseModel]) -> list[dict[str, Any]]:
    schema = model.model_json_schema()
    required = set(schema.get("required", []))
    return [
        {"name": name, "in": "query", "required": name in required, "schema": _not_null(prop)}
        | ({"description": prop["description"]} if "description" in prop else {})
        for name, prop in schema["properties"].items()
    ]


def _not_null(prop: dict[str, Any]) -> dict[str, Any]:
    """A query parameter is absent or a string, never JSON null: drop the model's `None` branch."""
    branches = [b for b in prop.get("anyOf", []) if b != {"type": "null"}]
    if len(branches) != 1:
        return prop
    rest: dict[str, Any] = {k: v for k, v in prop.items() if k not in ("anyOf", "default")}
    only: dict[str, Any] = branches[0]
    return rest | only


def _paths() -> dict[str, Any]:
    admin = ADMIN_ONLY
    pages = _query_parameters(PageParams)
    hook_headers = [
        {"name": name, "in": "header", "required": False, "schema": {"type": "string"}, "description": text}
        for name, text in _HOOK_HEADERS.items()
    ]
    return {
        RECEIVER_PATH: {"post": {
            "summary": "Receive a GitLab system or project hook", "security": [{"gitlab_token": []}, {}],
            "parameters": hook_headers,
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref(HookEnvelope)}}},
            "responses": {"200": _json(HookAnswer, "Duplicate or ignored"), "202": _json(HookAnswer, "Accepted"),
                          "400": _error("Malformed delivery"), "401": _error("Not authenticated"),
                          "413": _error("Body too large"), "503": _error("Not recorded: try again")},
        }},
        "/api/v1/search": {"get": {
            "summary": "Hybrid search over the indexed code, with citations", "security": [{"api": []}],
            "parameters": _query_parameters(SearchParams),
            "responses": {"200": _json(SearchAnswer, "Ranked results"), "400": _error("Bad parameters"),
                          "401": _error("Not authenticated")},
        }},
        GREP_PATH: {"get": {
            "summary": "Exact and pattern search (git grep): matching lines with their symbol, counted",
            "security": [{"api": []}],
            "parameters": _query_parameters(GrepParams),
            "responses": {"200": _json(GrepAnswer, "A page of matching lines"),
                          "400": _error("Bad parameters, or a refused pattern"), "401": _error("Not authenticated")},
        }},
        CONTEXT_PATH: {"get": {
            "summary": "The few chunks most useful for a task (auto_context), framed as quoted data",
            "security": [{"api": []}],
            "parameters": _query_parameters(ContextParams),
            "responses": {"200": _json(ContextAnswer, "The context; empty text when nothing is relevant enough"),
                          "400": _error("Bad parameters"), "401": _error("Not authenticated")},
        }},
        CONFIG_PATH: {"get": {
            "summary": "Where a Spring configuration key is set (per profile) and the code that reads it",
            "security": [{"api": []}],
            "parameters": _query_parameters(ConfigParams),
            "responses": {"200": _json(ConfigAnswer, "Settings then readers"), "400": _error("Bad parameters"),
                          "401": _error("Not authenticated")},
        }},
        CODE_PATH: {"get": {
            "summary": "An indexed file's lines at the indexed commit, with its declarations (read_code)",
            "security": [{"api": []}],
            "parameters": _query_parameters(CodeParams),
            "responses": {"200": _json(CodeAnswer, "A page of lines"), "400": _error("Bad parameters or path"),
                          "401": _error("Not authenticated"),
                          "404": _error("No such indexed file, or not readable: the same answer"),
                          "503": _error("GitLab is unavailable")},
        }},
        IMPACT_PATH: {"get": {
            "summary": "What a change reaches: callers by hop, endpoints, remote call sites (impact)",
            "security": [{"api": []}],
            "parameters": _query_parameters(ImpactParams),
            "responses": {"200": _json(ImpactAnswer, "The impact, each entry with its path of evidence"),
                          "400": _error("Bad parameters"), "401": _error("Not authenticated"),
                          "404": _error("Nothing readable is named or touched")},
        }},
        INDEX_JOBS_PATH: {"post": {
            "summary": "A CI job asks to index its project (a GitLab CI job token, or an index-job token)",
            "security": [{"job_token": []}, {"index_token": []}],
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref(IndexJobRequest)}}},
            "responses": {"200": _json(IndexJobAnswer, "Asked before: the same job"),
                          "202": _json(IndexJobAnswer, "Recorded and queued (or ignored, with the reason)"),
                          "400": _error("Invalid body"), "401": _error("Not authenticated"),
                          "403": _error("The token is for another project or commit"),
                          "404": _error("GitLab does not know the project"),
                          "409": _error("GitLab not configured"), "413": _error("Body too large"),
                          "503": _error("Not recorded: try again")},
        }},
        INDEX_JOBS_PATH + "/{job_id}": {"get": {
            "summary": "An index job's state", "security": [{"job_token": []}, {"index_token": []}, {"admin": []}],
            "parameters": [_id_in_path("job_id")],
            "responses": {"200": _json(IndexJobAnswer, "The job"), "401": _error("Not authenticated"),
                          "404": _error("No such job for this token"), "503": _error("Try again")},
        }},
        INDEX_STATUS_PATH: {"get": {
            "summary": "The index status of every project the caller may read", "security": [{"api": []}],
            "parameters": _query_parameters(IndexStatusParams),
            "responses": {"200": _json(IndexStatusAnswer, "Per project"), "400": _error("Bad parameters"),
                          "401": _error("Not authenticated")},
        }},
        "/admin/reindex": {"post": {
            "summary": "Backfill a project, a group, every project, or listed ids", "security": admin,
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref(ReindexRequest)}}},
            "responses": {"202": _json(ReindexAccepted, "Backfill queued"), "400": _error("Invalid body"),
                          "401": _error("Not authenticated"), "409": _error("GitLab not configured"),
                          "413": _error("Body too large"), "503": _error("Queue unavailable")},
        }},
        "/admin/backfills": {"get": {
            "summary": "Every backfill (the admin's and the sweep's), oldest first, paginated; ?status= keeps one kind",
            "security": admin,
            "parameters": [*pages, {"name": "status", "in": "query", "required": False, "schema": {
                "type": "string", "enum": list(get_args(BackfillStatusValue))}}],
            "responses": {"200": _list(BackfillSummary, "Backfills"), "400": _error("Bad parameters"),
                          "401": _error("Not authenticated")},
        }},
        "/admin/backfills/{backfill_id}": {"get": {
            "summary": "A backfill's progress, throughput, ETA and a page of its projects", "security": admin,
            "parameters": [_id_in_path("backfill_id"), *pages,
                           {"name": "state", "in": "query", "required": False, "schema": {"type": "string",
                            "enum": list(get_args(BackfillProgressValue))}}],
            "responses": {"200": _json(BackfillReport, "The backfill"), "400": _error("Bad parameters"),
                          "401": _error("Not authenticated"), "404": _error("No such backfill")},
        }},
        "/admin/rebuild": {"post": {
            "summary": "Rebuild every project into a new generation with the next embedding model, then switch",
            "security": admin,
            "responses": {"202": _json(RebuildAccepted, "Rebuild queued"), "401": _error("Not authenticated"),
                          "409": _error("A rebuild is running, or GitLab is not configured"),
                          "503": _error("Queue unavailable")},
        }},
        "/admin/rebuilds/{rebuild_id}": {"get": {
            "summary": "A model rebuild's state and progress", "security": admin,
            "parameters": [_id_in_path("rebuild_id")],
            "responses": {"200": _json(RebuildReport, "The rebuild"), "401": _error("Not authenticated"),
                          "404": _error("No such rebuild")},
        }},
        "/admin/projects": {"get": {
            "summary": "Every project's sync state, by id, paginated", "security": admin, "parameters": pages,
            "responses": {"200": _list(ProjectState, "Projects"), "400": _error("Bad parameters"),
                          "401": _error("Not authenticated")},
        }},
        "/admin/projects/{project_id}": {"get": {
            "summary": "One project's sync state", "security": admin,
            "parameters": [_id_in_path("project_id")],
            "responses": {"200": _json(ProjectState, "The project"), "401": _error("Not authenticated"),
                          "404": _error("No such project")},
        }},
        "/admin/jobs": {"get": {
            "summary": "Sync runs, oldest first, paginated; ?status= keeps one kind", "security": admin,
            "parameters": [*pages, {"name": "status", "in": "query", "required": False, "schema": {
                "type": "string", "enum": [v.lower() for v in get_args(RunStatusValue)]}}],
            "responses": {"200": _list(JobState, "Sync runs"), "400": _error("Bad parameters"),
                          "401": _error("Not authenticated")},
        }},
    }  # fmt: skip


def openapi_document(version: str) -> dict[str, Any]:
    """The whole description (pure: built from the models)."""
    _, definitions = models_json_schema(_MODELS, ref_template=_REF)
    return {
        "openapi": "3.1.0",
        "info": {"title": "java-kb-indexer", "version": version},
        "paths": _paths(),
        "components": {
            "schemas": definitions.get("$defs", {}),
            "securitySchemes": {
                "api": {"type": "http", "scheme": "bearer", "description": "An API token (MCP and REST)"},
                "admin": {"type": "http", "scheme": "bearer", "description": "An admin token"},
                "gitlab_token": {"type": "apiKey", "in": "header", "name": "X-Gitlab-Token"},
                "job_token": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "JOB-TOKEN",
                    "description": "A GitLab CI job's CI_JOB_TOKEN (checked with GitLab)",
                },
                "index_token": {"type": "http", "scheme": "bearer", "description": "An index-job token"},
            },
        },
    }


def public_document(document: dict[str, Any]) -> dict[str, Any]:
    """`document` without the operations only an admin token may call, nor the schemas only they use."""
    paths = {}
    for path, operations in document["paths"].items():
        kept = {verb: op for verb, op in operations.items() if op.get("security") != ADMIN_ONLY}
        if kept:
            paths[path] = kept
    schemas = document["components"]["schemas"]
    used = _reachable(paths, schemas)
    components = {**document["components"], "schemas": {k: v for k, v in schemas.items() if k in used}}
    return {**document, "paths": paths, "components": components}


def _reachable(root: Any, schemas: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    todo = [root]
    while todo:
        for name in re.findall(r'"#/components/schemas/([^"]+)"', json.dumps(todo.pop())):
            if name not in found:
                found.add(name)
                todo.append(schemas.get(name, {}))
    return found
