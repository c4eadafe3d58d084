"""Pooling variants of the embedded model, each on and off, through the candidate harness (issue 26).

    .venv/bin/python -m bench.pooling_variants --annotations DIR --jdk-src SRC_ZIP \
      --repo gson=PATH --repo commons-lang=PATH --repo jackson-databind=PATH [--header-weight N] [VARIANT...]

The embedded model (`app.store.static_embedder`) sums its words' token vectors. Each variant changes
that sum in one general way, with nothing taken from the benchmark's repositories:

- `sif:A`: each word weighs A / (A + p(w)) (smooth inverse frequency), p(w) its frequency among the
  words of the JDK's `java.base` sources (SRC_ZIP: `openjdk-17-source`'s `lib/src.zip`; the table's own
  order is alphabetical, not by frequency); a word the JDK never uses weighs 1;
- `idf`: each word weighs 1 + log((N + 1) / (df(w) + 1)) over the same N `java.base` files;
- `pc1`: the projection on the first principal direction of the table's vectors is removed;
- `whole`: a compound identifier also counts as its whole lowercased self when the table holds it
  (`jsonreader`), besides its parts;
- `+` joins variants (`sif:1e-2+pc1`); `baseline` is the committed rule.

Prints one JSON line per variant (`bench.model_candidates.evaluate`'s fields). A measuring tool only:
the service's embedder is unchanged by it.
"""

from __future__ import annotations

import argparse
import collections
import json
import zipfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from app.store.static_embedder import _IDENTIFIER, words
from app.store.token_table import TokenTable, load_table
from bench.embedded_model import model_texts_and_files
from bench.model_candidates import Embed, evaluate_embed
from pipeline.render import SEPARATOR

Vector = npt.NDArray[np.float32]


def jdk_word_counts(src_zip: Path) -> tuple[Counter[str], Counter[str], int]:
    """Word counts, file counts and the number of files of the `java.base` sources in `src_zip`."""
    tf: Counter[str] = collections.Counter()
    df: Counter[str] = collections.Counter()
    files = 0
    with zipfile.ZipFile(src_zip) as archive:
        for name in archive.namelist():
            if name.startswith("java.base/") and name.endswith(".java"):
                found = words(archive.read(name).decode("utf-8", "replace"))
                tf.update(found)
                df.update(set(found))
                files += 1
    return tf, df, files


def sif_weights(table: TokenTable, tf: Counter[str], a: float) -> Vector:
    """a / (a + p(w)) per table row, p(w) the word's share of all words counted in `tf`."""
    total = sum(tf.values()) or 1
    p = np.array([tf.get(w, 0) for w in sorted(table.index, key=table.index.__getitem__)], np.float64) / total
    return (a / (a + p)).astype(np.float32)


def idf_weights(table: TokenTable, df: Counter[str], files: int) -> Vector:
    """1 + log((files + 1) / (df(w) + 1)) per table row."""
    counts = np.array([df.get(w, 0) for w in sorted(table.index, key=table.index.__getitem__)], np.float64)
    return (1.0 + np.log((files + 1) / (counts + 1))).astype(np.float32)


def first_direction(table: TokenTable) -> Vector:
    """The unit first principal (uncentred) direction of the table's vectors, by power iteration from their mean."""
    vectors = table.vectors.astype(np.float32)
    x: Vector = np.asarray(vectors.mean(axis=0), np.float32)
    for _ in range(30):
        x = vectors.T @ (vectors @ x)
        x /= float(np.linalg.norm(x))
    return x


def remove_direction(vector: Vector, direction: Vector) -> Vector:
    """`vector` less its projection on the unit `direction`."""
    return (vector - float(vector @ direction) * direction).astype(np.float32)


def pooled_counts(table: TokenTable, text: str, header_weight: int, whole: bool) -> Counter[int]:
    """Rows of the words of `text` with counts (header words `header_weight` times; `whole`: compounds too)."""
    header, separator, code = text.partition(SEPARATOR)
    counts: Counter[int] = collections.Counter()
    for part, weight in ((header, header_weight), (code, 1)) if separator else ((header, 1),):
        found = words(part)
        if whole:
            found += [t.lower() for t in _IDENTIFIER.findall(part) if len(words(t)) > 1]
        for word in found:
            if (row := table.index.get(word)) is not None:
                counts[row] += weight
    return counts


def variant_embed(
    table: TokenTable, weights: Vector, direction: Vector | None, header_weight: int, whole: bool
) -> Embed:
    """An `Embed` summing word vectors times `weights`, less `direction` when given, normalised."""
    vectors = table.vectors

    def embed(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), table.dimension), np.float32)
        for i, text in enumerate(texts):
            counts = pooled_counts(table, text, header_weight, whole)
            if not counts:
                continue
            rows = np.fromiter(counts.keys(), np.intp, len(counts))
            vector: Vector = (
                (np.fromiter(counts.values(), np.float32, len(counts)) * weights[rows]) @ vectors[rows]
            ).astype(np.float32)
            if direction is not None:
                vector = remove_direction(vector, direction)
            norm = float(np.linalg.norm(vector))
            out[i] = vector / norm if norm > 0 else vector
        return out

    return embed


def main() -> None:
    """Chunk each repository once, then evaluate every variant on the same chunks."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--annotations", type=Path, required=True)
    parser.add_argument("--jdk-src", type=Path, required=True, help="openjdk-17-source's lib/src.zip")
    parser.add_argument("--repo", action="append", required=True, help="NAME=PATH of a checkout")
    parser.add_argument("--header-weight", type=int, default=3)
    parser.add_argument("variants", nargs="*", default=["baseline", "sif:1e-2", "idf", "pc1", "whole"])
    args = parser.parse_args()
    repos = {n: model_texts_and_files(Path(p)) for n, _, p in (r.partition("=") for r in args.repo)}
    table = load_table()
    tf, df, files = jdk_word_counts(args.jdk_src)
    direction = first_direction(table)
    for spec in args.variants:
        parts = set(spec.split("+")) - {"baseline"}
        weights = np.ones(len(table.index), np.float32)
        for part in parts:
            if part.startswith("sif:"):
                weights *= sif_weights(table, tf, float(part[4:]))
            elif part == "idf":
                weights *= idf_weights(table, df, files)
            elif part not in ("pc1", "whole"):
                raise SystemExit(f"unknown variant {part!r}")
        removed = direction if "pc1" in parts else None
        embed = variant_embed(table, weights, removed, args.header_weight, "whole" in parts)
        result = evaluate_embed(f"{spec} (header x{args.header_weight})", embed, repos, args.annotations)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
