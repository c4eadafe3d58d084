"""What closes the vocabulary gap: the real-repository natural-language questions under header variants.

    .venv/bin/python -m tests.quality.vocab_variants --mirrors /work/.mirror [--repos eladmin piggymetrics]
        [--embedding-url URL --model M] [--without words "type summary"] [--query-prefix "query: " ...]

Indexes the chosen pinned repositories of `tests.quality.real` (all four by default) into one
collection through the production path and asks the natural-language single-answer questions whose
answers lie in them (`tests.quality.real.questions`), scored as that suite scores them. `--without`
drops header lines by label from every embedding text before it is embedded and weighed
(`pipeline.render.LABELS`), so one build measures each header line's effect alone; a subset of the
repositories keeps a dense run within minutes on a two-core machine (a small model embeds about 8
chunks a second here, and mall alone has 13,700 chunks).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from app.core.settings import EmbeddingSettings, QdrantSettings, Settings
from app.sync.local_index import index_directory
from entry.deps import open_deps
from pipeline import drafts, render
from pipeline.model import Chunk
from tests.quality.real.evaluate import ask_single
from tests.quality.real.gold import Corpus
from tests.quality.real.question_lookups import SINGLES
from tests.quality.real.repos import DEFAULT_CACHE, PINS, materialise
from tests.quality.real.scoring import SingleOutcome, single_table


def without_lines(labels: frozenset[str], render_text: Callable[..., str]) -> Callable[..., str]:
    """`render_text` with the header lines of `labels` left out."""

    def text(chunk: Chunk, *args: object) -> str:
        header, separator, code = render_text(chunk, *args).partition(render.SEPARATOR)
        kept = [line for line in header.split("\n") if line.partition(": ")[0] not in labels]
        return "\n".join(kept) + separator + code

    return text


async def run(args: argparse.Namespace) -> list[SingleOutcome]:
    pins = [p for p in PINS if not args.repos or p.name in args.repos]
    checkouts = [(pin, materialise(pin, args.cache, args.mirrors)) for pin in pins]
    corpus = Corpus.load((pin.repo_path, root) for pin, root in checkouts)
    known = {t.qualified_name for t in corpus.in_repo(None)} | {
        m.qualified_name for t in corpus.in_repo(None) for m in t.members
    }
    questions = [q for q in SINGLES if q.kind == "natural" and q.expected & known]
    embedding = EmbeddingSettings(
        base_url=args.embedding_url,
        model=args.model or "all-MiniLM-L6-v2",
        query_prefix=args.query_prefix,
        document_prefix=args.document_prefix,
        max_input_tokens=args.max_input_tokens,
        batch_size=32,
        concurrency=1,
    )
    settings = Settings(qdrant=QdrantSettings(path=":memory:"), embedding=embedding)
    async with open_deps(settings) as deps:
        for pin, root in checkouts:
            started = time.perf_counter()
            await index_directory(deps, root, pin.repo_path)
            print(f"indexed {pin.repo_path} in {time.perf_counter() - started:.0f} s", flush=True)
        started = time.perf_counter()
        outcomes = [await ask_single(deps.search, q, corpus) for q in questions]
        print(f"{len(questions)} questions in {time.perf_counter() - started:.1f} s")
    return outcomes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=None)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--repos", nargs="*", default=[], help="pin names (e.g. eladmin piggymetrics); default all")
    parser.add_argument("--embedding-url")
    parser.add_argument("--model")
    parser.add_argument("--query-prefix", default="")
    parser.add_argument("--document-prefix", default="")
    parser.add_argument("--max-input-tokens", type=int, default=8000)
    parser.add_argument("--without", nargs="*", default=[], choices=render.LABELS, help="header lines to drop")
    parser.add_argument("--misses", action="store_true")
    args = parser.parse_args(argv)
    if args.without:  # before indexing forks its workers, so they render the same way
        vars(drafts)["embedding_text"] = without_lines(frozenset(args.without), render.embedding_text)
    outcomes = asyncio.run(run(args))
    mode = f"hybrid {args.model}" if args.embedding_url else "lexical"
    print(f"== {mode}, repos {args.repos or 'all'}, without {args.without or 'nothing'}")
    print("\n".join(single_table(outcomes)))
    if args.misses:
        for o in outcomes:
            if o.rank != 1:
                print(f"  {o.rank or '-':>2} {o.question.text!r} -> {', '.join(o.returned[:3])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
