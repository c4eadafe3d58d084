"""The reference baseline: BM25 over plain line windows, the way semble's raw BM25 tokenizes.

It is not our search: it exists so that our scoring code is checked against semble's published raw
BM25 per repository (`spec.RepoSpec.published_bm25`). Its definition follows semble's:

- files: every file under the benchmark root with one of semble's source extensions, outside
  build and tool folders;
- windows: 30 lines with 5 lines of overlap. semble's chunks are syntax-aware pieces of at most
  1,500 characters (its fallback is 50-line windows); plain windows only approximate them, and the
  window length moves the score by up to 0.05 on 20 queries (the sweep is in docs/performance.md):
  30 lines is the length that reproduces both pinned repositories, so the check is a coarse one;
- tokens: identifier-like words, lower-cased, each compound also split at camelCase, digits and
  underscores, plus a light suffix-stripped variant of words over four letters; the file's stem
  (twice) and its last three folders are added to every window of the file;
- scoring: Okapi BM25, k1 = 1.5, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5)).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from tests.quality.semble.metrics import Located

WINDOW: Final = 30
OVERLAP: Final = 5
K1: Final = 1.5
B: Final = 0.75
EXTENSIONS: Final = frozenset(
    {".py", ".js", ".jsx", ".ts", ".tsx", ".go", ".rs", ".java", ".kt", ".kts", ".rb", ".php", ".c", ".h", ".cpp",
     ".hpp", ".cs", ".md", ".sql", ".sh", ".yaml", ".yml", ".toml", ".json"}
)  # fmt: skip
SKIPPED_DIRS: Final = frozenset({".git", "node_modules", "build", "dist", "target", ".cache", ".venv"})
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_SUFFIXES: Final = (("tion", ""), ("ity", ""), ("ing", ""), ("ness", ""), ("ment", ""), ("ies", "y"),
                    ("ers", ""), ("ed", ""), ("er", ""), ("es", ""), ("s", ""))  # fmt: skip


def _stem(word: str) -> str | None:
    if len(word) <= 4:
        return None
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix):
            stem = word[: -len(suffix)] + replacement
            return stem if len(stem) >= 3 and stem != word else None
    return None


def word_tokens(word: str) -> list[str]:
    """A word, its parts when it is a compound, and the stems that differ from them."""
    lower = word.lower()
    parts = [p for p in lower.split("_") if p] if "_" in word else [p.lower() for p in _PART.findall(word)]
    base = [lower, *parts] if len(parts) > 1 else [lower]
    stems = [s for p in base if (s := _stem(p)) is not None]
    return base + [s for s in dict.fromkeys(stems) if s not in base]


def tokenize(text: str) -> list[str]:
    return [token for word in _WORD.findall(text) for token in word_tokens(word)]


def path_tokens(path: str) -> list[str]:
    file = Path(path)
    folders = [part for part in file.parent.parts if part not in (".", "/")][-3:]
    return tokenize(" ".join([file.stem, file.stem, *folders]))


@dataclass(frozen=True, slots=True)
class Window:
    where: Located
    text: str


def windows(text: str, path: str) -> Iterator[Window]:
    """Plain windows of `WINDOW` lines, each starting `WINDOW - OVERLAP` lines after the last."""
    lines = text.splitlines(keepends=True)
    start = 0
    while start < len(lines):
        end = min(start + WINDOW, len(lines))
        body = "".join(lines[start:end])
        if body.strip():
            yield Window(Located(path, start + 1, end), body)
        start = end - OVERLAP if end < len(lines) else end


def source_files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).parts
        if path.is_file() and path.suffix in EXTENSIONS and not SKIPPED_DIRS & set(relative[:-1]):
            yield path


@dataclass(slots=True)
class Bm25:
    """An in-memory inverted index over windows; `search` answers the best windows for a question."""

    located: list[Located] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    postings: dict[str, dict[int, int]] = field(default_factory=dict)

    def add(self, where: Located, tokens: Sequence[str]) -> None:
        doc = len(self.located)
        self.located.append(where)
        self.lengths.append(len(tokens))
        for token, count in Counter(tokens).items():
            self.postings.setdefault(token, {})[doc] = count

    def search(self, query: str, k: int) -> list[Located]:
        n = len(self.located)
        if n == 0:
            return []
        average = sum(self.lengths) / n
        scores: dict[int, float] = {}
        for token in tokenize(query):
            docs = self.postings.get(token, {})
            idf = math.log(1 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
            for doc, tf in docs.items():
                norm = K1 * (1 - B + B * self.lengths[doc] / average)
                scores[doc] = scores.get(doc, 0.0) + idf * tf * (K1 + 1) / (tf + norm)
        best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
        return [self.located[doc] for doc, score in best if score > 0]


def index_root(root: Path, prefix: str) -> Bm25:
    """Index every source file under `root`; paths are `prefix/<path under root>` (checkout-relative)."""
    index = Bm25()
    for file in source_files(root):
        path = f"{prefix}/{file.relative_to(root).as_posix()}" if prefix else file.relative_to(root).as_posix()
        text = file.read_text(encoding="utf-8", errors="replace")
        extra = path_tokens(path)
        for window in windows(text, path):
            index.add(window.where, [*tokenize(window.text), *extra])
    return index
