"""Fast checks of the real-repository suite's parts, on inputs written here (no real repository).

The gold rules on a small Java snippet, the scoring on hand-made outcomes, the fetcher on a local
git repository the test makes, and the questions' own invariants.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.quality.real.evaluate import applicable, expected_of, problem
from tests.quality.real.gold import Corpus, parse_file, route_matches
from tests.quality.real.question_lookups import SINGLES
from tests.quality.real.question_sets import ALL_SETS, SETS
from tests.quality.real.questions import NATURAL, SetQuestion, Single
from tests.quality.real.repos import FetchError, Pin, materialise
from tests.quality.real.scoring import SetOutcome, SingleOutcome, first_rank, named_in, ranks, set_score

REPO = "acme/app"
SNIPPET = b"""
package com.acme.app;

@interface Ignored {}

@Service
@interface Stereo {}

interface Store { void put(String k); }

class BaseStore implements Store { public void put(String k) {} }

class FastStore extends BaseStore {}

@Stereo
@RequiredArgsConstructor
@RequestMapping("/api/items")
class ItemController {
    private final FastStore store;
    private final String name = "x";
    @Autowired private Clock clock;

    @GetMapping("/{id}")
    @Transactional(readOnly = true)
    public Item one(Long id) { store.put("a"); return null; }

    @GetMapping("/latest")
    public Item latest() { java.util.List.of("a").forEach(store::put); return null; }

    @RequestMapping(value = "/{id}", method = RequestMethod.DELETE)
    void drop(Long id) { Store local = store; local.put("b"); helper(); }

    private void helper() {}
}

class NotABean {
    @Autowired private FastStore store;
    NotABean(Clock clock) {}
}

class MadeByBean { @Autowired private Clock clock; }

@Configuration
class Wiring {
    @Bean MadeByBean made() { return new MadeByBean(); }
}

@FeignClient(name = "items")
interface ItemClient {
    @GetMapping("/api/items/{id}")
    Item one(Long id);
}
"""


def _corpus() -> Corpus:
    return Corpus(parse_file(REPO, "src/main/java/com/acme/app/All.java", SNIPPET))


def test_annotations_are_found_on_methods_and_types() -> None:
    corpus = _corpus()

    assert corpus.annotated("Transactional", REPO) == {"com.acme.app.ItemController.one"}
    assert corpus.annotated("FeignClient", None) == {"com.acme.app.ItemClient"}
    assert corpus.annotated("Transactional", "other/repo") == set()


def test_injection_needs_a_bean_and_learns_custom_stereotypes() -> None:
    corpus = _corpus()

    assert "Stereo" in corpus.stereotypes()
    assert "Ignored" not in corpus.stereotypes()
    assert corpus.injectors("FastStore", REPO) == {"com.acme.app.ItemController"}  # NotABean is no bean
    assert corpus.injectors("Clock", REPO) == {"com.acme.app.ItemController", "com.acme.app.MadeByBean"}
    assert corpus.dependencies("com.acme.app.ItemController") == {"FastStore", "Clock"}  # `name` is initialised


def test_callers_follow_declared_types_locals_method_references_and_subtypes() -> None:
    corpus = _corpus()

    assert corpus.subtypes("Store", REPO) == {"Store", "BaseStore", "FastStore"}
    assert corpus.callers("Store", "put", REPO) == {
        "com.acme.app.ItemController.one",
        "com.acme.app.ItemController.latest",
        "com.acme.app.ItemController.drop",
    }
    assert corpus.callers("ItemController", "helper", REPO) == {"com.acme.app.ItemController.drop"}
    assert corpus.callers("Store", "get", REPO) == set()


def test_handlers_take_the_most_specific_pattern_and_skip_feign_clients() -> None:
    corpus = _corpus()

    assert corpus.handlers("GET", "/api/items/7", REPO) == {"com.acme.app.ItemController.one"}
    assert corpus.handlers("GET", "/api/items/latest", REPO) == {"com.acme.app.ItemController.latest"}
    assert corpus.handlers("DELETE", "/api/items/7", REPO) == {"com.acme.app.ItemController.drop"}
    assert corpus.handlers("POST", "/api/items/7", REPO) == set()


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("/a/{id}", "/a/1", True),
        ("/a/{id}", "/a/1/b", False),
        ("a/b/", "/a/b", True),
        ("/a/**", "/a/b/c", True),
        ("/a/**", "/b", False),
        ("", "/", True),
    ],
)
def test_route_matching(pattern: str, path: str, matches: bool) -> None:
    assert route_matches(pattern, path) is matches


def test_single_scores() -> None:
    question = NATURAL[0]
    hit_first = SingleOutcome(question=question, expected=frozenset({"x"}), returned=("x", "y"), rendered_count=1)
    hit_third = SingleOutcome(question=question, expected=frozenset({"x"}), returned=("a", "b", "x"), rendered_count=2)
    miss = SingleOutcome(question=question, expected=frozenset({"x"}), returned=("a",) * 12 + ("x",))

    got = ranks([o.rank for o in (hit_first, hit_third, miss)])

    assert (hit_first.rank, hit_third.rank, miss.rank) == (1, 3, None)  # rank 13 is past the depth
    assert (hit_first.read_rank, hit_third.read_rank) == (1, None)  # the budget showed only 2 results
    assert got.recall_at_1 == pytest.approx(1 / 3)
    assert got.recall_at_5 == pytest.approx(2 / 3)
    assert got.mrr == pytest.approx((1 + 1 / 3) / 3)
    assert first_rank((), frozenset({"x"})) is None


def test_set_scores() -> None:
    question = SETS[0]
    half = SetOutcome(question=question, gold=frozenset({"a", "b"}), got=frozenset({"a", "c", "d", "e"}))
    empty = SetOutcome(question=question, gold=frozenset(), got=frozenset())

    assert (half.recall, half.precision) == (0.5, 0.25)
    assert (empty.recall, empty.precision) == (1.0, 1.0)
    assert set_score([half, empty]).recall == 0.75


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


def test_fetcher_exports_the_pinned_commit_from_a_mirror(tmp_path: Path) -> None:
    work = tmp_path / "mirrors" / "acme+app" / "repo"
    work.mkdir(parents=True)
    _git(work, "init", "--quiet")
    (work / "A.java").write_text("class A {}\n")
    _git(work, "add", ".")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "one")
    pinned = _git(work, "rev-parse", "HEAD")
    (work / "A.java").write_text("class A { int later; }\n")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-am", "two")
    pin = Pin("acme", "app", pinned)

    out = materialise(pin, tmp_path / "cache", tmp_path / "mirrors")

    assert out == tmp_path / "cache" / "acme+app"
    assert (out / "A.java").read_text() == "class A {}\n"  # the pinned commit, not HEAD
    (out / "A.java").write_text("changed")
    assert materialise(pin, tmp_path / "cache", tmp_path / "mirrors") == out  # reused, not exported again
    assert (out / "A.java").read_text() == "changed"
    with pytest.raises(FetchError):
        materialise(Pin("acme", "missing", pinned), tmp_path / "cache", tmp_path / "mirrors")


def test_fetcher_exports_only_the_paths_asked_and_never_takes_a_part_for_the_whole(tmp_path: Path) -> None:
    work = tmp_path / "mirrors" / "acme+parts" / "repo"
    (work / "core").mkdir(parents=True)
    _git(work, "init", "--quiet")
    (work / "core" / "A.kt").write_text("class A\n")
    (work / "B.java").write_text("class B {}\n")
    _git(work, "add", ".")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "one")
    pin = Pin("acme", "parts", _git(work, "rev-parse", "HEAD"))

    part = materialise(pin, tmp_path / "cache", tmp_path / "mirrors", ("core",))
    assert (part / "core" / "A.kt").is_file() and not (part / "B.java").exists()
    whole = materialise(pin, tmp_path / "cache", tmp_path / "mirrors")  # the part is not reused as the whole
    assert (whole / "B.java").is_file()


def test_fetcher_fetches_from_a_git_url_without_a_mirror(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    origin.mkdir()
    _git(origin, "init", "--quiet")
    _git(origin, "config", "uploadpack.allowReachableSHA1InWant", "true")
    (origin / "B.java").write_text("class B {}\n")
    _git(origin, "add", ".")
    _git(origin, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "one")
    pin = Pin("acme", "b", _git(origin, "rev-parse", "HEAD"), url=origin.as_uri())

    out = materialise(pin, tmp_path / "cache")

    assert (out / "B.java").read_text() == "class B {}\n"


def test_questions_meet_the_suite_shape() -> None:
    natural = [q for q in SINGLES if q.kind == "natural"]

    assert len(SINGLES) + len(ALL_SETS) >= 150
    assert len(natural) >= 60
    assert {q.kind for q in SINGLES} == {"natural", "symbol", "route"}
    assert {q.kind for q in ALL_SETS} == {"annotation", "callers", "injection", "inverse", "endpoints"}
    assert len({q.text for q in SINGLES}) == len(SINGLES)
    assert len({q.text for q in ALL_SETS}) == len(ALL_SETS)


def test_a_subset_of_repositories_asks_only_what_it_can_answer() -> None:
    corpus = _corpus()
    here = Single("where is one item read", "natural", frozenset({"com.acme.app.ItemController.one"}))
    elsewhere = Single("where is the cart emptied", "natural", frozenset({"com.other.Cart.clear"}))
    route = Single("GET /api/items/3", "route", lookup="GET /api/items/3")

    assert applicable(here, corpus)
    assert not applicable(elsewhere, corpus)
    assert expected_of(route, corpus) == {"com.acme.app.ItemController.one"}
    assert applicable(SetQuestion("annotation", "Transactional", REPO), corpus)
    assert not applicable(SetQuestion("annotation", "Transactional", "other/repo"), corpus)


def test_names_shown_in_a_tool_text_are_whole_names() -> None:
    text = "1. com.acme.Shop.buy (method)\nShop depends on: Clock, FastStore\n2. com.acme.Shop.buyAll (method)"

    assert named_in(text, frozenset({"com.acme.Shop.buy", "com.acme.Shop.sell"})) == 0.5
    assert named_in(text, frozenset({"Clock", "Store"})) == 0.5  # `Store` is only part of `FastStore`
    assert named_in(text, frozenset({"acme.Shop.buy"})) == 0.0  # a suffix of a longer name
    assert named_in(text, frozenset()) == 1.0


def test_unscorable_questions_are_reported() -> None:
    corpus = _corpus()
    typo = Single("where is one item read", "natural", frozenset({"com.acme.app.ItemController.onee"}))

    assert problem(typo, corpus) == "com.acme.app.ItemController.onee not declared"
    assert problem(Single("NoSuchType", "symbol", lookup="NoSuchType"), corpus) == "no expected answer"
    assert problem(Single("ItemController.one", "symbol", lookup="ItemController.one"), corpus) is None
    assert problem(SetQuestion("annotation", "Scheduled", REPO), corpus) == "the gold set is empty"
    assert problem(SetQuestion("annotation", "Transactional", REPO), corpus) is None
