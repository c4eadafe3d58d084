"""semble's Java and Kotlin benchmark repositories, pinned as its `benchmarks/repos.json` pins them, and its
published BM25.

Nothing downloaded is committed: only the pins, the folder each repository is indexed from
(`benchmark_root`) and semble's published raw-BM25 NDCG@10 per repository, which the plain-window
BM25 of `bm25.py`, scored by our own `metrics.py`, must reproduce within `BM25_TOLERANCE` (the check
that the harness itself scores as semble does).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final, Literal

from tests.quality.real.repos import Pin

SEMBLE_COMMIT: Final = "0332378809c592669c4b5532aeb7622fc0648a1d"
"""The semble commit whose `benchmarks/repos.json` and `benchmarks/annotations/` are used."""

ANNOTATIONS_URL: Final = f"https://raw.githubusercontent.com/MinishLab/semble/{SEMBLE_COMMIT}/benchmarks/annotations"

DEFAULT_CACHE: Final = Path(__file__).resolve().parents[3] / ".cache" / "semble"
"""Checkouts and downloaded annotations (git-ignored, like the real suite's `.cache/quality`)."""

BM25_TOLERANCE: Final = 0.04

Language = Literal["java", "kotlin"]
LANGUAGES: Final[tuple[Language, ...]] = ("java", "kotlin")
SUFFIXES: Final[dict[Language, str]] = {"java": ".java", "kotlin": ".kt"}


@dataclass(frozen=True, slots=True)
class RepoSpec:
    """One benchmark repository: its name in semble's files, its pin, the folder indexed, semble's raw BM25."""

    name: str
    pin: Pin
    benchmark_root: str
    published_bm25: float
    language: Language = "java"
    not_comparable: str = ""
    """Why semble's published BM25 is not a check of this run (its annotations differ from the ones pinned)."""
    fallback: bool = False
    """At a commit other than semble's pin (its numbers are not comparable with semble's)."""

    def at(self, commit: str | None) -> RepoSpec:
        """This repository at another commit (`--fallback NAME=COMMIT`, when the pin is not reachable)."""
        if commit is None or commit == self.pin.commit:
            return self
        return replace(self, pin=replace(self.pin, commit=commit), fallback=True)

    @property
    def pinned(self) -> bool:
        return not self.fallback


# semble's raw BM25 (mode "bm25" of benchmarks/baselines/ablations.py) in
# benchmarks/results/semble-ablations-1ea77add4c1b.json, the ablation its README at SEMBLE_COMMIT reports.
SPECS: Final[tuple[RepoSpec, ...]] = (
    RepoSpec("gson", Pin("google", "gson", "f4d371d29c04066dbe7fdb31f642831f9c7f40cd"), "gson", 0.4924),
    RepoSpec(
        "commons-lang",
        Pin("apache", "commons-lang", "0ba92dc402312a38252a3398931ffbfbb4a88f7d"),
        "src/main/java/org/apache/commons/lang3",
        0.6532,
    ),
    RepoSpec(
        "jackson-databind",
        Pin("FasterXML", "jackson-databind", "e30139539416f69f1d7ae31c7e1d6da5b25bf362"),
        "src/main/java/tools/jackson/databind",
        0.4613,
    ),
    RepoSpec(
        "ktor",
        Pin("ktorio", "ktor", "5913745a96101e8c78e47565e52d2baa8414441f"),
        "ktor-client/ktor-client-core/common/src",
        0.4550,
        "kotlin",
        "semble's published ktor run used another ktor.json: its symbol mean 0.917 is no mean of the 5"
        " one-file symbol queries of this one",
    ),
    RepoSpec(
        "kotlinx-coroutines",
        Pin("Kotlin", "kotlinx.coroutines", "643c1aa554139a82f60724a59e79b801f303fdfe"),
        "kotlinx-coroutines-core/common/src",
        0.7070,
        "kotlin",
    ),
    RepoSpec(
        "exposed",
        Pin("JetBrains", "Exposed", "7c80ed943b529f293b33ee7e0facdfd880cf4aec"),
        "exposed-core/src/main/kotlin",
        0.5272,
        "kotlin",
    ),
)


def of_language(language: Language | Literal["all"]) -> tuple[RepoSpec, ...]:
    """The benchmark repositories written in `language` (all of them for "all")."""
    return tuple(s for s in SPECS if language in ("all", s.language))
