"""The fusion families the lab measured beside the product's, against lists computed by hand."""

import math

import pytest

from lab.fusion_variants import (
    dbsf_fusion,
    distribution_scores,
    linear_fusion,
    min_max,
    reciprocal_rank_fusion,
    weighted_rrf,
)

# dense: mean 2, sd 1; lexical: mean 2, sd sqrt(8/3), so its z-scores are +-sqrt(1.5).
DENSE = [(1, 3.0), (2, 1.0)]
LEXICAL = [(2, 4.0), (3, 2.0), (4, 0.0)]
Z = math.sqrt(1.5)


def test_rrf_sums_reciprocal_ranks():
    fused = dict(
        reciprocal_rank_fusion({"a": [(1, 0.9), (2, 0.8)], "b": [(2, 5.0), (3, 4.0)]}, k=10)
    )
    assert fused[2] == pytest.approx(1 / 12 + 1 / 11)
    assert fused[1] == pytest.approx(1 / 11)
    assert fused[3] == pytest.approx(1 / 12)
    assert [item for item, _ in reciprocal_rank_fusion({"a": [(1, 0)], "b": [(2, 0)]}, 10)] == [
        1,
        2,
    ]


def test_weighted_rrf_weights_each_side():
    fused = dict(weighted_rrf(DENSE, LEXICAL, dense_weight=0.75, k=1))
    assert fused[1] == pytest.approx(0.75 / 2)
    assert fused[2] == pytest.approx(0.75 / 3 + 0.25 / 2)
    assert fused[3] == pytest.approx(0.25 / 3)
    assert fused[4] == pytest.approx(0.25 / 4)


def test_linear_fusion_normalises_each_list():
    dense = [(1, 0.9), (2, 0.5), (3, 0.1)]
    lexical = [(3, 30.0), (2, 20.0), (4, 10.0)]
    fused = dict(linear_fusion(dense, lexical, dense_weight=0.5))
    assert fused[1] == pytest.approx(0.5)
    assert fused[2] == pytest.approx(0.5 * 0.5 + 0.5 * 0.5)
    assert fused[3] == pytest.approx(0.5)
    assert fused[4] == pytest.approx(0.0)
    assert dict(linear_fusion(dense, [], 0.5))[1] == pytest.approx(0.5)
    assert linear_fusion([], [], 0.5) == []


def test_dbsf_fusion_by_hand():
    scores = dict(dbsf_fusion(DENSE, LEXICAL, dense_weight=0.25))
    assert scores[1] == pytest.approx(0.25 * 4 / 6 + 0.75 * (3 - Z) / 6)
    assert scores[3] == pytest.approx(0.25 * 2 / 6 + 0.75 * 3 / 6)


def test_normalisers_by_hand():
    assert min_max(LEXICAL) == [(2, 1.0), (3, 0.5), (4, 0.0)]
    assert distribution_scores(DENSE) == [(1, pytest.approx(4 / 6)), (2, pytest.approx(2 / 6))]
    far = [(1, 100.0)] + [(i, 0.0) for i in range(2, 12)]  # z of the first is sqrt(10) > 3
    assert distribution_scores(far)[0] == (1, 1.0)
    assert min_max([]) == distribution_scores([]) == []
