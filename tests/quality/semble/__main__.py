"""semble's public code-search benchmark, Java and Kotlin parts: fetch, index, ask, score, report.

    scripts/bench_semble --mirrors /work/.mirror --annotations DIR [--mode lexical|embedded|endpoint]
        [--language java|kotlin|all]

Each repository of `spec.SPECS` in the language asked (Java unless told) is materialised at semble's pinned
commit into the cache (default `.cache/semble`, git-ignored) from a local mirror root or by a shallow fetch;
the annotation files are downloaded from semble at its pinned commit into the cache unless `--annotations`
names a folder.
Every annotated query is asked through our search and through the reference BM25 over plain
windows; NDCG@10 is printed per repository and per category by the chunk and the file protocols,
with index time and query p50, and the BM25 is checked against semble's published numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from tests.quality.ranking_off import RANKING_OFF_HELP, ranking_off, switched_off
from tests.quality.real.repos import FetchError, materialise, source_arguments
from tests.quality.semble import annotated, report
from tests.quality.semble.annotated import Query
from tests.quality.semble.run import MODES, Mode, RepoRun, run_bm25, run_ours, settings_for
from tests.quality.semble.spec import ANNOTATIONS_URL, DEFAULT_CACHE, LANGUAGES, SPECS, Language, RepoSpec, of_language


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scripts/bench_semble", description=__doc__.split("\n\n")[0])
    source_arguments(parser, DEFAULT_CACHE)
    parser.add_argument("--annotations", type=Path, help="folder of semble's <repo>.json (default: downloaded)")
    parser.add_argument(
        "--mode",
        choices=MODES,
        help="embedding configuration of our search (default: lexical; endpoint when --embedding-url is given)",
    )
    parser.add_argument("--embedding-url", help="OpenAI-compatible endpoint for the endpoint mode")
    parser.add_argument("--model", help="the endpoint's model name")
    parser.add_argument(
        "--language",
        choices=(*LANGUAGES, "all"),
        help="the repositories of one language (default: java; all when --repos names them)",
    )
    parser.add_argument("--repos", help=f"comma-separated subset of {', '.join(s.name for s in SPECS)}")
    parser.add_argument(
        "--fallback",
        action="append",
        default=[],
        metavar="NAME=COMMIT",
        help="use COMMIT for NAME when its pinned commit cannot be materialised (said in the output)",
    )
    parser.add_argument(
        "--relocate",
        action="store_true",
        help="at a fallback commit, point an annotated file that is missing at the one file of its name",
    )
    parser.add_argument("--ranking-off", type=ranking_off, default=frozenset(), help=RANKING_OFF_HELP)
    parser.add_argument("--no-bm25", action="store_true", help="skip the reference BM25 over plain windows")
    parser.add_argument("--misses", action="store_true", help="also list the queries scoring 0 (chunk protocol)")
    parser.add_argument("--json", type=Path, help="also write every query's scores here")
    return parser.parse_args(argv)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.ranking_off:
        print(f"ranking signals off: {', '.join(sorted(args.ranking_off))}")
    with switched_off(args.ranking_off):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    mode: Mode = args.mode or ("endpoint" if args.embedding_url else "lexical")
    settings = settings_for(mode, args.embedding_url, args.model)
    specs = chosen_specs(args.language, args.repos)
    chosen = [s.name for s in specs]
    fallbacks = dict(item.split("=", 1) for item in args.fallback)
    folder = args.annotations or annotated.download(args.cache / "annotations", chosen, ANNOTATIONS_URL)
    system = f"ours ({mode}{', ' + args.model if mode == 'endpoint' and args.model else ''})"
    print(f"our search: {system}; embedding base_url={settings.embedding.base_url} model={settings.embedding.model}")
    ours: list[RepoRun] = []
    baseline: list[RepoRun] = []
    for spec in specs:
        spec, checkout = _checkout(spec, args.cache, args.mirrors, fallbacks.get(spec.name))
        queries = annotated.load(folder, spec.name)
        print(_presence(spec, checkout, queries))
        if args.relocate and not spec.pinned and (moves := relocations(checkout, spec.benchmark_root, queries)):
            print("  relocated (the one file of that name): " + ", ".join(f"{a} -> {b}" for a, b in moves.items()))
            queries = annotated.relocate(queries, moves)
        ours.append(asyncio.run(run_ours(spec, checkout, queries, settings, system)))
        if not args.no_bm25:
            baseline.append(run_bm25(spec, checkout, queries))
    ok = True
    for runs in (ours, baseline):
        if runs:
            print()
            print("\n".join(report.system_table(runs)))
    if baseline:
        lines, ok = report.bm25_check(baseline, specs)
        print()
        print("\n".join(lines))
    if args.misses:
        print("\nzero-score queries (chunk protocol), first files returned:")
        print("\n".join(line for run in ours for line in report.misses(run)))
    if args.json:
        args.json.write_text(json.dumps(report.as_json([*ours, *baseline]), indent=1))
        print(f"wrote {args.json}")
    return 0 if ok else 1


def chosen_specs(language: Language | Literal["all"] | None, repos: str | None) -> list[RepoSpec]:
    """The repositories of `language` (Java when neither is given), narrowed to the names in `repos`."""
    pool = of_language(language or ("all" if repos else "java"))
    if not repos:
        return list(pool)
    names = repos.split(",")
    if unknown := set(names) - {s.name for s in pool}:
        raise SystemExit(f"not in the benchmark ({language or 'any language'}): {', '.join(sorted(unknown))}")
    return [s for s in pool if s.name in names]


def _checkout(spec: RepoSpec, cache: Path, mirrors: Path | None, fallback: str | None) -> tuple[RepoSpec, Path]:
    """The checkout at the pinned commit, else at the fallback commit the caller gave (said loudly)."""
    try:
        return spec, materialise(spec.pin, cache, mirrors, (spec.benchmark_root,))
    except FetchError as error:
        if fallback is None:
            hint = f"(give --fallback {spec.name}=COMMIT to run at another commit)"
            raise SystemExit(f"{spec.name}: {error}\n  {hint}") from error
        print(f"{spec.name}: pinned commit {spec.pin.commit[:12]} unavailable ({error});"
              f" FALLING BACK to {fallback[:12]}: numbers not comparable with semble's")  # fmt: skip
        moved = spec.at(fallback)
        return moved, materialise(moved.pin, cache, mirrors, (moved.benchmark_root,))


def _presence(spec: RepoSpec, checkout: Path, queries: Sequence[Query]) -> str:
    """How many annotated files exist in the checkout of the benchmark root (all of them at semble's pin,
    but for a file outside the root: no one indexing the root can find it)."""
    paths = {t.path for q in queries for t in q.targets}
    outside = sorted(p for p in paths if not p.startswith(spec.benchmark_root.rstrip("/") + "/"))
    missing = sorted(p for p in set(paths) - set(outside) if not (checkout / p).is_file())
    where = "pinned" if spec.pinned else "FALLBACK"
    line = f"{spec.name} at {spec.pin.commit[:12]} ({where}): {len(queries)} queries, "
    line += f"{len(paths) - len(missing) - len(outside)}/{len(paths)} annotated files present"
    line += f"; missing: {', '.join(missing)}" if missing else ""
    return line + (f"; outside the benchmark root: {', '.join(outside)}" if outside else "")


def relocations(checkout: Path, root: str, queries: Sequence[Query]) -> dict[str, str]:
    """Annotated files missing from a fallback checkout that moved: the one file of the same name under the
    benchmark root, if there is exactly one (checkout-relative paths)."""
    missing = sorted({t.path for q in queries for t in q.targets if not (checkout / t.path).is_file()})
    moves = {}
    for path in missing:
        found = list((checkout / root).rglob(Path(path).name))
        if len(found) == 1:
            moves[path] = found[0].relative_to(checkout).as_posix()
    return moves


if __name__ == "__main__":
    raise SystemExit(main())
