"""How much of a checkout is generated code, and what `JAVAKB_SEARCH__GENERATED_CODE` does to search.

Run from the repository root on a checkout (e.g. macrozheng/mall at a pinned commit, unpacked with
`git archive`):

    .venv/bin/python -m bench.generated_code share /tmp/mall
    .venv/bin/javakb index /tmp/mall --repo macrozheng/mall          # with JAVAKB_QDRANT__PATH=STORE
    .venv/bin/python -m bench.generated_code search STORE macrozheng/mall "question" ...

`share` chunks the checkout with the default scope and prints, per top-level folder, the chunks and
files marked generated. `search` runs each question lexical-only in every mode (`include`, `demote`,
`exclude`) and counts generated hits in the top 5 and top 10.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import time
from collections.abc import Sequence
from pathlib import Path

from app.auth.access import LOCAL
from app.core.settings import GeneratedCode, QdrantSettings, Settings
from app.search.scoping import Filters
from app.search.service import SearchService
from app.sync.localfs import chunk_local_files, iter_sources
from entry.deps import open_deps
from pipeline.model import SourceContext
from pipeline.scope import Scope


def share(root: Path) -> None:
    config = Settings().chunking.to_config()
    files = list(iter_sources(root, Scope.from_config(config)))
    chunks: collections.Counter[str] = collections.Counter()
    marked: collections.Counter[str] = collections.Counter()
    marked_files: dict[str, set[str]] = collections.defaultdict(set)
    for result in chunk_local_files(files, SourceContext(repo_path=root.name), config, 1):
        for chunk in result.chunks:
            folder = chunk.file_path.split("/", 1)[0]
            chunks[folder] += 1
            if chunk.generated:
                marked[folder] += 1
                marked_files[folder].add(chunk.file_path)
    print(f"{'folder':<24} {'chunks':>7} {'generated':>9} {'files':>6}")
    for folder in sorted(chunks):
        print(f"{folder:<24} {chunks[folder]:>7} {marked[folder]:>9} {len(marked_files[folder]):>6}")
    total, generated = sum(chunks.values()), sum(marked.values())
    print(f"{'all':<24} {total:>7} {generated:>9} {sum(map(len, marked_files.values())):>6}")
    print(f"generated share: {100 * generated / max(total, 1):.1f}% of chunks")


async def search(store: Path, repo: str, questions: Sequence[str]) -> None:
    async with open_deps(Settings(qdrant=QdrantSettings(path=str(store)))) as deps:
        await deps.store.ensure(await deps.index_model())
        counts = await deps.search.repositories(LOCAL)
        print(f"list_repos: chunks={counts.get(repo, 0)} generated_chunks="
              f"{(await deps.search.generated_counts(LOCAL)).get(repo, 0)}")  # fmt: skip
        for mode in GeneratedCode:
            service = SearchService(deps.store, deps.embedder, generated_code=mode)
            top5 = top10 = 0
            started = time.perf_counter()
            for question in questions:
                hits = await service.search(LOCAL, question, Filters(repo=repo), 10)
                top5 += sum(h.chunk.generated for h in hits[:5])
                top10 += sum(h.chunk.generated for h in hits)
            ms = 1000 * (time.perf_counter() - started) / max(len(questions), 1)
            print(f"{mode.value:<8} generated in top 5: {top5}/{5 * len(questions)}, "
                  f"top 10: {top10}/{10 * len(questions)}, {ms:.0f} ms/question")  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    share_cmd = sub.add_parser("share")
    share_cmd.add_argument("root", type=Path)
    search_cmd = sub.add_parser("search")
    search_cmd.add_argument("store", type=Path)
    search_cmd.add_argument("repo")
    search_cmd.add_argument("questions", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "share":
        share(args.root)
    else:
        asyncio.run(search(args.store, args.repo, args.questions))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
