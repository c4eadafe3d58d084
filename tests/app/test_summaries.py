"""Index-time descriptions from a fake chat endpoint over real loopback HTTP: added, cached, never blocking."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.auth.access import LOCAL
from app.core.settings import QdrantSettings, Settings, SummarySettings
from app.sync.local_index import index_directory
from entry.deps import open_deps
from pipeline.render import content_hash, with_description
from testkit.fake_chat import FakeChat

BILLING = """package demo;

public class Billing {
    public long total(long[] lines) {
        long sum = 0;
        for (long line : lines) { sum += line; }
        return sum;
    }

    public void reset() {}
}
"""


@pytest.fixture
def chat() -> Iterator[FakeChat]:
    with FakeChat() as fake:
        yield fake


def settings(chat: FakeChat, **fields: object) -> Settings:
    summaries = SummarySettings.model_validate({"base_url": chat.base_url, "model": "tiny-chat", **fields})
    return Settings(qdrant=QdrantSettings(path=":memory:"), summaries=summaries)


def project(root: Path, source: str = BILLING) -> Path:
    folder = root / "src" / "main" / "java" / "demo"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Billing.java").write_text(source)
    return root


def test_a_description_goes_before_calls_and_leaves_the_hash() -> None:
    text = "symbol: demo.A.m\nsummary: S.\ncalls: B.x\n---\ncode"
    described = with_description(text, "Adds  up\nthe lines.")
    assert described == "symbol: demo.A.m\nsummary: S.\ndescription: Adds up the lines.\ncalls: B.x\n---\ncode"
    assert with_description("symbol: demo.A.m\n---\ncode", "D.").split("\n")[1] == "description: D."


async def test_new_chunks_are_described_once_and_found_by_the_words(chat: FakeChat, tmp_path: Path) -> None:
    root = project(tmp_path)
    async with open_deps(settings(chat)) as deps:
        await index_directory(deps, root, "acme/billing")
        first = len(chat.requests)
        hits = await deps.search.search(LOCAL, "invoice step that describes total", limit=3)
        await index_directory(deps, root, "acme/billing")  # unchanged: the store keeps the descriptions
        again = len(chat.requests)
        project(tmp_path, BILLING.replace("sum += line;", "sum += 2 * line;"))
        await index_directory(deps, root, "acme/billing")

    assert first == 3  # the class and its two methods
    body = chat.requests[0]
    assert body["model"] == "tiny-chat" and body["messages"][0]["role"] == "system"
    assert "symbol: demo.Billing" in body["messages"][1]["content"]
    assert hits[0].qualified_name == "demo.Billing.total"
    assert again == first
    changed = [r["messages"][1]["content"] for r in chat.requests[again:]]
    assert len(changed) == 1 and "symbol: demo.Billing.total\n" in changed[0]  # the class skeleton did not change


@pytest.mark.parametrize("failure", ["status", "timeout"])
async def test_an_outage_indexes_everything_undescribed_and_stops_asking(
    chat: FakeChat, tmp_path: Path, failure: str
) -> None:
    if failure == "status":
        chat.status = 503
    else:
        chat.delay_s = 1.0
    root = project(tmp_path)
    async with open_deps(settings(chat, max_failures=2, concurrency=1, timeout_s=0.2)) as deps:
        await index_directory(deps, root, "acme/billing")
        counts = await deps.search.repositories(LOCAL)
        hits = await deps.search.search(LOCAL, "Billing total", limit=3)

    assert counts == {"acme/billing": 3}
    assert len(chat.requests) == 2  # then the breaker opened for the third chunk
    assert hits[0].qualified_name == "demo.Billing.total"


def test_the_content_hash_is_taken_before_the_description() -> None:
    text = "symbol: demo.A.m\n---\ncode"
    assert content_hash(text) != content_hash(with_description(text, "D."))  # so it must be taken before
