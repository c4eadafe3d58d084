"""Where the Java fixture projects live, for the pipeline and CLI tests."""

from __future__ import annotations

from pathlib import Path

JAVA_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "java"
SHOP_DIR = JAVA_FIXTURES / "shop"
"""The multi-module Spring project described in `tests/fixtures/java/shop/FIXTURE.md`."""
