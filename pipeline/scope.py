"""Which paths are indexed: include and exclude globs with `**`, matched on repository-relative paths."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from pipeline.model import CONFIG_EXTENSIONS, ChunkerConfig


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


def is_test(path: str, config: ChunkerConfig) -> bool:
    """Whether a repository-relative path is test code (`ChunkerConfig.tests`)."""
    path = path.lstrip("/")
    return any(glob_to_regex(p).match(path) for p in config.tests)


@dataclass(frozen=True, slots=True)
class Scope:
    """A compiled include/exclude rule set, and test code's own rule.

    A path `exclude` matches is out. Test code (a path `tests` matches) is in when `index_tests` is on and
    it is a `.java` file, whatever `include` says; any other path is in when `include` matches it, or when
    it is a configuration file (`CONFIG_EXTENSIONS`) in a Spring Cloud Config repository (`config_repos`).
    """

    include: tuple[re.Pattern[str], ...]
    exclude: tuple[re.Pattern[str], ...]
    tests: tuple[re.Pattern[str], ...] = ()
    index_tests: bool = False
    config_repos: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def from_config(cls, config: ChunkerConfig) -> Scope:
        """Compile the scope globs of a pipeline config."""
        return cls(
            include=tuple(glob_to_regex(p) for p in config.include),
            exclude=tuple(glob_to_regex(p) for p in config.exclude),
            tests=tuple(glob_to_regex(p) for p in config.tests),
            index_tests=config.index_tests,
            config_repos=tuple(glob_to_regex(p) for p in config.config_repos),
        )

    def matches(self, path: str) -> bool:
        """True when a repository-relative POSIX path is in scope."""
        path = path.lstrip("/")
        if any(p.match(path) for p in self.exclude):
            return False
        if any(p.match(path) for p in self.tests):
            return self.index_tests and path.endswith(".java")
        if any(p.match(path) for p in self.include):
            return True
        return path.endswith(CONFIG_EXTENSIONS) and any(p.match(path) for p in self.config_repos)
