"""Where the vectors live: `QdrantSettings`, the `qdrant` section of `app.core.settings.Settings`.

Its `index_build` section says when the embedded store's HNSW index is built in the background.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator

from app.core.secret_rules import empty_is_unset


class IndexBuildSettings(BaseModel):
    """When `serve` builds the embedded Edge store's HNSW index in the background (`app.store.edge_index`)."""

    threshold: int = Field(
        default=10_000,
        ge=0,
        description="Dense vectors written without the HNSW index that start a background build of it, in another "
        "process (0: never; searches scan those vectors exactly).",
    )
    journal_max: int = Field(
        default=50_000,
        ge=1,
        description="Points written during a build (kept in memory for it) past which the build is given up and "
        "tried again after later writes.",
    )


def _embedded_engine() -> Any:
    """`JAVAKB_QDRANT__ENGINE` also for a `QdrantSettings` built in code (benches, tests), so one variable picks it.

    The value is validated as the field's (`validate_default`): a misspelt engine is an error, not the default.
    """
    return os.environ.get("JAVAKB_QDRANT__ENGINE", "edge").strip().lower()


class QdrantSettings(BaseModel):
    """Where the vectors live: a Qdrant server (url) or the embedded engine (path)."""

    url: str | None = Field(default=None, description="Qdrant server URL; unset means the embedded engine.")
    api_key: SecretStr | None = Field(default=None, description="Qdrant API key")
    path: str = Field(default=".javakb/qdrant", description="Storage folder of the embedded mode.")
    engine: Literal["edge", "local"] = Field(
        default_factory=_embedded_engine,
        validate_default=True,
        description="Embedded engine when no url is set: Qdrant Edge, or qdrant-client's local mode (slower).",
    )
    collection: str = Field(default="java_code", description="The alias searched; one per organization.")
    timeout_s: float = Field(default=30.0, gt=0, description="Seconds per Qdrant call")
    index_build: IndexBuildSettings = Field(default_factory=IndexBuildSettings)
    payload_cache: int = Field(
        default=16_384,
        ge=0,
        description="Embedded engine: points per generation whose decoded payloads are kept between searches "
        "(emptied by every write; 0: none).",
    )

    _unset_empty = field_validator("api_key", mode="before")(empty_is_unset)
