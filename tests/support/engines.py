"""The embedded engines the contract cases run against: Qdrant Edge (the default) and qdrant-client's
local mode (the stand-in for a Qdrant server's API, which is not available here)."""

from __future__ import annotations

from app.core.settings import QdrantSettings
from app.store.engines import Store, open_store

EMBEDDED_ENGINES = ("edge", "local")


def memory_store(engine: str, alias: str = "java_code") -> Store:
    """A store of `engine` that keeps nothing once closed."""
    return open_store(QdrantSettings(path=":memory:", engine=engine, collection=alias))  # type: ignore[arg-type]
