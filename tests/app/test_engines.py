"""Which store `open_store` opens: Qdrant Edge by default, local mode when asked, a server when configured."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.core.settings import QdrantSettings
from app.store.edge import EdgeStore
from app.store.engines import open_store
from app.store.vectors import VectorStore


@pytest.fixture(autouse=True)
def no_engine_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAVAKB_QDRANT__ENGINE", raising=False)


async def test_edge_is_the_default_embedded_engine() -> None:
    store = open_store(QdrantSettings(path=":memory:"))
    try:
        assert QdrantSettings().engine == "edge"
        assert isinstance(store, EdgeStore)
    finally:
        await store.close()


async def test_local_mode_stays_selectable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVAKB_QDRANT__ENGINE", " Local ")
    store = open_store(QdrantSettings(path=":memory:"))
    try:
        assert isinstance(store, VectorStore) and not store.server
    finally:
        await store.close()


def test_a_misspelt_engine_is_a_settings_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVAKB_QDRANT__ENGINE", "lcoal")

    with pytest.raises(ValidationError, match="'edge' or 'local'"):
        QdrantSettings()
