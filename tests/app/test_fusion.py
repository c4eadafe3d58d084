from __future__ import annotations

from qdrant_client import models as qm

from app.core.embedded import CODE_TOKENS_MODEL, EMBEDDED_DENSE_WEIGHTS
from app.core.settings import EmbeddingSettings
from app.store.fusion import FUSED_DEPTH, RRF_K, candidates, fused, ranked


def point(name: str, score: float) -> qm.ScoredPoint:
    return qm.ScoredPoint(id=name, version=0, score=score, payload={})


def names(points: list[qm.ScoredPoint] | list[tuple[qm.ScoredPoint, float]]) -> list[str]:
    return [str((p[0] if isinstance(p, tuple) else p).id) for p in points]


def test_scores_equal_to_six_digits_are_tied_and_ordered_by_id() -> None:
    # Edge scores in 32-bit floats, local mode in 64-bit: the 8th digit must not decide the order.
    found = [point("b", 0.9511389136314392), point("a", 0.9511387944221497), point("c", 0.96)]

    assert names(ranked(found, 10)) == ["c", "a", "b"]


def test_ranked_keeps_the_limit() -> None:
    assert names(ranked([point("a", 3.0), point("b", 2.0), point("c", 1.0)], 2)) == ["a", "b"]


def test_fusion_scores_are_qdrants_and_ties_go_to_the_first_list() -> None:
    lexical = [point("x", 9.0), point("both", 5.0)]
    dense = [point("y", 0.9), point("both", 0.8)]

    out = fused([lexical, dense], 10)

    # "x" and "y" are each first in one list: tied, so the lexical list's comes first.
    assert names(out) == ["both", "x", "y"]
    assert [score for _, score in out] == [2 / (RRF_K + 1), 1 / RRF_K, 1 / RRF_K]


def test_candidates_rank_one_list_and_fuse_two() -> None:
    one = [point("b", 1.0), point("a", 1.0)]

    assert names(candidates([one], 5)) == ["a", "b"]
    assert names(candidates([one, [point("c", 0.5)]], 2)) == ["a", "c"]


def test_the_best_do_not_depend_on_how_deep_the_lists_go() -> None:
    # "deep" is first lexically and far down the dense list: only a longer list would have credited it, and
    # passed "near", which is tied with it in the lists both lengths share.
    lexical = [point("deep", 9.0), point("near", 8.0), *(point(f"l{i}", 7.0 - i / 1000) for i in range(300))]
    dense = [
        point("near", 0.99),
        *(point(f"d{i}", 0.9 - i / 1000) for i in range(FUSED_DEPTH + 10)),
        point("deep", 0.1),
    ]

    short = fused([lexical[:FUSED_DEPTH], dense[:FUSED_DEPTH]], 5)
    long = fused([lexical, dense], 5)

    assert names(short) == names(long) == ["near", "deep", "d0", "l0", "d1"]
    assert [score for _, score in short] == [score for _, score in long]


def test_a_dense_weight_below_one_lets_the_lexical_first_lead_a_point_both_lists_rank_second() -> None:
    lexical = [point("x", 9.0), point("both", 5.0)]
    dense = [point("y", 0.9), point("both", 0.8)]

    assert names(candidates([lexical, dense], 3))[0] == "both"  # 1/3 + 1/3 > 1/2
    assert names(candidates([lexical, dense], 3, dense_weight=0.5)) == ["x", "both", "y"]  # 1/2 > 1/3 + 1/6


def test_the_dense_weight_is_the_models_unless_set() -> None:
    assert EmbeddingSettings().fusion_weight == 1.0  # the MiniLM distillation, measured best at 1.0
    code_tokens = EmbeddingSettings(embedded_model=CODE_TOKENS_MODEL)
    assert code_tokens.fusion_weight == EMBEDDED_DENSE_WEIGHTS[CODE_TOKENS_MODEL] == 0.5
    assert EmbeddingSettings(base_url="http://m/v1").fusion_weight == 1.0
    assert EmbeddingSettings(base_url="http://m/v1", dense_weight=0.7).fusion_weight == 0.7
