"""The embedded model's cost on real code: chunks a second on one core, a question's time, memory added.

    .venv/bin/python -m bench.embedded_model PATH [--copies N] [--questions K] [--model NAME]

PATH is any Java source tree (walked with the default scope, as `javakb chunks` does). Its chunks'
model texts (`pipeline.render.model_text`, what the indexer sends) are embedded on this thread with
`app.store.static_embedder.embed_all`, `--copies` times over (100k chunks: copies = 100000 / chunks),
after one warm-up pass that also reads the table; the RSS growth from reading the table and the
vectors' own size are reported apart. Questions are timed through the embedder's `embed_query`, as a
search calls it. `--model` names another embedded model (`EMBEDDED_MODELS`; a distilled one is read from, or
first distilled into, `--cache`). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from app.core.embedded import CODE_TOKENS_MODEL, EMBEDDED_MODEL, EMBEDDED_MODELS
from app.core.settings import ChunkingSettings, EmbeddingSettings
from app.store.distilled import RECIPES, DistilledEmbedder, embed_text, load_model
from app.store.embeddings import Embedder
from app.store.static_embedder import StaticEmbedder, embed_all
from app.store.token_table import load_table
from app.sync.localfs import chunk_local_files, iter_sources
from pipeline.model import SourceContext
from pipeline.render import model_text
from pipeline.scope import Scope

CACHE = Path(EmbeddingSettings().model_cache).expanduser()
QUESTIONS = (
    "where is the retry back-off computed",
    "the JSON object with named fields",
    "parse a date from a string with a pattern",
    "serialize a bean to JSON with its getters",
    "escape HTML entities in a string",
    "read configuration from a properties file",
    "which class converts numbers to strings",
    "compare two objects for equality field by field",
)


def rss_mb() -> float:
    """This process's peak resident set, in MB (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1000


def model_texts_and_files(root: Path, renames: Sequence[tuple[str, str]] = ()) -> tuple[list[str], list[str]]:
    """The model text of every chunk under `root`, and its file's path from `root` (each `renames` applied)."""
    config = ChunkingSettings().to_config()
    files = list(iter_sources(root, Scope.from_config(config)))
    chunks = [
        c for result in chunk_local_files(files, SourceContext(repo_path=root.name), config, 1) for c in result.chunks
    ]
    paths = [c.file_path for c in chunks]
    for old, new in renames:
        paths = [p.replace(old, new) for p in paths]
    return [model_text(c.text) for c in chunks], paths


def loaded(name: str, cache: Path) -> tuple[Callable[[list[str]], list[list[float]]], Embedder]:
    """Read model `name` (timed by the caller); its batch function and an embedder for questions."""
    if name == CODE_TOKENS_MODEL:
        table = load_table()
        return (lambda texts: embed_all(table, texts)), StaticEmbedder()
    model = load_model(RECIPES[name], cache)
    return (lambda texts: [embed_text(model, t) for t in texts]), DistilledEmbedder(name, RECIPES[name], cache)


def measure(
    root: Path, copies: int, questions: int, name: str = EMBEDDED_MODEL, cache: Path = CACHE
) -> dict[str, object]:
    """Time the table's reading, every chunk's embedding and `questions` rounds of the questions."""
    texts, _ = model_texts_and_files(root)
    before = rss_mb()
    started = time.perf_counter()
    embed_batch, embedder = loaded(name, cache)
    load_s = time.perf_counter() - started
    after_load = rss_mb()
    embed_batch(texts[:200])  # warm-up
    started = time.perf_counter()
    for _ in range(copies):
        vectors = embed_batch(texts)
    embed_s = time.perf_counter() - started
    timings: list[float] = []

    async def ask() -> None:
        await embedder.dimension()
        for _ in range(questions):
            for question in QUESTIONS:
                t0 = time.perf_counter()
                await embedder.embed_query(question)
                timings.append(time.perf_counter() - t0)

    asyncio.run(ask())
    ordered = sorted(timings)
    return {
        "model": name,
        "chunks": len(texts) * copies,
        "chunks_per_s": round(len(texts) * copies / embed_s),
        "mean_chars": round(statistics.mean(len(t) for t in texts)),
        "question_ms_p50": round(1000 * ordered[len(ordered) // 2], 3),
        "question_ms_p99": round(1000 * ordered[int(len(ordered) * 0.99)], 3),
        "table_load_s": round(load_s, 3),
        "rss_added_by_table_mb": round(after_load - before, 1),
        "vectors_of_one_copy_mb": round(len(vectors) * len(vectors[0]) * 4 / 1e6, 1),  # as float32
    }


def main() -> None:
    """Parse the arguments, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--copies", type=int, default=1, help="embed every chunk this many times")
    parser.add_argument("--questions", type=int, default=50, help="rounds of the questions")
    parser.add_argument("--model", choices=EMBEDDED_MODELS, default=EMBEDDED_MODEL, help="the embedded model")
    parser.add_argument("--cache", type=Path, default=CACHE, help="where a distilled model's table is kept")
    args = parser.parse_args()
    print(json.dumps(measure(args.path, args.copies, args.questions, args.model, args.cache)))


if __name__ == "__main__":
    main()
