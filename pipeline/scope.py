"""Which paths are indexed: include and exclude globs with `**`, matched on repository-relative paths."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from pipeline.model import ChunkerConfig


@lru_cache(maxsize=256)
def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob where `**` spans directories, `*` and `?` stay within one path segment."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


@dataclass(frozen=True, slots=True)
class Scope:
    """A compiled include/exclude rule set."""

    include: tuple[re.Pattern[str], ...]
    exclude: tuple[re.Pattern[str], ...]

    @classmethod
    def from_config(cls, config: ChunkerConfig) -> Scope:
        """Compile the scope globs of a pipeline config."""
        return cls(
            include=tuple(glob_to_regex(p) for p in config.include),
            exclude=tuple(glob_to_regex(p) for p in config.exclude),
        )

    def matches(self, path: str) -> bool:
        """True when a repository-relative POSIX path is in scope."""
        path = path.lstrip("/")
        if not any(p.match(path) for p in self.include):
            return False
        return not any(p.match(path) for p in self.exclude)
