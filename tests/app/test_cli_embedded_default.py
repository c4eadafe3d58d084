"""`javakb index` and `javakb search` on bare defaults: the embedded model, hybrid search (issue 26)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.embedded import EMBEDDED_MODEL
from tests.app.test_cli_index_search import (  # noqa: F401  (fixtures: the store's folder, the project)
    PROJECT_CHUNKS,
    REPO,
    index,
    project,
    qdrant_path,
    run,
    search_json,
)


def test_bare_defaults_embed_with_the_embedded_model_and_search_finds_by_meaning(
    project: Path,  # noqa: F811  (the fixture imported above)
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index(capsys, project)
    assert search_json(capsys, "tax") == []  # lexical-only: no chunk has the word
    monkeypatch.delenv("JAVAKB_EMBEDDING__PROVIDER")  # no embedding setting at all
    code, _, err = run(capsys, "index", str(project), "--repo", REPO, "--rebuild")
    assert code == 0 and f"{PROJECT_CHUNKS} chunks embedded with {EMBEDDED_MODEL} and indexed" in err

    # No chunk says "tax": the embedded model's vectors find prices by meaning. (The code token
    # table found the invoices for "receipt"; the MiniLM distillation does not, docs/decisions.md.)
    [first, *_] = search_json(capsys, "tax")
    assert "pric" in first["qualified_name"].lower()  # PricingPolicy, LegacyEncoding.priceLabel
