"""The answer forms of `find_config` (issue 29, `app.search.config`): a setting cited at its own line."""

from __future__ import annotations

from app.search.config import KeyUse, ancestors, config_item, config_line
from app.search.hits import hit_of
from app.store.payloads import stored_payload
from pipeline.chunking import chunk_source
from pipeline.config_keys import ConfigEntry
from pipeline.model import ChunkerConfig, SourceContext

CONTEXT = SourceContext(repo_path="acme/orders", gitlab_project_id=3, commit_sha="a" * 40)


def test_ancestors_of_a_key() -> None:
    assert ancestors("a.b[0].c") == ["a.b[0]", "a.b", "a"]
    assert ancestors("a") == []


def test_a_setting_is_cited_at_its_line_with_its_profile_and_permalink() -> None:
    text = b"payment:\n  currency: EUR\n  timeout-ms: 30\n"
    (chunk,) = chunk_source(text, "src/main/resources/application-eu.yml", CONTEXT, ChunkerConfig()).chunks
    hit = hit_of(chunk.id, 1.0, stored_payload(chunk, "2026-01-01T00:00:00+00:00"), "https://gl.example")
    item = config_item(KeyUse(hit, ConfigEntry.decode(chunk.config[1])))

    assert (item["line_start"], item["line_end"], item["profile"], item["value"]) == (3, 3, "eu", "30")
    assert (
        item["permalink"]
        == f"https://gl.example/acme/orders/-/blob/{'a' * 40}/src/main/resources/application-eu.yml#L3"
    )
    assert config_line(item) == "[eu] acme/orders:src/main/resources/application-eu.yml:3  payment.timeout-ms = 30"
