"""The `kotlin` question set: its shape, the typo check of hand-written answers (`kotlin_names`), and a run of
`python -m tests.quality.real --set` over a tiny Kotlin repository made here (a local git mirror, no network)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.quality.kotlin import questions
from tests.quality.real.__main__ import main
from tests.quality.real.gold import Corpus
from tests.quality.real.kotlin_names import declared
from tests.quality.real.questions import SetQuestion, Single
from tests.quality.real.repos import Pin
from tests.quality.real.suites import SUITES, Suite
from tests.quality.semble.spec import SPECS

SERVICE = """package com.acme.shop

import org.springframework.stereotype.Controller

/** class Commented is not declared: comments are dropped. */
@Controller
@RequestMapping("/carts")
class CartController(val carts: CartRepository) {
    @GetMapping("/{id}")
    fun show(id: Int): Cart = carts.findById(id)

    companion object {
        const val LIMIT = 3
    }
}

interface CartRepository {
    fun findById(id: Int): Cart
}

fun main(args: Array<String>) {}
"""


def test_every_answer_of_the_kotlin_set_is_written_and_its_repository_is_apart() -> None:
    suite = SUITES["kotlin"]
    assert all(q.expected for q in suite.singles) and all(q.gold for q in suite.sets)
    assert {q.kind for q in suite.singles} == {"natural", "symbol", "route"}
    assert {q.kind for q in suite.sets} >= {"callers", "injection", "annotation"}
    others = {p.repo_path for s in SUITES.values() if s.name != "kotlin" for p in s.pins}
    assert {p.repo_path for p in suite.pins}.isdisjoint(others | {s.pin.repo_path for s in SPECS})
    assert len({q.text for q in suite.singles}) == len(suite.singles)
    assert all(q.repo == questions.REPO for q in suite.sets)


def test_declared_names_over_approximate_members_and_drop_comments() -> None:
    types = {t.qualified_name: t.members for t in declared("src/main/kotlin/com/acme/shop/Carts.kt", SERVICE)}
    assert set(types) == {
        "com.acme.shop.CartController",
        "com.acme.shop.CartController.Companion",
        "com.acme.shop.CartRepository",
        "com.acme.shop.CartsKt",
    }
    controller = types["com.acme.shop.CartController"]
    assert "com.acme.shop.CartController.CartController" in controller  # a primary constructor
    assert "com.acme.shop.CartController.show" in controller and "com.acme.shop.CartController.carts" in controller
    assert "com.acme.shop.CartRepository.CartRepository" not in types["com.acme.shop.CartRepository"]
    assert "com.acme.shop.CartsKt.main" in types["com.acme.shop.CartsKt"]


def _mirror(root: Path) -> Pin:
    work = root / "acme+kshop" / "repo"
    source = work / "src" / "main" / "kotlin" / "com" / "acme" / "shop"
    source.mkdir(parents=True)
    (source / "Carts.kt").write_text(SERVICE)
    commit = ("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a")
    for args in (("init", "--quiet"), ("add", "."), commit):
        subprocess.run(["git", "-C", str(work), *args], check=True, capture_output=True)
    head = subprocess.run(["git", "-C", str(work), "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    return Pin("acme", "kshop", head.stdout.strip())


def test_kotlin_declarations_are_read_with_the_java_ones(tmp_path: Path) -> None:
    pin = _mirror(tmp_path / "mirrors")
    from tests.quality.real.repos import materialise

    corpus = Corpus.load([(pin.repo_path, materialise(pin, tmp_path / "cache", tmp_path / "mirrors"))])
    assert "com.acme.shop.CartController.show" in corpus.names()
    assert corpus.repos() == {"acme/kshop"}
    assert corpus.callers("CartRepository", "findById", None) == set()  # no rule reads Kotlin: gold is written


@pytest.mark.parametrize(
    ("gold", "said"),
    [
        ("com.acme.shop.CartController.show", "callers            1    1.00   1.00"),
        ("com.acme.shop.CartController.shows", "com.acme.shop.CartController.shows not declared"),
    ],
)
def test_a_written_gold_set_is_scored_by_the_suite_s_code_once_declared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], gold: str, said: str
) -> None:
    pin = _mirror(tmp_path / "mirrors")
    callers = SetQuestion("callers", "CartRepository.findById", pin.repo_path, gold=frozenset({gold}))
    route = Single("GET /carts/4", "route", frozenset({"com.acme.shop.CartController.show"}), lookup="GET /carts/4")
    monkeypatch.setitem(SUITES, "probe", Suite("probe", (pin,), (route,), (callers,)))

    argv = ["--set", "probe", "--mirrors", str(tmp_path / "mirrors"), "--cache", str(tmp_path / "cache")]

    assert main(argv) == 0
    out = capsys.readouterr().out
    assert said in out
    assert "route              1   1.00" in out
