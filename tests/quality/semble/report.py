"""Tables of a benchmark run: NDCG@10 per repository and per category by both protocols, timing, the
BM25 check against semble's published numbers, and the same as plain data for `--json`."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

from tests.quality.semble.annotated import CATEGORIES
from tests.quality.semble.run import Outcome, RepoRun
from tests.quality.semble.spec import BM25_TOLERANCE, RepoSpec

Pick = Callable[[Outcome], float]
PROTOCOLS: tuple[tuple[str, Pick], ...] = (("chunk", lambda o: o.chunk), ("file", lambda o: o.file))


def mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def by_category(outcomes: Sequence[Outcome], pick: Pick) -> dict[str, float]:
    return {c: mean([pick(o) for o in outcomes if o.query.category == c]) for c in CATEGORIES}


def system_table(runs: Sequence[RepoRun]) -> list[str]:
    """One system: a row per repository, the mean of the repositories, and all queries by category."""
    head = f"{'repository':<18}{'queries':>8}{'chunk':>7}{'file':>7}  " + "".join(
        f"{c[:5] + ' c/f':>14}" for c in CATEGORIES
    )
    lines = [f"== {runs[0].system}", head + f"{'units':>7}{'index s':>9}{'p50 ms':>8}"]
    for run in runs:
        cells = _cells(run.outcomes)
        chunk, file = (mean([pick(o) for o in run.outcomes]) for _, pick in PROTOCOLS)
        lines.append(f"{run.repo:<18}{len(run.outcomes):>8}{chunk:>7.3f}{file:>7.3f}  {cells}"
                     f"{run.units:>7}{run.index_s:>9.1f}{run.p50_ms:>8.1f}")  # fmt: skip
    everything = [o for run in runs for o in run.outcomes]
    chunk, file = (mean([mean([pick(o) for o in run.outcomes]) for run in runs]) for _, pick in PROTOCOLS)
    cells = _cells(everything)
    lines.append(
        f"{'mean of repos':<18}{len(everything):>8}{chunk:>7.3f}{file:>7.3f}  {cells}  (categories: all queries)"
    )
    return lines


def _cells(outcomes: Sequence[Outcome]) -> str:
    """Each category's chunk/file NDCG@10, `-` for a category without queries."""
    (_, chunk), (_, file) = PROTOCOLS
    by_chunk, by_file = by_category(outcomes, chunk), by_category(outcomes, file)
    return "".join(
        f"{'-':>14}" if by_chunk[c] != by_chunk[c] else f"{by_chunk[c]:>8.3f}/{by_file[c]:.3f}" for c in CATEGORIES
    )


def bm25_check(runs: Sequence[RepoRun], specs: Sequence[RepoSpec]) -> tuple[list[str], bool]:
    """Our plain-window BM25 against semble's published raw BM25, chunk protocol, per repository."""
    published = {s.name: s for s in specs}
    lines, ok = [f"BM25 check (chunk protocol, within {BM25_TOLERANCE} of semble's published raw BM25):"], True
    for run in runs:
        spec = published[run.repo]
        got = mean([o.chunk for o in run.outcomes])
        delta = got - spec.published_bm25
        within = abs(delta) <= BM25_TOLERANCE
        pinned = run.commit == spec.pin.commit
        note = "" if pinned else f" (at fallback commit {run.commit[:12]}, not semble's pin: not comparable)"
        note += f" (not comparable: {spec.not_comparable})" if spec.not_comparable else ""
        ok = ok and (within or not pinned or bool(spec.not_comparable))
        lines.append(f"  {run.repo:<18} ours {got:.3f}  semble {spec.published_bm25:.3f}  "
                     f"delta {delta:+.3f}  {'ok' if within else 'OUTSIDE'}{note}")  # fmt: skip
    return lines, ok


def misses(run: RepoRun) -> list[str]:
    """Queries scoring 0 by the chunk protocol, with the first files returned."""
    return [
        f"  0 [{o.query.category}] {run.repo}: {o.query.text!r} -> {', '.join(_name(p) for p in o.top_files)}"
        for o in run.outcomes
        if o.chunk == 0
    ]


def as_json(runs: Sequence[RepoRun]) -> list[dict[str, object]]:
    return [
        {
            "system": run.system, "repo": run.repo, "commit": run.commit, "units": run.units,
            "index_s": round(run.index_s, 3), "p50_ms": round(run.p50_ms, 3),
            "ndcg10": {name: mean([pick(o) for o in run.outcomes]) for name, pick in PROTOCOLS},
            "by_category": {name: by_category(run.outcomes, pick) for name, pick in PROTOCOLS},
            "queries": [
                {"query": o.query.text, "category": o.query.category, "chunk": o.chunk, "file": o.file,
                 "top_files": list(o.top_files)}
                for o in run.outcomes
            ],
        }
        for run in runs
    ]  # fmt: skip


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]
