"""Print the retrieval quality report in both modes: `.venv/bin/python -m tests.quality.run_report`.

The same questions, index and metrics as `tests/quality/test_quality.py`, without pytest, for
docs/performance.md. Pass `--no-misses` to print the tables only.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence

from tests.quality.corpus import MODES, Mode, indexed_search
from tests.quality.harness import Report, evaluate, format_report
from tests.quality.questions import QUESTIONS


async def report_for(mode: Mode, embedding_url: str | None = None, model: str | None = None) -> Report:
    """Index the fixture in `mode` and evaluate every question."""
    async with indexed_search(mode, embedding_url=embedding_url, model=model) as search:
        return await evaluate(search, QUESTIONS)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.quality.run_report", description=__doc__)
    parser.add_argument("--no-misses", action="store_true", help="print the metric tables only")
    parser.add_argument("--embedding-url", help="also report hybrid search with a real OpenAI-compatible endpoint")
    parser.add_argument("--model", help="the endpoint's model name")
    args = parser.parse_args(argv)
    if args.embedding_url:
        report = asyncio.run(report_for("hybrid", args.embedding_url, args.model))
        title = f"== hybrid with {args.model or 'the real model'} ({len(QUESTIONS)} questions)"
        print(format_report(report, title=title, misses=not args.no_misses))
        print()
    for index, mode in enumerate(MODES):
        report = asyncio.run(report_for(mode))
        if index:
            print()
        print(format_report(report, title=f"== {mode} ({len(QUESTIONS)} questions)", misses=not args.no_misses))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
