"""The question sets of `python -m tests.quality.real --set`: the held-out set's shape and pins, and the
held-out run's refusal of unscorable questions. Offline: a local git repository stands in for a mirror."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.quality.real.__main__ import main
from tests.quality.real.questions import Single
from tests.quality.real.repos import Pin
from tests.quality.real.suites import SUITES, Suite, UnscorableError, not_indexed, refuse
from tests.quality.semble.spec import SPECS

CONTROLLER = b"""package com.acme;

@RestController
@RequestMapping("/items")
public class ItemController {
    @GetMapping("/{id}")
    public String one(String id) { return "item " + id; }
}
"""


def test_the_heldout_set_is_pinned_apart_from_every_other_benchmark() -> None:
    heldout, real = SUITES["heldout"], SUITES["real"]
    others = {p.repo_path for p in real.pins} | {spec.pin.repo_path for spec in SPECS}

    assert {p.repo_path for p in heldout.pins}.isdisjoint(others)
    assert heldout.held_out and not real.held_out
    assert all(len(p.commit) == 40 for p in heldout.pins)


def test_the_heldout_set_has_every_kind_and_no_duplicate() -> None:
    singles = SUITES["heldout"].singles
    natural = [q for q in singles if q.kind == "natural"]

    assert {q.kind for q in singles} == {"natural", "symbol", "route"}
    assert len(natural) >= 45 and sum("vocab" in q.tags for q in natural) >= 10
    assert all(q.expected for q in natural)
    assert len({q.text for q in singles}) == len(singles)
    assert {q.repo for q in singles if q.kind == "route"} == {p.repo_path for p in SUITES["heldout"].pins}


def test_answers_missing_from_the_index_are_listed_and_refused() -> None:
    found = Single("where is one item read", "natural", frozenset({"com.acme.ItemController.one"}))
    lost = Single("where is it written", "natural", frozenset({"com.acme.ItemController.write", "com.acme.X"}))
    expected = {id(q): q.expected for q in (found, lost)}

    lines = not_indexed([found, lost], expected, {"com.acme.ItemController.one", "com.acme.X"})

    assert lines == ["'where is it written': com.acme.ItemController.write not among the indexed chunks"]
    refuse([])
    with pytest.raises(UnscorableError, match=r"ItemController\.write"):
        refuse(lines)


def _mirror(root: Path) -> Pin:
    work = root / "acme+shop" / "repo"
    source = work / "src" / "main" / "java" / "com" / "acme"
    source.mkdir(parents=True)
    (source / "ItemController.java").write_bytes(CONTROLLER)
    (source / "generated").mkdir()  # read by gold.py, left out by the indexer's default excludes
    (source / "generated" / "Gen.java").write_text("package com.acme.generated;\nclass Gen { void make() {} }\n")
    commit = ("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a")
    for args in (("init", "--quiet"), ("add", "."), commit):
        subprocess.run(["git", "-C", str(work), *args], check=True, capture_output=True)
    head = subprocess.run(["git", "-C", str(work), "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    return Pin("acme", "shop", head.stdout.strip())


@pytest.mark.parametrize(
    ("expected", "code", "said"),
    [
        ("com.acme.ItemController.one", 0, "natural"),
        ("com.acme.ItemController.onee", 1, "com.acme.ItemController.onee not declared"),
        ("com.other.Cart.clear", 1, "com.other.Cart.clear not declared"),
        ("com.acme.generated.Gen.make", 1, "com.acme.generated.Gen.make not among the indexed chunks"),
    ],
)
def test_a_heldout_set_refuses_to_score_a_question_without_its_answer(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    expected: str,
    code: int,
    said: str,
) -> None:
    pin = _mirror(tmp_path / "mirrors")
    question = Single("where is one item read", "natural", frozenset({expected}))
    monkeypatch.setitem(SUITES, "probe", Suite("probe", (pin,), (question,), (), held_out=True))

    argv = ["--set", "probe", "--mirrors", str(tmp_path / "mirrors"), "--cache", str(tmp_path / "cache")]

    assert main(argv) == code
    out = capsys.readouterr().out
    assert said in out
    assert "not at rank 1" not in out  # a held-out set prints its tables, not its questions


def test_a_heldout_set_shows_its_misses_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pin = _mirror(tmp_path / "mirrors")
    question = Single("where is one item read", "natural", frozenset({"com.acme.ItemController.one"}))
    monkeypatch.setitem(SUITES, "probe", Suite("probe", (pin,), (question,), (), held_out=True))
    argv = ["--set", "probe", "--mirrors", str(tmp_path / "mirrors"), "--cache", str(tmp_path / "cache")]

    assert main([*argv, "--misses"]) == 0
    assert "not at rank 1" in capsys.readouterr().out
