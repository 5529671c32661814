"""The fusion math: RRF, the per-query normalisations, the query's weight, replies."""

from __future__ import annotations

import math

import pytest

from ducklm.memory.fusion import (
    NAMING_WEIGHT,
    RRF_K,
    VECTOR_WEIGHT,
    convex,
    follow_replies,
    fuse,
    min_max,
    query_vector_weight,
    rrf,
    z_score,
)


def test_rrf_with_equal_weights_is_the_textbook_sum() -> None:
    fused = {f.id: f.score for f in rrf(["a", "b"], ["b", "c"])}
    assert fused["b"] == pytest.approx(1 / (RRF_K + 2) + 1 / (RRF_K + 1))
    assert fused["a"] == pytest.approx(1 / (RRF_K + 1))
    assert fused["c"] == pytest.approx(1 / (RRF_K + 2))


def test_rrf_ranks_what_both_sides_found_first_and_breaks_ties_by_id() -> None:
    assert [f.id for f in rrf(["x", "both"], ["y", "both"])] == ["both", "x", "y"]


def test_an_rrf_weight_favours_its_side() -> None:
    assert [f.id for f in rrf(["v"], ["k"], weight=0.8)] == ["v", "k"]
    assert [f.id for f in rrf(["v"], ["k"], weight=0.2)] == ["k", "v"]


def test_fuse_sums_equal_shares_of_both_z_scores_and_keeps_raw_scores() -> None:
    vector = {"a": 0.9, "b": 0.4}
    keyword = {"a": 0.0, "b": 3.0, "c": 6.0}
    fused = {f.id: f for f in fuse(vector, keyword)}
    dense = z_score({"a": 0.9, "b": 0.4, "c": 0.4})  # c: the lowest cosine returned
    sparse = z_score(keyword)
    for d in "abc":
        assert fused[d].score == pytest.approx(0.5 * dense[d] + 0.5 * sparse[d])
    assert (fused["a"].vector_score, fused["a"].keyword_score) == (0.9, None)
    assert (fused["c"].vector_score, fused["c"].keyword_score) == (None, 6.0)


def test_a_strong_match_on_one_side_is_not_lost_to_a_scale() -> None:
    # A BM25 of 40 against cosines under 1: a raw sum would be all keyword; z-scores
    # put the best of each side at the top.
    vector = {"v": 0.95, "n1": 0.3, "n2": 0.31}
    keyword = {"v": 0.0, "n1": 0.0, "n2": 0.0, "k": 40.0}
    assert {f.id for f in fuse(vector, keyword)[:2]} == {"v", "k"}


def test_min_max_maps_onto_zero_to_one() -> None:
    assert min_max({"a": 2.0, "b": 4.0, "c": 3.0}) == {"a": 0.0, "b": 1.0, "c": 0.5}
    assert min_max({"a": 1.0, "b": 1.0}) == {"a": 0.0, "b": 0.0}
    assert min_max({}) == {}


def test_z_score_has_mean_zero_and_unit_spread() -> None:
    z = z_score({"a": 1.0, "b": 2.0, "c": 3.0})
    assert sum(z.values()) == pytest.approx(0.0)
    assert math.sqrt(sum(v * v for v in z.values()) / 3) == pytest.approx(1.0)
    assert z_score({"a": 5.0}) == {"a": 0.0}


def test_convex_caps_keyword_coverage_and_floors_missing_cosines() -> None:
    fused = {f.id: f.score for f in convex({"a": 0.5}, {"a": 0.0, "b": 9.0}, 3.0, weight=0.5)}
    assert fused["a"] == pytest.approx(0.25)
    assert fused["b"] == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)


@pytest.mark.parametrize(
    ("query", "weight"),
    [
        ("how does she feel about her job?", VECTOR_WEIGHT),
        ("When is Aiko's housewarming?", NAMING_WEIGHT),
        ("what happened in 2019", NAMING_WEIGHT),
        ("What did I say about the pond", VECTOR_WEIGHT),  # a capital at the start only
    ],
)
def test_a_query_that_names_things_leans_on_keywords(query: str, weight: float) -> None:
    assert query_vector_weight(query) == weight


def test_follow_replies_puts_the_answer_after_its_question_once() -> None:
    ranked = ["q", "x", "answer", "y"]
    assert follow_replies(ranked, {"q": "answer"}) == ["q", "answer", "x", "y"]
    assert follow_replies(["x"], {}) == ["x"]
