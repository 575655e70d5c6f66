"""Reciprocal rank fusion and normalised linear fusion, by hand."""

import pytest

from search.fusion import linear_fusion, reciprocal_rank_fusion


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
