"""Dense-only probe for models too slow to index a whole repository here: answers among sampled distractors.

    .venv/bin/python -m tests.quality.vocab_dense_probe --mirrors /work/.mirror --repo eladmin \\
        --embedding-url URL --model M [--query-prefix "query: " --document-prefix "passage: "] [--distractors 150]

For each natural-language question of `tests.quality.real.questions` answered in the repository,
the candidates are its answers' chunks plus the same `--distractors` chunks of that repository
(drawn once with a fixed seed, from every chunk the production pipeline makes); the question's
vector is compared with every candidate's (cosine) and the first answer's rank is scored. Far
easier than the real suite (a few hundred candidates, no lexical side), so only a comparison
between models on the same candidates, never a suite number.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

from app.core.settings import EmbeddingSettings, Settings
from app.store.embeddings import OpenAIEmbedder
from app.sync.localfs import chunk_local_files, iter_sources
from pipeline.model import Chunk, SourceContext
from pipeline.render import model_text
from pipeline.scope import Scope
from tests.quality.real.question_lookups import SINGLES
from tests.quality.real.repos import DEFAULT_CACHE, PINS, materialise
from tests.quality.real.scoring import ranks


def repo_chunks(root: Path, repo_path: str) -> list[Chunk]:
    config = Settings().chunking.to_config()
    files = list(iter_sources(root, Scope.from_config(config)))
    return [c for r in chunk_local_files(files, SourceContext(repo_path=repo_path), config) for c in r.chunks]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def probe(args: argparse.Namespace) -> None:
    pin = next(p for p in PINS if p.name == args.repo)
    chunks = repo_chunks(materialise(pin, args.cache, args.mirrors), pin.repo_path)
    by_name: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_name.setdefault(chunk.qualified_name, []).append(chunk)
    questions = [q for q in SINGLES if q.kind == "natural" and q.expected & by_name.keys()]
    answers = {c.id: c for q in questions for name in q.expected for c in by_name.get(name, [])}
    distractors = random.Random(12).sample([c for c in chunks if c.id not in answers], args.distractors)
    candidates = [*answers.values(), *distractors]
    settings = EmbeddingSettings(
        base_url=args.embedding_url, model=args.model, query_prefix=args.query_prefix,
        document_prefix=args.document_prefix, batch_size=16, concurrency=1, timeout_s=600,
    )  # fmt: skip
    async with httpx.AsyncClient() as client:
        embedder = OpenAIEmbedder(settings, client)
        started = time.perf_counter()
        vectors = await embedder.embed([model_text(c.text) for c in candidates])
        seconds = time.perf_counter() - started
        outcome: list[int | None] = []
        for question in questions:
            q = await embedder.embed_query(question.text)
            order = sorted(range(len(candidates)), key=lambda i: -cosine(q, vectors[i]))
            names = [candidates[i].qualified_name for i in order]
            outcome.append(next((r for r, n in enumerate(names[:10], 1) if n in question.expected), None))
    print(f"== {args.model} on {pin.repo_path}: {len(candidates)} candidates embedded in {seconds:.0f} s")
    for tag in ("all", "vocab", "zh"):
        group = [r for q, r in zip(questions, outcome, strict=True) if tag == "all" or tag in q.tags]
        m = ranks(group)
        print(f"{tag:<6}{m.count:>4}  R@1 {m.recall_at_1:.2f}  R@5 {m.recall_at_5:.2f}  MRR {m.mrr:.2f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=None)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--repo", default="eladmin")
    parser.add_argument("--embedding-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--query-prefix", default="")
    parser.add_argument("--document-prefix", default="")
    parser.add_argument("--distractors", type=int, default=150)
    asyncio.run(probe(parser.parse_args(argv)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
