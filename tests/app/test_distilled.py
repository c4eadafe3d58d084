"""The static models distilled from all-MiniLM-L6-v2 in numpy: the recipe, the cache, the embedder.

Distilling the whole vocabulary takes a minute of CPU, so these tests distil part of it: the first ids
and every piece the test texts are cut into. A token's row is its own transformer output whatever else
is distilled (only PCA and the Zipf ranks see the others), and greedy WordPiece cuts the texts as the
full vocabulary does (every piece it chose is kept, and no longer one is added)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from app.core.embedded import (
    CODE_TOKENS_MODEL,
    EMBEDDED_MODEL,
    EMBEDDED_MODELS,
    MINILM_M2V,
    MINILM_M2V_ASYMMETRIC,
    MINILM_M2V_BERT_WORDS,
    MINILM_M2V_CODE_MIX,
)
from app.core.settings import EmbeddingSettings
from app.store.distilled import (
    RECIPES,
    SIF,
    DistilledEmbedder,
    DistilledModel,
    Recipe,
    cached_table,
    piece_counts,
    post_process,
    token_outputs,
)
from app.store.minilm import MiniLM, encode, load_minilm
from app.store.static_embedder import words
from app.store.wordpiece import WordPiece
from pipeline.render import SEPARATOR
from tests.app.test_minilm import TOKEN_OUTPUTS
from tests.app.test_static_embedder import PARSE, RETRY, WRITE, cosine

QUESTIONS = ("turn JSON text into a tree of elements", "how long to wait before retrying a request")


def small(model: MiniLM, size: int = 2000, texts: tuple[str, ...] = (PARSE, RETRY, WRITE, *QUESTIONS)) -> MiniLM:
    """The model with its first `size` vocabulary entries and the pieces of `texts` (ids unchanged)."""
    used = {i for text in texts for i in model.tokenizer.encode(text, max_tokens=10_000)}
    used |= {i for text in texts for word in words(text) for i in model.tokenizer.pieces(word)}
    vocab = {t: i for t, i in model.tokenizer.vocab.items() if i < size or i in used or i in TOKEN_OUTPUTS}
    tokenizer = WordPiece(vocab=vocab, unk=model.tokenizer.unk, cls=model.tokenizer.cls, sep=model.tokenizer.sep)
    return dataclasses.replace(model, tokenizer=tokenizer)


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return small(load_minilm())


@pytest.fixture(scope="module")
def outputs(model: MiniLM) -> npt.NDArray[np.float32]:
    return token_outputs(model)


def test_each_row_is_the_tokens_own_output_weighted_by_its_zipf_rank(
    model: MiniLM, outputs: npt.NDArray[np.float32]
) -> None:
    table = post_process(model, outputs, pca=None)
    kept = sorted(i for t, i in model.tokenizer.vocab.items() if not t.startswith("[unused"))
    inverse_rank = 1 / np.arange(2, len(kept) + 2)
    for token, output in TOKEN_OUTPUTS.items():
        probability = inverse_rank[kept.index(token)] / inverse_rank.sum()
        assert np.allclose(table[token, :6], np.array(output) * SIF / (SIF + probability), atol=1e-4)
    assert not table[model.tokenizer.vocab["[unused0]"]].any()  # never used: left out, zero


def test_pca_keeps_the_widest_axes_of_the_centred_table(model: MiniLM, outputs: npt.NDArray[np.float32]) -> None:
    table = post_process(model, outputs, pca=16)
    assert table.shape[1] == 16
    spread = table[table.any(axis=1)].std(axis=0)
    assert spread[0] > spread[-1]


def test_the_table_is_distilled_once_then_read_from_the_cache(tmp_path: Path) -> None:
    model, recipe = small(load_minilm(), 400), Recipe(pca=8)
    first = cached_table(model, recipe, tmp_path)
    written = sorted(path.name for path in tmp_path.iterdir())  # the table, and the token outputs it came from
    assert len(written) == 2 and written[0].startswith(recipe.table_name) and "token-outputs" in written[1]
    again = cached_table(model, recipe, tmp_path)
    assert isinstance(again, np.memmap) and np.array_equal(first, again)


def test_header_pieces_weigh_more_and_identifiers_are_split_before_wordpiece() -> None:
    model = load_minilm()
    vocab = model.tokenizer.vocab
    distilled = DistilledModel(recipe=Recipe(pca=256), minilm=model, table=np.zeros((1, 1), dtype=np.float32))
    counts = piece_counts(distilled, f"words: readTree{SEPARATOR}readTree")
    assert counts == {vocab["words"]: 3, vocab["read"]: 4, vocab["tree"]: 4}  # punctuation is no word
    bert_words = dataclasses.replace(distilled, recipe=Recipe(pca=256, split=False))
    assert piece_counts(bert_words, "readTree") == {vocab["read"]: 1, vocab["##tree"]: 1}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


def embedder_of(name: str, cache: Path) -> DistilledEmbedder:
    return DistilledEmbedder(name, RECIPES[name], cache, minilm=lambda: small(load_minilm()))


async def test_a_question_is_nearer_the_code_that_does_what_it_asks(cache: Path) -> None:
    embedder = embedder_of(MINILM_M2V, cache)
    parse, retry, write = await embedder.embed([PARSE, RETRY, WRITE])
    about_parsing, about_backoff = [await embedder.embed_query(q) for q in QUESTIONS]
    assert cosine(about_parsing, parse) > max(cosine(about_parsing, retry), cosine(about_parsing, write))
    assert cosine(about_backoff, retry) > max(cosine(about_backoff, parse), cosine(about_backoff, write))
    assert await embedder.dimension() == 256 and abs(float(np.linalg.norm(parse)) - 1) < 1e-5


async def test_asymmetric_questions_are_the_transformers_own_vectors(cache: Path) -> None:
    embedder = embedder_of(MINILM_M2V_ASYMMETRIC, cache)
    question = QUESTIONS[1]
    assert np.allclose(await embedder.embed_query(question), encode(load_minilm(), [question])[0], atol=1e-6)
    parse, retry = await embedder.embed([PARSE, RETRY])
    assert cosine(await embedder.embed_query(question), retry) > cosine(await embedder.embed_query(question), parse)


def test_every_embedded_model_is_a_setting_and_an_unknown_one_is_refused() -> None:
    assert set(RECIPES) == set(EMBEDDED_MODELS) - {CODE_TOKENS_MODEL} and EMBEDDED_MODELS[0] == EMBEDDED_MODEL
    assert EmbeddingSettings().model_name == EMBEDDED_MODEL == MINILM_M2V_BERT_WORDS  # the default
    assert EmbeddingSettings(embedded_model=MINILM_M2V).model_name == MINILM_M2V
    with pytest.raises(ValueError, match="embedded_model must be one of"):
        EmbeddingSettings(embedded_model="word2vec")


async def test_a_batch_gives_each_text_the_vector_it_gets_alone(cache: Path) -> None:
    embedder = embedder_of(MINILM_M2V, cache)
    batch = await embedder.embed([PARSE, RETRY, "retry with back-off"])
    assert batch[:2] == [(await embedder.embed([text]))[0] for text in (PARSE, RETRY)]
    assert batch[2] == await embedder.embed_query("retry with back-off")  # a question has no header
    assert await embedder.embed(["@@ {} ;;"]) == [[0.0] * 256]  # no word: the zero vector


async def test_the_code_mix_concatenates_both_unit_vectors_at_half_weight(cache: Path) -> None:
    mixed = await embedder_of(MINILM_M2V_CODE_MIX, cache).embed([PARSE])
    alone = await embedder_of(MINILM_M2V, cache).embed([PARSE])
    assert len(mixed[0]) == 256 + 768 and abs(float(np.linalg.norm(mixed[0])) - 1) < 1e-5
    assert np.allclose(np.array(mixed[0][:256]) * np.sqrt(2), alone[0], atol=1e-5)
