"""The product's fusion functions against lists computed by hand (the lab's other
families: tests/lab/test_fusion_variants.py)."""

import math
import random

import pytest

from search.fusion import (
    FUSION_DEPTH,
    adaptive_fusion,
    adaptive_weight,
    hybrid_fusion,
    peak,
    z_scores,
    zscore_fusion,
)

# dense: mean 2, sd 1; lexical: mean 2, sd sqrt(8/3), so its z-scores are +-sqrt(1.5).
DENSE = [(1, 3.0), (2, 1.0)]
LEXICAL = [(2, 4.0), (3, 2.0), (4, 0.0)]
Z = math.sqrt(1.5)


def test_normalisers_by_hand():
    assert z_scores(DENSE) == [(1, pytest.approx(1.0)), (2, pytest.approx(-1.0))]
    assert z_scores(LEXICAL) == [(2, pytest.approx(Z)), (3, 0.0), (4, pytest.approx(-Z))]
    assert z_scores([(7, 2.0), (8, 2.0)]) == [(7, 0.0), (8, 0.0)]
    assert z_scores([]) == []


def test_zscore_fusion_gives_missing_ids_the_lowest_score_of_the_list():
    fused = zscore_fusion(DENSE, LEXICAL, dense_weight=0.5)
    assert [item for item, _ in fused] == [2, 1, 3, 4]
    scores = dict(fused)
    assert scores[2] == pytest.approx(0.5 * -1.0 + 0.5 * Z)
    assert scores[1] == pytest.approx(0.5 * 1.0 + 0.5 * -Z)
    assert scores[3] == pytest.approx(0.5 * -1.0 + 0.5 * 0.0)
    assert scores[4] == pytest.approx(0.5 * -1.0 + 0.5 * -Z)


def test_a_list_without_spread_still_puts_its_ids_first():
    fused = dict(zscore_fusion([(5, 0.7)], LEXICAL, dense_weight=0.5))
    assert fused[5] == pytest.approx(0.5 * 0.0 + 0.5 * -Z)
    assert fused[2] == pytest.approx(0.5 * -1.0 + 0.5 * Z)


def test_peak_and_adaptive_weight_from_peaks():
    assert peak(DENSE) == pytest.approx(1.0)
    assert peak(LEXICAL) == pytest.approx(Z)
    assert peak([(1, 5.0)]) == 0.0 and peak([]) == 0.0
    no_band = {"cosine_low": None, "cosine_high": None}
    assert adaptive_weight(DENSE, LEXICAL, 1.0, **no_band) == pytest.approx(1 / (1 + Z))
    assert adaptive_weight(DENSE, LEXICAL, 2.0, **no_band) == pytest.approx(1 / (1 + 1.5))
    assert adaptive_weight(DENSE, LEXICAL, 0.5, **no_band) == pytest.approx(1 / (1 + Z**0.5))
    assert adaptive_weight(DENSE, [], **no_band) == pytest.approx(1.0)
    assert adaptive_weight([], LEXICAL, **no_band) == pytest.approx(0.0)
    assert adaptive_weight([], []) == 0.5


def test_adaptive_weight_rises_to_one_across_the_cosine_band():
    share = 1 / (1 + Z)  # sharpness 1: dense peak 1, lexical peak sqrt(1.5)
    band = {"sharpness": 1.0, "cosine_low": 0.6, "cosine_high": 0.9}
    below = [(1, 0.55), (2, 0.35)]
    middle = [(1, 0.75), (2, 0.55)]
    above = [(1, 0.95), (2, 0.75)]
    assert adaptive_weight(below, LEXICAL, **band) == pytest.approx(share)
    assert adaptive_weight(middle, LEXICAL, **band) == pytest.approx(share + (1 - share) * 0.5)
    assert adaptive_weight(above, LEXICAL, **band) == pytest.approx(1.0)


def test_adaptive_fusion_is_zscore_fusion_at_the_adaptive_weight():
    middle = [(1, 0.75), (2, 0.55)]
    weight = adaptive_weight(middle, LEXICAL)
    assert 0 < weight < 1
    assert adaptive_fusion(middle, LEXICAL) == zscore_fusion(middle, LEXICAL, weight)
    assert adaptive_fusion(middle, LEXICAL, dense_weight=0.3) == zscore_fusion(middle, LEXICAL, 0.3)


def test_hybrid_fusion_is_adaptive_unless_given_a_weight():
    middle = [(1, 0.75), (2, 0.55)]
    assert hybrid_fusion(middle, LEXICAL) == adaptive_fusion(middle, LEXICAL)
    assert hybrid_fusion(middle, LEXICAL, 0.25) == zscore_fusion(middle, LEXICAL, 0.25)
    only_dense = hybrid_fusion(DENSE, LEXICAL, dense_weight=1.0)
    assert [item for item, _ in only_dense][:2] == [1, 2]
    only_lexical = hybrid_fusion(DENSE, LEXICAL, dense_weight=0.0)
    assert [item for item, _ in only_lexical][:2] == [2, 3]


def test_completed_fusion_gives_missing_ids_their_exact_score_on_that_side():
    # 3 and 4 are missing from DENSE: their cosines are looked up (1.5, and 4 none);
    # 1 is missing from LEXICAL: its BM25 is 1.0 (below the list, as beyond its depth).
    scores = dict(zscore_fusion(DENSE, LEXICAL, 0.5, {3: 1.5}, {1: 1.0}))
    lexical_z = (1.0 - 2.0) / math.sqrt(8 / 3)
    assert scores[1] == pytest.approx(0.5 * 1.0 + 0.5 * lexical_z)
    assert scores[3] == pytest.approx(0.5 * -0.5 + 0.5 * 0.0)
    # 4 has no cosine given: it takes the lowest dense score of any candidate (3's 1.5
    # is above the list's own lowest, 1.0)
    assert scores[4] == pytest.approx(0.5 * -1.0 + 0.5 * -Z)


def test_a_candidate_without_a_query_term_never_scores_above_a_lexical_match():
    # 1 holds no query term (no BM25 given); 5 and 6 hold one, weakly (BM25 below the
    # list's, as beyond its depth): 1 takes the lowest lexical score of any candidate.
    dense = [(1, 0.9), (5, 0.9), (6, 0.9), (2, 0.6)]
    lexical = [(2, 4.0), (3, 2.0)]
    fused = dict(zscore_fusion(dense, lexical, 0.5, {3: 0.1}, {5: 0.5, 6: 1.0}))
    assert fused[6] > fused[5] == pytest.approx(fused[1])


def test_exact_scores_only_fill_in_missing_ids_and_never_move_listed_ones():
    plain = zscore_fusion(DENSE, LEXICAL, 0.5)
    given_again = zscore_fusion(DENSE, LEXICAL, 0.5, dict(DENSE) | {9: 7.0}, dict(LEXICAL))
    assert given_again == plain  # scores of listed ids (and of non-candidates) are ignored


def test_hybrid_fusion_passes_exact_scores_through():
    assert hybrid_fusion(DENSE, LEXICAL, 0.5, {3: 1.5}, {1: 1.0}) == zscore_fusion(
        DENSE, LEXICAL, 0.5, {3: 1.5}, {1: 1.0}
    )


def test_a_question_moves_the_dense_share_towards_one():
    share = 1 / (1 + Z)  # sharpness 1: dense peak 1, lexical peak sqrt(1.5)
    plain = {"sharpness": 1.0, "cosine_low": None, "cosine_high": None}
    assert adaptive_weight(DENSE, LEXICAL, **plain) == pytest.approx(share)
    asked = adaptive_weight(DENSE, LEXICAL, **plain, question=True, question_share=0.7)
    assert asked == pytest.approx(share + (1 - share) * 0.7)
    # after the cosine band: each moves part of what is left of the way to 1
    band = {"sharpness": 1.0, "cosine_low": 0.6, "cosine_high": 0.9}
    middle = [(1, 0.75), (2, 0.55)]
    banded = share + (1 - share) * 0.5
    both = adaptive_weight(middle, LEXICAL, **band, question=True, question_share=0.7)
    assert both == pytest.approx(banded + (1 - banded) * 0.7)


def test_hybrid_fusion_weighs_a_question_towards_the_dense_side():
    keywords = hybrid_fusion(DENSE, LEXICAL, query="nested list copy")
    question = hybrid_fusion(DENSE, LEXICAL, query="how do I copy a nested list?")
    weight = adaptive_weight(DENSE, LEXICAL, question=True)
    assert question == zscore_fusion(DENSE, LEXICAL, weight)
    assert keywords == zscore_fusion(DENSE, LEXICAL, adaptive_weight(DENSE, LEXICAL))
    # a fixed weight is the user's: the query's form does not move it
    assert hybrid_fusion(DENSE, LEXICAL, 0.3, query="why?") == zscore_fusion(DENSE, LEXICAL, 0.3)


def test_a_deeper_search_extends_the_ranking_without_reordering_its_top():
    # every id has an exact score on both sides; searching 300 deep instead of
    # FUSION_DEPTH (as search does when it needs more hits) keeps every score
    rng = random.Random(7)
    cosines = {item: rng.uniform(0.1, 0.9) for item in range(400)}
    bm25 = {item: rng.uniform(0.5, 20.0) for item in range(400)}
    dense = sorted(cosines.items(), key=lambda pair: -pair[1])
    lexical = sorted(bm25.items(), key=lambda pair: -pair[1])
    short = hybrid_fusion(dense[:FUSION_DEPTH], lexical[:FUSION_DEPTH], None, cosines, bm25)
    deep = dict(hybrid_fusion(dense[:300], lexical[:300], None, cosines, bm25))
    assert all(deep[item] == pytest.approx(score) for item, score in short)


def test_scores_that_differ_by_rounding_only_are_ties_not_a_spread():
    """Two copies of one text, one encoded in bf16 and one in fp32, score a hair apart:
    standardised, the hair was a whole deviation, and the hybrid score of the only
    distinct hit jumped from 0 to 1 against an index of fp32 copies (the oracle
    machine's soak, stop 34). Within a thousandth of the scores' size they are ties."""
    exact = zscore_fusion([(1, 0.999985), (2, 0.999985)], [(1, 2e-06)])
    rounded = zscore_fusion([(1, 0.999985), (2, 0.99962)], [(1, 2e-06)])
    assert dict(rounded) == pytest.approx(dict(exact))
    assert adaptive_weight([(1, 0.999985), (2, 0.99962)], [(1, 2e-06)], cosine_high=None) == 0.5
    spread = zscore_fusion([(1, 0.9), (2, 0.5)], [(1, 2e-06)])
    assert dict(spread)[1] > dict(spread)[2]
