"""The REST models of `GET /api/v1/config` (issue 29): what the MCP tool `find_config` takes and answers."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.search.config import ConfigItem

CONFIG_PATH = "/api/v1/config"


class ConfigParams(BaseModel):
    """`GET /api/v1/config` query parameters: what the MCP tool `find_config` takes (issue 29)."""

    model_config = ConfigDict(extra="ignore")

    key: str = Field(
        min_length=1, max_length=300, description="A property key in any relaxed form (a.b-c, A_BC), or Type.field."
    )
    repo: str | None = Field(default=None, description="Repository path, or a group prefix ending in /.")
    path: str | None = Field(default=None, description="Only files under this folder or file.")


class ConfigAnswer(BaseModel):
    """`GET /api/v1/config`: where a key is set (per profile, file:line, value or the secret marker), who reads it."""

    key: str
    results: list[ConfigItem]
