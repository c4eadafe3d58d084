"""`--ranking-off`: the benchmarks' switch for measuring each score-level signal of the rerank on and off."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

from app.search import boosts

RANKING_OFF_HELP = f"comma-separated signals of app.search.boosts to switch off ({', '.join(boosts.SIGNALS)}, or all)"


def ranking_off(value: str) -> frozenset[str]:
    """The signals named by `value` (`all` for every one); an unknown name is an argument error."""
    names = set(boosts.SIGNALS) if value == "all" else {n for n in value.split(",") if n}
    if unknown := names - set(boosts.SIGNALS):
        raise argparse.ArgumentTypeError(f"not a signal: {', '.join(sorted(unknown))}")
    return frozenset(names)


@contextmanager
def switched_off(names: frozenset[str]) -> Iterator[None]:
    """The signals `names` off for the block (the process's searches), as they were after it."""
    before = set(boosts.DISABLED)
    boosts.DISABLED.update(names)
    try:
        yield
    finally:
        boosts.DISABLED.clear()
        boosts.DISABLED.update(before)
