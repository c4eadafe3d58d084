from __future__ import annotations

import pytest

from tests.support.shop import Shop, chunk_shop


@pytest.fixture(scope="module")
def shop() -> Shop:
    """The `shop` fixture project, chunked once per test module with the default config."""
    return chunk_shop()
