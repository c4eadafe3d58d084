"""The embedded store's background index builds: a section of `app.core.settings.QdrantSettings` (`index_build`)."""

from __future__ import annotations

from pydantic import BaseModel, Field


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
