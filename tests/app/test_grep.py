"""Exact and pattern search (issue 28) over the `shop` fixture, on both embedded engines (Edge and local mode).

The fixture is indexed as `acme/shop` (GitLab project 1) and `secret/shop` (project 2), which also holds
one file of its own. Expected lines are read from the fixture's files themselves, as `git grep` would
print them, so a count is checked against the source, not against another run of the same code.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import pytest
import pytest_asyncio
from qdrant_client import AsyncQdrantClient

from app.auth.access import LOCAL, Access
from app.core.errors import StorageError
from app.search.grep import GrepLimits, GrepQuery, GrepResult, grep_block, path_rule
from app.search.patterns import MAX_PATTERN_CHARS, PatternError, PatternSpec, required_literal
from app.search.service import SearchService
from app.store.edge import EdgeStore
from app.store.engines import Store
from app.store.filters import Filter
from app.store.indexing import Indexer
from app.store.vectors import IndexModel, VectorStore
from app.sync.localfs import chunk_local_files, iter_sources
from pipeline.chunking import chunk_source
from pipeline.model import ChunkerConfig, SourceContext
from pipeline.scope import Scope, glob_to_regex
from tests.support.java_fixtures import SHOP_DIR

ACME: Final = "acme/shop"
SECRET: Final = "secret/shop"
SHA: Final = "0123456789abcdef0123456789abcdef01234567"
GITLAB: Final = "https://gitlab.example.com"
READS_ACME: Final = Access(subject="user:7", project_ids=frozenset({1}))
SECRET_PATH: Final = "src/main/java/com/secret/Vault.java"
SECRET_FILE: Final = """\
package com.secret;

public class Vault {
    private static final String KEY = "TOPSECRET-42";

    public String open() {
        return KEY + "TOPSECRET-42";
    }
}
"""
pytestmark = pytest.mark.asyncio(loop_scope="module")


@dataclass(frozen=True)
class Indexed:
    engine: str
    search: SearchService


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["edge", "local"])
async def indexed(request: pytest.FixtureRequest) -> AsyncIterator[Indexed]:
    config = ChunkerConfig()
    files = list(iter_sources(SHOP_DIR, Scope.from_config(config)))
    store: Store = (
        EdgeStore(":memory:", "java_code")
        if request.param == "edge"
        else VectorStore(AsyncQdrantClient(location=":memory:"), "java_code")
    )
    try:
        await store.ensure(IndexModel(embedding_model=None, dimension=None))
        indexer = Indexer(store, None, lambda: datetime(2025, 1, 2, tzinfo=UTC))
        for repo, project in ((ACME, 1), (SECRET, 2)):
            context = SourceContext(repo_path=repo, gitlab_project_id=project, commit_sha=SHA)
            await indexer.write(repo, list(chunk_local_files(files, context, config)))
        vault = chunk_source(
            SECRET_FILE.encode(), SECRET_PATH, SourceContext(repo_path=SECRET, gitlab_project_id=2), config
        )
        await indexer.write(SECRET, [vault])
        yield Indexed(request.param, SearchService(store, None, GITLAB))
    finally:
        await store.close()


@pytest.fixture
def search(indexed: Indexed) -> SearchService:
    return indexed.search


def source_lines(pattern: str, *, glob: str = "**/*.java") -> set[tuple[str, int]]:
    """(path, line) of every line of the fixture's files that contains `pattern`, as `git grep -F` finds them."""
    found = set()
    wanted = glob_to_regex(glob)
    for rel, file in iter_sources(SHOP_DIR, Scope.from_config(ChunkerConfig())):
        if not wanted.match(rel):
            continue
        for number, line in enumerate(file.read_bytes().decode("utf-8", errors="replace").splitlines(), 1):
            if pattern in line:
                found.add((rel, number))
    return found


async def everything(search: SearchService, access: Access, query: GrepQuery) -> GrepResult:
    return await search.grep(access, query, limit=10_000)


def literal(text: str, *, repo: str | None = None, path: str | None = None) -> GrepQuery:
    return GrepQuery(pattern=PatternSpec(text), repo=repo, path=path)


async def test_a_literal_is_found_on_every_source_line_that_has_it_once(search: SearchService) -> None:
    found = await everything(search, LOCAL, literal("Repository.findById(", repo=ACME))

    expected = source_lines("Repository.findById(")
    assert expected and found.complete
    assert {(m.file_path, m.line) for m in found.matches} == expected
    assert found.total == len(expected) and found.files == len({path for path, _ in expected})
    for match in found.matches:  # the line as in the file, cited in its method, with its permalink
        assert (SHOP_DIR / match.file_path).read_text().splitlines()[match.line - 1] == match.text
        assert not match.in_outline and match.symbol_type in ("method", "constructor", "method_part")
        assert match.symbol_lines[0] <= match.line <= match.symbol_lines[1]
        assert match.permalink == f"{GITLAB}/{ACME}/-/blob/{SHA}/{match.file_path}#L{match.line}"


async def test_a_match_names_its_symbol_and_shows_context_within_it(search: SearchService) -> None:
    query = GrepQuery(pattern=PatternSpec("ownerRepository.findById(id)"), repo=ACME, context=1)
    [match] = (await everything(search, LOCAL, query)).matches

    assert match.symbol == "com.acme.shop.core.service.OwnerService.find"
    lines = (SHOP_DIR / match.file_path).read_text().splitlines()
    assert match.before == (lines[match.line - 2],) and match.after == (lines[match.line],)
    assert f"{ACME}:{match.file_path}:{match.line}  in {match.symbol} (method)" in grep_block(match)


async def test_both_repositories_count_for_an_unrestricted_caller(search: SearchService) -> None:
    found = await everything(search, LOCAL, literal("Repository.findById("))

    assert found.total == 2 * len(source_lines("Repository.findById("))
    assert {m.repo_path for m in found.matches} == {ACME, SECRET}


async def test_a_match_in_an_unreadable_project_is_neither_shown_nor_counted(search: SearchService) -> None:
    mine = await everything(search, READS_ACME, literal("Repository.findById("))
    assert mine.total == len(source_lines("Repository.findById(")) and mine.complete
    assert {m.repo_path for m in mine.matches} == {ACME}

    for query in (literal("TOPSECRET-42"), literal("TOPSECRET-42", repo=SECRET), literal("Vault", path="**/*.java")):
        hidden = await everything(search, READS_ACME, query)
        assert (hidden.total, hidden.files, hidden.matches, hidden.complete) == (0, 0, [], True)
        assert hidden.scanned_chunks == 0 or query.repo is None  # the secret repository's chunks are not even read
    assert (await everything(search, LOCAL, literal("TOPSECRET-42"))).total == 2


async def test_a_restricted_caller_scans_only_its_chunks(search: SearchService) -> None:
    nowhere = GrepQuery(pattern=PatternSpec("[0-9]{40}xq", regex=True))  # no literal: every chunk is read
    mine = await everything(search, READS_ACME, nowhere)
    everything_ = await everything(search, LOCAL, nowhere)

    assert mine.total == 0 and 0 < mine.scanned_chunks < everything_.scanned_chunks


async def test_a_required_literal_narrows_the_chunks_read_inside_the_query(search: SearchService) -> None:
    narrowed = await everything(search, LOCAL, GrepQuery(pattern=PatternSpec(r"\bfindById\(\w+\)", regex=True)))
    folded = GrepQuery(pattern=PatternSpec("FINDBYID(", case_sensitive=False))

    assert narrowed.total > 0 and narrowed.scanned_chunks < (await everything(search, LOCAL, folded)).scanned_chunks


@pytest.mark.parametrize(
    ("pattern", "regex", "literal_"),
    [
        ("findById(", False, "findById("),
        ("ab", False, None),
        (r"\bsynchronized\s*\(\w+\)", True, "synchronized"),
        (r"foo(bar|baz)qux", True, "fooba"),
        (r"(?i)abcdef", True, None),
        (r"(?i:abcd)efgh", True, "efgh"),
        (r"(getFoo)+Bar", True, "getFoo"),
        (r"(abcde)*fg", True, None),
        (r"(abc)?defg", True, "defg"),
        (r"a.bcd|efgh", True, None),
        (r"\pL+abc", True, None),  # RE2 syntax the standard parser does not read: no literal, a full scan
    ],
)
async def test_the_literal_a_pattern_requires(pattern: str, regex: bool, literal_: str | None) -> None:
    assert required_literal(PatternSpec(pattern, regex=regex)) == literal_
    assert required_literal(PatternSpec(pattern, regex=regex, case_sensitive=False)) is None


class NoSubstring(EdgeStore):
    """Qdrant Edge answering as a server that does not know `match.substring` (before qdrant#10711)."""

    def scroll(self, where: Filter, fields: Any, **kwargs: Any) -> AsyncIterator[Any]:
        if "MatchSubstring" in repr(where):
            raise StorageError("Qdrant scroll failed: unknown variant `substring`")
        return super().scroll(where, fields, **kwargs)


async def test_an_engine_without_substring_conditions_is_scanned_whole(indexed: Indexed) -> None:
    store = NoSubstring(":memory:", "java_code")
    try:
        await store.ensure(IndexModel(embedding_model=None, dimension=None))
        context = SourceContext(repo_path=ACME, gitlab_project_id=1, commit_sha=SHA)
        files = list(iter_sources(SHOP_DIR, Scope.from_config(ChunkerConfig())))
        await Indexer(store, None).write(ACME, list(chunk_local_files(files, context, ChunkerConfig())))
        plain = await everything(SearchService(store, None, GITLAB), LOCAL, literal("Repository.findById("))
    finally:
        await store.close()
    narrowed = await everything(indexed.search, LOCAL, literal("Repository.findById(", repo=ACME))

    assert plain.matches == narrowed.matches and plain.scanned_chunks > narrowed.scanned_chunks


async def test_a_regular_expression_and_case_insensitivity(search: SearchService) -> None:
    regex = GrepQuery(pattern=PatternSpec(r"^\s*@(Get|Post)Mapping\b", regex=True), repo=ACME)
    found = await everything(search, LOCAL, regex)
    expected = {
        (p, n)
        for p, n in source_lines("Mapping")
        if re.match(r"^\s*@(Get|Post)Mapping\b", (SHOP_DIR / p).read_text().splitlines()[n - 1])
    }
    assert expected and {(m.file_path, m.line) for m in found.matches if not m.in_outline} == expected

    upper = await everything(search, LOCAL, GrepQuery(pattern=PatternSpec("OWNERREPOSITORY.FINDBYID("), repo=ACME))
    folded = GrepQuery(pattern=PatternSpec("OWNERREPOSITORY.FINDBYID(", case_sensitive=False), repo=ACME)
    assert upper.total == 0
    assert (await everything(search, LOCAL, folded)).total == len(source_lines("ownerRepository.findById("))


async def test_a_field_is_found_in_its_class_outline_and_a_head_counts_once(search: SearchService) -> None:
    fields = await everything(search, LOCAL, literal("private final OwnerRepository ownerRepository;", repo=ACME))
    assert fields.total == len(source_lines("private final OwnerRepository ownerRepository;"))
    assert all(m.in_outline and m.symbol_type == "class" for m in fields.matches)

    head = "public Optional<OwnerDto> find(Long id)"
    [match] = (await everything(search, LOCAL, literal(head, repo=ACME))).matches
    assert not match.in_outline and (match.file_path, match.line) in source_lines(head)


@pytest.mark.parametrize(
    ("path", "glob"),
    [
        ("shop-core", "shop-core/**/*.java"),
        ("*Service.java", "**/*Service.java"),
        ("shop-core/**/service/*.java", "shop-core/**/service/*.java"),
    ],
)
async def test_path_prefix_and_globs(search: SearchService, path: str, glob: str) -> None:
    found = await everything(search, LOCAL, literal("findById(", repo=ACME, path=path))

    assert found.total == len(source_lines("findById(", glob=glob)) > 0


async def test_a_glob_filters_by_its_fixed_folders_in_the_query() -> None:
    assert path_rule("shop-core/**/service/*.java")[0] == "shop-core"
    assert path_rule("*Service.java")[0] is None
    assert path_rule("shop-core/src/")[0] == "shop-core/src"


async def test_the_language_filter(search: SearchService) -> None:
    java = await everything(search, LOCAL, GrepQuery(pattern=PatternSpec("findById("), repo=ACME, language="Java"))
    kotlin = await everything(search, LOCAL, GrepQuery(pattern=PatternSpec("findById("), repo=ACME, language="kotlin"))

    assert java.total > 0 and kotlin.total == 0


async def test_pages_are_slices_of_one_order(search: SearchService) -> None:
    whole = await everything(search, LOCAL, literal("return", repo=ACME))
    pages = [await search.grep(LOCAL, literal("return", repo=ACME), offset=o, limit=7) for o in range(0, 35, 7)]

    assert whole.total > 35
    assert [m for p in pages for m in p.matches] == whole.matches[:35]
    assert {p.total for p in pages} == {whole.total}
    keys = [(m.repo_path, m.file_path, m.line, m.in_outline) for m in whole.matches]
    assert keys == sorted(keys)


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("(unclosed", "invalid regular expression for RE2"),
        (r"(a)\1", "invalid regular expression for RE2"),
        ("(?<=find)ById", "invalid regular expression for RE2"),
        ("a{1001}", "a repetition count over RE2's 1000"),
        ("((a|b)*){20}){20}", "invalid regular expression for RE2"),
        ("(((a|b)*){20}){60}", "a repetition count over RE2's 1000"),
        (r"[\p{L}\p{N}]{1000}", "over RE2's 8 MiB budget"),
        ("x" * 10_000, f"at most {MAX_PATTERN_CHARS}"),
        ("", "empty"),
        ("two\nlines", "per line"),
        ("lone \ud800", "not valid Unicode"),
    ],
)
async def test_a_bad_pattern_is_refused_with_a_reason(search: SearchService, pattern: str, why: str) -> None:
    with pytest.raises(PatternError, match=re.escape(why)):
        await search.grep(LOCAL, GrepQuery(pattern=PatternSpec(pattern, regex=True)))


async def test_a_catastrophic_backtracking_pattern_runs_in_linear_time(search: SearchService) -> None:
    started = time.perf_counter()
    found = await everything(search, LOCAL, GrepQuery(pattern=PatternSpec(r"(\w+\s?)+$", regex=True), repo=ACME))

    assert found.complete and found.total > 0
    assert time.perf_counter() - started < 10  # a backtracking engine takes hours on the fixture's long lines


async def test_a_huge_alternation_is_refused_or_bounded(search: SearchService) -> None:
    words = "|".join(f"w{i}" for i in range(300))[:MAX_PATTERN_CHARS]
    words = words.rsplit("|", 1)[0]
    found = await everything(search, LOCAL, GrepQuery(pattern=PatternSpec(words, regex=True), repo=ACME))
    assert found.complete

    nested = GrepQuery(pattern=PatternSpec("((((a|b|c|d|e|f)*){20}){20})", regex=True))
    slow = SearchService(search.store, None, grep_limits=GrepLimits(deadline_s=0.5, batch=8))
    started = time.perf_counter()
    found = await slow.grep(LOCAL, nested)  # RE2 falls back to its slower engine: the deadline bounds it
    assert time.perf_counter() - started < 5 and (found.complete or found.stopped == "ran 0.5 s")


@pytest.mark.parametrize(
    ("limits", "stopped"),
    [
        (GrepLimits(max_matches=3), "found over 3 matching lines"),
        (GrepLimits(max_scan_bytes=2000, batch=8), "read 2,000 bytes of code"),
        (GrepLimits(deadline_s=0.0, batch=8), "ran 0 s"),
    ],
)
async def test_a_scan_past_a_limit_stops_and_says_so(indexed: Indexed, limits: GrepLimits, stopped: str) -> None:
    bounded = SearchService(indexed.search.store, None, grep_limits=limits)
    found = await bounded.grep(LOCAL, literal("return"))

    assert not found.complete and found.stopped == stopped
    assert found.total < (await everything(indexed.search, LOCAL, literal("return"))).total


async def test_the_fixture_holds_what_the_tests_count() -> None:
    assert len(source_lines("Repository.findById(")) >= 3
    assert Path(SHOP_DIR / "shop-core").is_dir()
