"""The semble benchmark's scoring, annotation parsing and reference BM25 on hand-computed cases, and one
end-to-end run over a tiny repository made here (a local git mirror, no network)."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from tests.quality.real.repos import Pin, materialise
from tests.quality.semble import annotated, bm25, report
from tests.quality.semble.__main__ import _checkout, _presence, chosen_specs, relocations
from tests.quality.semble.annotated import AnnotationError, Target
from tests.quality.semble.metrics import Located, chunk_ndcg, file_ndcg, ndcg, path_matches
from tests.quality.semble.run import Outcome, RepoRun, include, run_bm25, run_ours, scoped, settings_for
from tests.quality.semble.spec import SPECS, RepoSpec, of_language

HALF = 1 / math.log2(3)  # the gain of rank 2


def test_ndcg_by_hand() -> None:
    assert ndcg([1], 1) == 1.0
    assert ndcg([2], 1) == pytest.approx(HALF)
    assert ndcg([1, 3], 2) == pytest.approx((1 + 0.5) / (1 + HALF))
    assert ndcg([3], 2) == pytest.approx(0.5 / (1 + HALF))
    assert ndcg([], 1) == 0.0
    assert ndcg([11], 1) == 0.0  # below the cut
    assert ndcg([1, 1], 2) == pytest.approx(1 / (1 + HALF))  # one rank found two targets: filled once
    assert ndcg([1], 0) == 0.0
    assert ndcg(range(1, 13), 12) == 1.0  # the ideal holds min(k, relevant) hits


def test_path_matching_is_suffix_on_folder_bounds() -> None:
    assert path_matches("gson/src/A.java", "gson/src/A.java")
    assert path_matches("/abs/gson/src/A.java", "gson/src/A.java")
    assert path_matches("src/A.java", "gson/src/A.java")
    assert not path_matches("gson/src/BA.java", "A.java")


def test_chunk_protocol_counts_the_first_chunk_overlapping_the_span() -> None:
    target = Target("x/E.java", 89, 99)
    results = [Located("x/E.java", 1, 88), Located("x/F.java", 1, 50), Located("x/E.java", 95, 120)]
    assert chunk_ndcg(results, [target]) == pytest.approx(0.5)  # found at rank 3
    assert chunk_ndcg(results, [Target("x/E.java")]) == 1.0  # no span: any chunk of the file
    assert chunk_ndcg(results, [Target("x/E.java"), Target("x/F.java")]) == 1.0
    assert chunk_ndcg(results, [target], k=2) == 0.0


def test_file_protocol_ranks_distinct_files_and_ignores_spans() -> None:
    results = [Located("a/A.java", 1, 9), Located("a/A.java", 10, 20), Located("a/B.java", 1, 9)]
    assert file_ndcg(results, [Target("a/B.java", 500, 600)]) == pytest.approx(HALF)  # B is the 2nd file
    assert file_ndcg(results, [Target("a/A.java", 1, 2), Target("a/A.java")]) == 1.0  # one file, counted once
    assert file_ndcg(results, [Target("a/C.java")]) == 0.0


def test_annotations_parse_as_semble_reads_them() -> None:
    raw = [
        {"query": "ObjectMapper", "relevant": [{"path": "p/O.java", "start_line": 93, "end_line": 132}],
         "secondary": ["p/M.java"], "category": "symbol", "seed": {"path": "p/O.java", "line": 109}},
        {"query": "how values are cached", "relevant": ["p/C.java"]},
        {"query": "JsonObject"},
        {"query": "a class with named fields", "relevant": ["p/J.java"]},
    ]  # fmt: skip
    queries = annotated.parse("r", raw)
    assert queries[0].targets == (Target("p/O.java", 93, 132), Target("p/M.java"))
    assert [q.category for q in queries] == ["symbol", "architecture", "symbol", "semantic"]
    assert queries[2].targets == ()
    with pytest.raises(AnnotationError):
        annotated.parse("r", {"query": "x"})
    with pytest.raises(AnnotationError):
        annotated.parse("r", [{"relevant": ["a"]}])
    with pytest.raises(AnnotationError):
        annotated.parse("r", [{"query": "x", "relevant": [{"start_line": 1}]}])


def test_bm25_tokens_windows_and_ranking() -> None:
    assert bm25.tokenize("getHTTPResponse") == ["gethttpresponse", "get", "http", "response"]
    assert bm25.tokenize("my_colors") == ["my_colors", "my", "colors", "my_color", "color"]
    text = "".join(f"line {i}\n" for i in range(1, 61))
    assert [w.where for w in bm25.windows(text, "f")] == [
        Located("f", 1, 30),
        Located("f", 26, 55),
        Located("f", 51, 60),
    ]
    index = bm25.Bm25()
    index.add(Located("a", 1, 1), bm25.tokenize("parse the retry backoff"))
    index.add(Located("b", 1, 1), bm25.tokenize("render a page of html"))
    index.add(Located("c", 1, 1), bm25.tokenize("retry"))
    assert [r.path for r in index.search("retry backoff", 10)] == ["a", "c"]


def test_the_pins_are_semble_s() -> None:
    assert {s.name for s in of_language("java")} == {"gson", "commons-lang", "jackson-databind"}
    assert {s.name for s in of_language("kotlin")} == {"ktor", "kotlinx-coroutines", "exposed"}
    assert of_language("all") == SPECS
    assert all(s.pinned and len(s.pin.commit) == 40 for s in SPECS)
    assert not SPECS[2].at("1" * 40).pinned


def test_the_language_picks_the_repositories_and_java_stays_the_default() -> None:
    assert [s.name for s in chosen_specs(None, None)] == ["gson", "commons-lang", "jackson-databind"]
    assert [s.name for s in chosen_specs("kotlin", None)] == ["ktor", "kotlinx-coroutines", "exposed"]
    assert [s.name for s in chosen_specs(None, "exposed,gson")] == ["gson", "exposed"]  # names pick any language
    with pytest.raises(SystemExit, match="ktor"):
        chosen_specs("java", "ktor")
    assert include("kotlin") == ("**/*.kt",) and include("java") == ("**/*.java",)
    assert scoped(settings_for("lexical"), "kotlin").chunking.include == ("**/*.kt",)


def test_a_run_whose_published_numbers_came_from_other_annotations_is_shown_not_failed(tmp_path: Path) -> None:
    spec = next(s for s in SPECS if s.name == "ktor")
    run = bm25_run(spec.name, spec.pin.commit, [0.0])
    lines, ok = report.bm25_check([run], [spec])
    assert ok and "OUTSIDE (not comparable: semble's published ktor run" in lines[1]
    lines, ok = report.bm25_check([run], [replace(spec, not_comparable="")])
    assert not ok


def bm25_run(repo: str, commit: str, scores: list[float]) -> RepoRun:
    query = annotated.Query(repo, "q", (Target("a.kt"),), "semantic")
    outcomes = tuple(Outcome(query, score, score, ()) for score in scores)
    return RepoRun("BM25", repo, commit, outcomes, 1, 0.0, ())


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


JAVA = {
    "lib/src/main/java/com/acme/OrderService.java": (
        "package com.acme;\n\n/** Places and cancels customer orders. */\npublic class OrderService {\n"
        "    public Order place(Order order) { return order; }\n    public void cancel(long id) { }\n}\n"
    ),
    "lib/src/main/java/com/acme/RetryPolicy.java": (
        "package com.acme;\n\n/** How long to wait before the next attempt: exponential backoff. */\n"
        "public class RetryPolicy {\n    public long backoffMillis(int attempt) { return 100L << attempt; }\n}\n"
    ),
    "lib/src/main/java/com/acme/Order.java": "package com.acme;\n\npublic record Order(long id, String item) { }\n",
}


RETRY = "lib/src/main/java/com/acme/RetryPolicy.java"


def test_end_to_end_on_a_tiny_repository(tmp_path: Path) -> None:
    mirror = tmp_path / "mirrors" / "acme+tiny" / "repo"
    for path, text in JAVA.items():
        (mirror / path).parent.mkdir(parents=True, exist_ok=True)
        (mirror / path).write_text(text)
    _git(mirror.parent, "init", "-q", "repo")
    _git(mirror, "add", ".")
    _git(mirror, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tiny")
    spec = RepoSpec("tiny", Pin("acme", "tiny", _git(mirror, "rev-parse", "HEAD")), "lib", 1.0)
    folder = tmp_path / "annotations"
    folder.mkdir()
    (folder / "tiny.json").write_text(json.dumps([
        {"query": "OrderService", "relevant": ["lib/src/main/java/com/acme/OrderService.java"]},
        {"query": "exponential backoff before the next attempt", "relevant": [RETRY]},
        {"query": "cancel an order", "relevant": [{"path": "lib/src/main/java/com/acme/OrderService.java",
                                                    "start_line": 6, "end_line": 6}]},
    ]))  # fmt: skip
    queries = annotated.load(folder, "tiny")
    checkout = materialise(spec.pin, tmp_path / "cache", tmp_path / "mirrors")
    assert _presence(spec, checkout, queries).endswith("2/2 annotated files present")

    ours = asyncio.run(run_ours(spec, checkout, queries, settings_for("lexical"), "ours"))
    baseline = run_bm25(spec, checkout, queries)
    assert [o.chunk for o in ours.outcomes][:2] == [1.0, 1.0]
    assert ours.outcomes[2].file == 1.0
    assert ours.units >= 3 and baseline.units == 3 and len(ours.latencies_ms) == 3
    assert ours.outcomes[0].top_files[0] == "lib/src/main/java/com/acme/OrderService.java"  # checkout-relative
    assert baseline.outcomes[1].chunk == 1.0
    table = report.system_table([ours])
    assert table[2].startswith("tiny") and "mean of repos" in table[-1]
    _, ok = report.bm25_check([baseline], [spec])
    assert ok is (abs(report.mean([o.chunk for o in baseline.outcomes]) - 1.0) <= 0.04)
    assert report.as_json([ours])[0]["repo"] == "tiny"

    unreachable = spec.at("0" * 40)
    with pytest.raises(SystemExit, match="--fallback tiny=COMMIT"):
        _checkout(unreachable, tmp_path / "cache", tmp_path / "mirrors", None)
    moved, _ = _checkout(unreachable, tmp_path / "cache", tmp_path / "mirrors", spec.pin.commit)
    assert moved.pin.commit == spec.pin.commit
    at_fallback = replace(baseline, commit="f" * 40)  # a fallback's BM25 is shown, never failed
    assert report.bm25_check([at_fallback], [replace(spec, published_bm25=0.0)])[1] is True
    assert report.bm25_check([baseline], [replace(spec, published_bm25=0.0)])[1] is False


def test_a_moved_file_is_relocated_only_to_the_one_file_of_its_name(tmp_path: Path) -> None:
    for path in ("r/a/bean/Bean.java", "r/a/x/Twin.java", "r/a/y/Twin.java", "r/a/Here.java"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("class X {}")
    queries = annotated.parse("r", [
        {"query": "beans", "relevant": [{"path": "r/a/Bean.java", "start_line": 3, "end_line": 9}, "r/a/Here.java"]},
        {"query": "twins", "relevant": ["r/a/Twin.java"]},
    ])  # fmt: skip
    moves = relocations(tmp_path, "r", queries)
    assert moves == {"r/a/Bean.java": "r/a/bean/Bean.java"}  # Twin.java is ambiguous: left missing
    moved = annotated.relocate(queries, moves)
    assert moved[0].targets == (Target("r/a/bean/Bean.java"), Target("r/a/Here.java"))
    assert moved[1] == queries[1]


def test_annotations_are_downloaded_once_and_refused_when_they_do_not_parse(tmp_path: Path) -> None:
    source = tmp_path / "semble"
    source.mkdir()
    (source / "good.json").write_text(json.dumps([{"query": "JsonObject", "relevant": ["a/J.java"]}]))
    (source / "bad.json").write_text(json.dumps({"query": "not a list"}))
    cache = tmp_path / "cache"
    assert annotated.download(cache, ["good"], source.as_uri()) == cache
    assert annotated.load(cache, "good")[0].targets == (Target("a/J.java"),)
    (source / "good.json").write_text("[]")  # already cached: not fetched again
    assert len(annotated.load(annotated.download(cache, ["good"], source.as_uri()), "good")) == 1
    with pytest.raises(AnnotationError):
        annotated.download(cache, ["bad"], source.as_uri())
    assert not (cache / "bad.json").exists()


KOTLIN = {
    "client/common/src/io/acme/RetryPlugin.kt": (
        "package io.acme\n\n/** How long to wait before the next attempt: exponential backoff. */\n"
        "class RetryPlugin {\n    fun backoffMillis(attempt: Int): Long = 100L shl attempt\n}\n"
    ),
    "client/common/src/io/acme/Orders.kt": (
        "package io.acme\n\nclass Orders {\n    fun place(item: String): String = item\n"
        "    fun cancel(id: Long) {}\n}\n"
    ),
    "client/jvm/src/io/acme/Native.java": "package io.acme;\n\nclass Native { void backoff() {} }\n",
}


def test_a_kotlin_root_outside_src_main_kotlin_is_indexed_and_only_the_root_exported(tmp_path: Path) -> None:
    mirror = tmp_path / "mirrors" / "acme+kt" / "repo"
    for path, text in KOTLIN.items():
        (mirror / path).parent.mkdir(parents=True, exist_ok=True)
        (mirror / path).write_text(text)
    _git(mirror.parent, "init", "-q", "repo")
    _git(mirror, "add", ".")
    _git(mirror, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "kt")
    spec = RepoSpec("kt", Pin("acme", "kt", _git(mirror, "rev-parse", "HEAD")), "client/common/src", 1.0, "kotlin")
    queries = annotated.parse("kt", [
        {"query": "RetryPlugin", "relevant": ["client/common/src/io/acme/RetryPlugin.kt"]},
        {"query": "exponential backoff before the next attempt", "relevant": [
            "client/common/src/io/acme/RetryPlugin.kt", "client/jvm/src/io/acme/Native.java"]},
    ])  # fmt: skip
    spec, checkout = _checkout(spec, tmp_path / "cache", tmp_path / "mirrors", None)
    assert not (checkout / "client/jvm").exists()  # only the benchmark root is exported
    assert _presence(spec, checkout, queries).endswith(
        "1/2 annotated files present; outside the benchmark root: client/jvm/src/io/acme/Native.java"
    )
    ours = asyncio.run(run_ours(spec, checkout, queries, settings_for("lexical"), "ours"))
    assert ours.outcomes[0].chunk == 1.0  # indexed although the default scope wants src/main/kotlin
    assert ours.outcomes[0].top_files[0] == "client/common/src/io/acme/RetryPlugin.kt"
    assert run_bm25(spec, checkout, queries).units == 2  # the reference BM25 reads .kt files too
