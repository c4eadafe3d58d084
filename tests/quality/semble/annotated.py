"""semble's annotation files: every query with its relevant and secondary targets and its category.

A target is a file path (relative to the repository's checkout root) with an optional line span.
Relevant and secondary targets count alike (semble scores `relevant + secondary`); a query without a
category gets the one semble infers: one word is a symbol query, a question starting "how " an
architecture one, anything else semantic. Other keys (`seed`, `related`) are not scored by semble and
are ignored here.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

CATEGORIES: Final = ("semantic", "architecture", "symbol")


class AnnotationError(ValueError):
    """An annotation file is missing or does not have the shape semble's loader reads."""


@dataclass(frozen=True, slots=True)
class Target:
    path: str
    start_line: int | None = None
    end_line: int | None = None

    @property
    def span(self) -> tuple[int, int] | None:
        """The annotated lines, or None when the whole file is the target."""
        if self.start_line is None or self.end_line is None:
            return None
        return self.start_line, self.end_line


@dataclass(frozen=True, slots=True)
class Query:
    repo: str
    text: str
    targets: tuple[Target, ...]
    category: str


def infer_category(text: str) -> str:
    words = text.strip()
    if " " not in words:
        return "symbol"
    return "architecture" if words.lower().startswith("how ") else "semantic"


def parse_target(raw: object) -> Target:
    if isinstance(raw, str):
        return Target(raw)
    if not isinstance(raw, Mapping) or not isinstance(raw.get("path"), str):
        raise AnnotationError(f"a target is a path or an object with a path, not {raw!r}")
    start, end = raw.get("start_line"), raw.get("end_line")
    return Target(raw["path"], None if start is None else int(start), None if end is None else int(end))


def parse(repo: str, raw: object) -> list[Query]:
    """The queries of one annotation file's JSON (a list of objects)."""
    if not isinstance(raw, list):
        raise AnnotationError(f"{repo}: an annotation file holds a list, not {type(raw).__name__}")
    queries = []
    for item in raw:
        if not isinstance(item, Mapping) or not isinstance(item.get("query"), str):
            raise AnnotationError(f"{repo}: every annotation has a query: {item!r}")
        targets = [*_targets(item, "relevant"), *_targets(item, "secondary")]
        category = item.get("category")
        text = item["query"]
        queries.append(
            Query(repo, text, tuple(targets), category if isinstance(category, str) else infer_category(text))
        )
    return queries


def _targets(item: Mapping[str, object], key: str) -> list[Target]:
    value = item.get(key, [])
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise AnnotationError(f"{key} is a list: {item!r}")
    return [parse_target(t) for t in value]


def load(folder: Path, repo: str) -> list[Query]:
    path = folder / f"{repo}.json"
    if not path.is_file():
        raise AnnotationError(f"no annotations for {repo}: {path} is missing")
    return parse(repo, json.loads(path.read_text(encoding="utf-8")))


def download(folder: Path, repos: Sequence[str], base_url: str) -> Path:
    """Fetch the annotation files not yet in `folder` from `base_url` (semble at its pinned commit)."""
    folder.mkdir(parents=True, exist_ok=True)
    for repo in repos:
        path = folder / f"{repo}.json"
        if not path.is_file():
            with urllib.request.urlopen(f"{base_url}/{repo}.json", timeout=60) as response:
                body = response.read()
            parse(repo, json.loads(body))  # refuse to cache what does not parse
            path.write_bytes(body)
    return folder


def relocate(queries: Sequence[Query], moves: Mapping[str, str]) -> list[Query]:
    """The queries with every target whose path `moves` names pointed at its new path (span dropped: the
    lines of a moved file are not the annotated ones)."""

    def moved(target: Target) -> Target:
        return Target(moves[target.path]) if target.path in moves else target

    return [replace(q, targets=tuple(moved(t) for t in q.targets)) for q in queries]
