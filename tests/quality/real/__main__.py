"""Retrieval quality on real public Spring repositories: one command fetches, indexes, asks, reports.

    .venv/bin/python -m tests.quality.real --mirrors /work/.mirror [--set heldout] [--embedded]
        [--embedding-url URL --model M]

Each pinned repository of the chosen set (`suites.py`: `real`, the default, or `heldout`) is
materialised into the cache (default `.cache/quality`, git-ignored), all are indexed into one
in-memory collection (lexical-only; also hybrid when an endpoint is given), and every question of
the set is asked. A held-out set (`heldout`) prints the tables only unless `--misses` is given, and
exits 1 when an expected answer is not declared in the source or not among the indexed chunks.
Slow and needs the repositories, so not part of `scripts/check`; `tests/quality/real/test_units.py`
checks the scoring, gold rules and fetcher, `test_suites.py` the sets and the refusal.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Sequence
from pathlib import Path

from app.auth.access import LOCAL
from app.core.settings import Settings
from tests.quality.corpus import mode_settings
from tests.quality.ranking_off import RANKING_OFF_HELP, ranking_off, switched_off
from tests.quality.real.corpus import indexed_repos
from tests.quality.real.evaluate import applicable, evaluate, expected_of, problem
from tests.quality.real.gold import Corpus
from tests.quality.real.questions import SetQuestion, Single
from tests.quality.real.repos import DEFAULT_CACHE, Pin, materialise, source_arguments
from tests.quality.real.scoring import SetOutcome, SingleOutcome, set_table, single_table
from tests.quality.real.suites import (
    DEFAULT_SUITE,
    SUITES,
    UnscorableError,
    indexed_names,
    not_indexed,
    refuse,
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.quality.real", description=__doc__.split("\n\n")[0])
    source_arguments(parser, DEFAULT_CACHE)
    parser.add_argument("--embedding-url", help="also report hybrid search with this OpenAI-compatible endpoint")
    parser.add_argument("--model", help="the endpoint's model name")
    parser.add_argument(
        "--embedded", action="store_true", help="also report hybrid search with the embedded default model"
    )
    parser.add_argument("--set", choices=sorted(SUITES), default=DEFAULT_SUITE, help="the question set and its pins")
    parser.add_argument(
        "--repos",
        help="comma-separated owner/name subset of the set's pins (default: all); only questions they answer are asked",
    )
    parser.add_argument("--ranking-off", type=ranking_off, default=frozenset(), help=RANKING_OFF_HELP)
    parser.add_argument("--no-lexical", action="store_true", help="skip the lexical-only run")
    parser.add_argument("--no-misses", action="store_true", help="print the tables only")
    parser.add_argument(
        "--misses", action="store_true", help="a held-out set's misses too (its keepers only: docs/decisions.md)"
    )
    parser.add_argument("--json", type=Path, help="also write every question's outcome here (one file per run mode)")
    args = parser.parse_args(argv)
    if args.ranking_off:
        print(f"ranking signals off: {', '.join(sorted(args.ranking_off))}")
    with switched_off(args.ranking_off):
        return _main(parser, args)


def _main(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    suite = SUITES[args.set]
    pins = suite.pins
    chosen = set(args.repos.split(",")) if args.repos else {pin.repo_path for pin in pins}
    unknown = chosen - {pin.repo_path for pin in pins}
    if unknown:
        parser.error(f"not in the {suite.name} set: {', '.join(sorted(unknown))}")
    checkouts = [(pin, materialise(pin, args.cache, args.mirrors)) for pin in pins if pin.repo_path in chosen]
    corpus = Corpus.load((pin.repo_path, root) for pin, root in checkouts)
    everything: list[Single | SetQuestion] = [*suite.singles, *suite.sets]
    # A held-out set over all its pins asks everything: a question none of them answers is a broken question.
    asked = everything if suite.held_out and not args.repos else [q for q in everything if applicable(q, corpus)]
    unscored = [(q, reason) for q in asked if (reason := problem(q, corpus))]
    for question, reason in unscored:
        print(f"not scored: {question.text!r}: {reason}")
    if suite.held_out and unscored:
        print(f"refusing to score the {suite.name} set: fix the question set, not the results")
        return 1
    skip = {id(q) for q, _ in unscored}
    singles_asked = [q for q in asked if isinstance(q, Single) and id(q) not in skip]
    sets_asked = [q for q in asked if isinstance(q, SetQuestion) and id(q) not in skip]
    runs: list[tuple[str, Settings]] = [] if args.no_lexical else [("lexical", mode_settings("lexical"))]
    if args.embedded:
        runs.append(("hybrid with the embedded model", mode_settings("embedded")))
    if args.embedding_url:
        endpoint = mode_settings("endpoint", args.embedding_url, args.model)
        runs.append((f"hybrid with {args.model or 'the endpoint model'}", endpoint))
    for title, settings in runs:
        started = time.perf_counter()
        try:
            singles, sets = asyncio.run(
                _run(checkouts, corpus, singles_asked, sets_asked, settings, title, held_out=suite.held_out)
            )
        except UnscorableError as error:
            print(error)
            return 1
        print(f"({time.perf_counter() - started:.0f} s in all)")
        if not args.no_misses and (args.misses or not suite.held_out):
            print("\n".join(misses(singles, sets)))
        if args.json:
            path = args.json.with_name(f"{args.json.stem}-{title.split()[0]}{args.json.suffix or '.json'}")
            path.write_text(json.dumps(outcomes_json(singles, sets), ensure_ascii=False, indent=1))
            print(f"wrote {path}")
        print()
    return 0


async def _run(
    checkouts: Sequence[tuple[Pin, Path]],
    corpus: Corpus,
    singles_asked: Sequence[Single],
    sets_asked: Sequence[SetQuestion],
    settings: Settings,
    title: str,
    *,
    held_out: bool = False,
) -> tuple[list[SingleOutcome], list[SetOutcome]]:
    async with indexed_repos(checkouts, settings=settings) as indexed:
        if held_out:
            names = await indexed_names(indexed.deps.store)
            refuse(not_indexed(singles_asked, {id(q): expected_of(q, corpus) for q in singles_asked}, names))
        counts = await indexed.search.repositories(LOCAL)
        singles, sets = await evaluate(indexed, corpus, singles_asked, sets_asked)
    print(f"== {title}: {len(singles)} single-answer and {len(sets)} set questions over {len(checkouts)} repositories")
    sizes = (f"{repo} {counts.get(repo, 0)} chunks in {s:.1f} s" for repo, s in indexed.seconds.items())
    print("indexed: " + ", ".join(sizes))
    print("\n".join(single_table(singles)))
    if sets:
        print()
        print("\n".join(set_table(sets)))
    return singles, sets


def misses(singles: Sequence[SingleOutcome], sets: Sequence[SetOutcome]) -> list[str]:
    """Single questions not answered at rank 1 and set questions below full recall or precision."""
    lines = ["", "not at rank 1 (rank in search; rank in the exact tool; top 3):"]
    for o in singles:
        if o.rank != 1:
            tool = f" tool={o.tool_rank or '-'}" if o.question.kind != "natural" else ""
            top = ", ".join(_short(n) for n in o.returned[:3]) or "(nothing)"
            lines.append(f"  {o.rank or '-':>2}{tool} [{o.question.kind}] {o.question.text!r} -> {top}")
    if sets:
        lines.append("")
        lines.append("sets below 1.0 (recall, precision; missed / extra, at most 4 each):")
    for s in sets:
        if s.recall < 1 or s.precision < 1:
            missed = ", ".join(_short(n) for n in sorted(s.gold - s.got)[:4])
            extra = ", ".join(_short(n) for n in sorted(s.got - s.gold)[:4])
            lines.append(f"  {s.recall:.2f} {s.precision:.2f} {s.question.text} (gold {len(s.gold)}, got {len(s.got)})"
                         f" missed: {missed or '-'} extra: {extra or '-'}")  # fmt: skip
    return lines


def outcomes_json(singles: Sequence[SingleOutcome], sets: Sequence[SetOutcome]) -> dict[str, object]:
    """Every outcome as plain data, to diff two branches question by question."""
    return {
        "single": [
            {"kind": o.question.kind, "text": o.question.text, "rank": o.rank, "tool_rank": o.tool_rank,
             "read_rank": o.read_rank, "expected": sorted(o.expected), "top5": list(o.returned[:5])}
            for o in singles
        ],
        "sets": [
            {"kind": s.question.kind, "text": s.question.text, "recall": s.recall, "precision": s.precision,
             "shown": s.view.shown, "missed": sorted(s.gold - s.got), "extra": sorted(s.got - s.gold)}
            for s in sets
        ],
    }  # fmt: skip


def _short(name: str) -> str:
    parts = name.split(".")
    return next((".".join(parts[i:]) for i, p in enumerate(parts) if p[:1].isupper()), name)


if __name__ == "__main__":
    raise SystemExit(main())
