"""The dense list's weight follows the question (`app.search.intent`): a question of code names only leans lexical.

The search test writes its corpus here: one method whose body spells the name the question asks for, and
decoys that mention it once in a longer body but which a toy embedder puts nearest the question. At the
full dense weight a decoy leads; with the names-only lean the method that spells the name does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest
import pytest_asyncio
from qdrant_client import AsyncQdrantClient

from app.auth.access import LOCAL
from app.search import boosts, intent
from app.search.question import query_terms
from app.search.service import SearchService
from app.store.vectors import IndexModel, VectorStore
from tests.support.engines import write_sources

REPO = "team/app"
TARGET = """\
package demo;

public class Worker {
    public int run(int tries) {
        int retryBudget = tries;
        return retryBudget > 0 ? retryBudget - 1 : retryBudget;
    }
}
"""
DECOY = """\
package demo.d{i};

public class Decoy{i} {{
    /** Spends what is left of the retries on the next attempt, then waits and tries again later. */
    public void attempt{i}(java.util.List<String> steps, int waitMillis, int attempts, String label) {{
        int retryBudget = attempts;
        for (String step : steps) {{
            System.out.println(label + step + waitMillis + attempts);
        }}
    }}
}}
"""


class ToyEmbedder:
    """Puts the question and the decoys' methods on one axis, the rest on another: the dense list ranks those first."""

    model = "toy"

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] if "retryBudget = attempts" in text else [0.0, 1.0] for text in texts]

    async def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]

    async def dimension(self) -> int:
        return 2


@pytest.fixture
def rule_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(boosts, "DISABLED", boosts.DISABLED - {"names_only_dense"})


@pytest.fixture
def rule_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(boosts, "DISABLED", boosts.DISABLED | {"names_only_dense"})


@pytest.mark.usefixtures("rule_on")
@pytest.mark.parametrize("question", ["TypeAdapter", "Gson.toJson", "`retryBudget`", "JsonMapper ObjectMapper"])
def test_a_question_of_names_only_keeps_a_share_of_the_dense_weight(question: str) -> None:
    assert intent.dense_weight(query_terms(question), 1.0) == pytest.approx(intent.NAMES_ONLY_SHARE)
    assert intent.dense_weight(query_terms(question), 0.5) == pytest.approx(0.5 * intent.NAMES_ONLY_SHARE)


@pytest.mark.usefixtures("rule_on")
@pytest.mark.parametrize(
    "question",
    [
        "streaming JSON reader and token parsing",
        "ObjectMapper entry point for reading and writing JSON",
        "how are owners saved",
        "who calls OwnerService.find",
        "",
    ],
)
def test_a_question_in_words_keeps_the_whole_dense_weight(question: str) -> None:
    assert intent.dense_weight(query_terms(question), 0.8) == 0.8


@pytest.mark.usefixtures("rule_off")
def test_switched_off_a_question_of_names_keeps_the_whole_dense_weight() -> None:
    assert intent.dense_weight(query_terms("TypeAdapter"), 1.0) == 1.0


@pytest_asyncio.fixture
async def search() -> AsyncIterator[SearchService]:
    vectors = VectorStore(AsyncQdrantClient(location=":memory:"), "java_code")
    embedder = ToyEmbedder()
    await vectors.ensure(IndexModel(embedding_model=embedder.model, dimension=2))
    sources = [("src/main/java/demo/Worker.java", TARGET)]
    sources += [(f"src/main/java/demo/d{i}/Decoy{i}.java", DECOY.format(i=i)) for i in range(6)]
    await write_sources(vectors, REPO, sources, embedder)
    try:
        yield SearchService(vectors, embedder)
    finally:
        await vectors.close()


async def first(search: SearchService, question: str) -> str:
    hits = await search.search(LOCAL, question, limit=3)
    return hits[0].qualified_name.rsplit(".", 2)[-2]


@pytest.mark.usefixtures("rule_off")
async def test_at_the_whole_dense_weight_a_decoy_the_embedder_favours_leads(search: SearchService) -> None:
    assert (await first(search, "retryBudget")).startswith("Decoy")


@pytest.mark.usefixtures("rule_on")
async def test_leaning_lexical_the_method_that_spells_the_name_leads(search: SearchService) -> None:
    assert await first(search, "retryBudget") == "Worker"
