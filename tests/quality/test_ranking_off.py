"""The benchmarks' `--ranking-off` switch: names checked, the signals off inside the block only."""

from __future__ import annotations

import argparse

import pytest

from app.search import boosts
from tests.quality.ranking_off import ranking_off, switched_off


def test_all_names_every_signal_and_an_unknown_name_is_refused() -> None:
    assert ranking_off("all") == frozenset(boosts.SIGNALS)
    assert ranking_off("path_words,compounds") == {"path_words", "compounds"}
    with pytest.raises(argparse.ArgumentTypeError, match="not a signal: nope"):
        ranking_off("path_words,nope")


def test_the_signals_are_off_inside_the_block_and_back_after_it() -> None:
    with switched_off(frozenset({"file_coherence"})):
        assert not boosts.enabled("file_coherence")
        assert boosts.enabled("path_words")
    assert boosts.enabled("file_coherence")
