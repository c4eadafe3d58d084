"""Candidate embedding models side by side: dense-only and dense+BM25 NDCG@10 over our chunks (issue 26).

    .venv/bin/python -m bench.model_candidates --annotations DIR --repo gson=PATH [--repo ...] MODEL...

DIR holds semble's `benchmarks/annotations/<repo>.json` files (queries, relevant files, category),
never committed: fetch them into a cache folder. PATH is a checkout of that repository (any commit: a
path in an annotation that is not among the chunks is counted as missed; `--rename OLD=NEW` maps
another layout's paths, e.g. jackson-databind 2.x's `com/fasterxml/jackson/databind` to 3.x's
`tools/jackson/databind`).
MODEL is `embedded` (ours, `app.store.static_embedder`), `m2v:FOLDER` (a model2vec static model
saved on disk; needs `model2vec`), or `onnx:MODEL.onnx,TOKENIZER.json` (a mean-pooled transformer
through onnxruntime on one thread; needs `onnxruntime` and `tokenizers`). The two optional kinds are
for scratch venvs: the project installs neither.

Each repository's chunks are embedded from their model text (what the indexer sends); each query
ranks every chunk by cosine (dense), by a plain BM25 over the chunk texts (the same for every model),
and by reciprocal-rank fusion of the two (k=60, top 200 of each). NDCG@10 is semble's chunk protocol:
a relevant file is found at the first of the top 10 chunks from it. This ranks *models*; the service's
own ranking (`app.search`) is measured by the semble runner, not here. Prints one JSON line per model.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from app.store.static_embedder import embed_all
from app.store.token_table import load_table
from bench.embedded_model import model_texts_and_files

Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*|[0-9]+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_RRF_K, _DEPTH = 60, 200


def bm25_terms(text: str) -> list[str]:
    """Lowercased identifier parts, plus each compound identifier whole."""
    out: list[str] = []
    for word in _WORD.findall(text):
        parts = _PART.findall(word)
        out.extend(p.lower() for p in parts)
        if len(parts) > 1:
            out.append(word.lower())
    return out


def bm25_scores(docs: Sequence[str]) -> Callable[[str], npt.NDArray[np.float64]]:
    """A scorer of a query against `docs` (k1 1.2, b 0.75)."""
    tfs = [collections.Counter(bm25_terms(d)) for d in docs]
    lengths = np.array([sum(t.values()) for t in tfs], float)
    df = collections.Counter(w for t in tfs for w in t)
    idf = {w: math.log(1 + (len(docs) - c + 0.5) / (c + 0.5)) for w, c in df.items()}
    postings: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
    for i, tf in enumerate(tfs):
        for w, c in tf.items():
            postings[w].append((i, c))
    norm = 1.2 * (0.25 + 0.75 * lengths / lengths.mean())

    def score(query: str) -> npt.NDArray[np.float64]:
        s = np.zeros(len(docs))
        for w in set(bm25_terms(query)):
            for i, c in postings.get(w, ()):
                s[i] += idf[w] * c * 2.2 / (c + norm[i])
        return s

    return score


def ndcg10(files: Sequence[str], relevant: Sequence[str]) -> float:
    """semble's NDCG@10: each relevant file counts at its first chunk among the top 10."""
    gains = [0.0] * 10
    for path in relevant:
        if path in files[:10]:
            gains[list(files[:10]).index(path)] = 1.0
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains)) / ideal


def fused(*orders: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
    """Reciprocal-rank fusion of the top `_DEPTH` of each order."""
    score = np.zeros(len(orders[0]))
    for order in orders:
        score[order[:_DEPTH]] += 1 / (_RRF_K + np.arange(1, _DEPTH + 1))
    return np.argsort(-score, kind="stable")


def embedder(spec: str) -> Embed:
    """The `Embed` a MODEL argument names."""
    if spec == "embedded":
        table = load_table()
        return lambda texts: np.asarray(embed_all(table, texts), np.float32)
    kind, _, where = spec.partition(":")
    if kind == "m2v":
        from model2vec import StaticModel  # type: ignore[import-not-found]

        model = StaticModel.from_pretrained(where)
        return lambda texts: np.asarray(model.encode(list(texts), max_length=None), np.float32)
    if kind == "onnx":
        return _onnx(*where.split(","))
    raise SystemExit(f"unknown model {spec!r}")


def _onnx(model_path: str, tokenizer_path: str) -> Embed:
    import onnxruntime as ort  # type: ignore[import-not-found]
    from tokenizers import Tokenizer  # type: ignore[import-not-found]

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(tokenizer_path)
    tokenizer.enable_truncation(256)
    tokenizer.enable_padding()

    def embed(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out: list[Any] = []
        for start in range(0, len(texts), 32):
            batch = tokenizer.encode_batch(list(texts[start : start + 32]))
            ids = np.array([e.ids for e in batch], np.int64)
            mask = np.array([e.attention_mask for e in batch], np.int64)
            [hidden, *_] = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": 0 * ids})
            out.extend((hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True))
        return np.asarray(out, np.float32)

    return embed


def evaluate(spec: str, repos: dict[str, tuple[list[str], list[str]]], annotations: Path) -> dict[str, Any]:
    """NDCG@10 per mode, per repository and per category, with chunks a second and a query's time."""
    return evaluate_embed(spec, embedder(spec), repos, annotations)


def evaluate_embed(
    spec: str, embed: Embed, repos: dict[str, tuple[list[str], list[str]]], annotations: Path
) -> dict[str, Any]:
    """`evaluate` of a given `Embed`, reported under the name `spec`."""
    scores: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
    embedded, embed_s, query_s = 0, 0.0, []
    for name, (texts, files) in repos.items():
        started = time.perf_counter()
        chunks = embed(texts)
        embed_s += time.perf_counter() - started
        embedded += len(texts)
        chunks /= np.linalg.norm(chunks, axis=1, keepdims=True) + 1e-9
        lexical = bm25_scores(texts)
        for query in json.loads((annotations / f"{name}.json").read_text(encoding="utf-8")):
            started = time.perf_counter()
            q = embed([query["query"]])[0]
            query_s.append(time.perf_counter() - started)
            dense = np.argsort(-(chunks @ q), kind="stable")
            bm25 = np.argsort(-lexical(query["query"]), kind="stable")
            for mode, order in (("dense", dense), ("bm25", bm25), ("hybrid", fused(dense, bm25))):
                value = ndcg10([files[i] for i in order[:10]], query["relevant"])
                for key in (name, query["category"], "all"):
                    scores[(mode, key)].append(value)
    result: dict[str, Any] = {"model": spec, "chunks_per_s": round(embedded / embed_s), "query_ms_p50": 0.0}
    result["query_ms_p50"] = round(1000 * sorted(query_s)[len(query_s) // 2], 3)
    for (mode, key), values in sorted(scores.items()):
        result.setdefault(mode, {})[key] = round(float(np.mean(values)), 3)
    return result


def main() -> None:
    """Chunk each repository once, then evaluate every model on the same chunks."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--annotations", type=Path, required=True)
    parser.add_argument("--repo", action="append", required=True, help="NAME=PATH of a checkout")
    parser.add_argument("--rename", action="append", default=[], help="OLD=NEW in chunk paths (another layout)")
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    renames = [r.partition("=")[::2] for r in args.rename]
    repos = {n: model_texts_and_files(Path(p), renames) for n, _, p in (r.partition("=") for r in args.repo)}
    for spec in args.models:
        print(json.dumps(evaluate(spec, repos, args.annotations)), flush=True)


if __name__ == "__main__":
    main()
