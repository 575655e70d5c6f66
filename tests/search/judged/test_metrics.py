"""Retrieval metrics against rankings worked out by hand."""

import math

import pytest

from search.judged.metrics import (
    average_precision_at,
    mean_metrics,
    ndcg_at,
    ranked,
    recall_at,
    reciprocal_rank_at,
)

LOG2 = math.log2


def test_ranking_sorts_by_score_then_id_descending_like_trec_eval():
    assert ranked({"a": 0.5, "b": 0.9, "c": 0.5, "d": 0.1}) == ["b", "c", "a", "d"]


def test_ndcg_binary():
    # relevant at ranks 1 and 3 of 2 relevant: DCG = 1 + 1/log2(4); IDCG = 1 + 1/log2(3)
    value = ndcg_at(["r1", "x", "r2", "y"], {"r1": 1, "r2": 1}, 10)
    assert value == pytest.approx((1 + 1 / LOG2(4)) / (1 + 1 / LOG2(3)))


def test_ndcg_graded_uses_grades_as_gains():
    judged = {"a": 2, "b": 1}
    # b (gain 1) first, a (gain 2) second: DCG = 1 + 2/log2(3); IDCG = 2 + 1/log2(3)
    assert ndcg_at(["b", "a"], judged, 10) == pytest.approx((1 + 2 / LOG2(3)) / (2 + 1 / LOG2(3)))
    assert ndcg_at(["a", "b"], judged, 10) == pytest.approx(1.0)


def test_ndcg_cut_ignores_results_past_k_but_ideal_counts_all_relevant():
    judged = {"a": 1, "b": 1, "c": 1}
    # only "a" within k=2; ideal has two relevant within k=2
    assert ndcg_at(["a", "x", "b", "c"], judged, 2) == pytest.approx(1 / (1 + 1 / LOG2(3)))


def test_zero_and_negative_grades_are_not_relevant():
    judged = {"a": 0, "b": -1, "c": 1}
    assert ndcg_at(["a", "b", "c"], judged, 10) == pytest.approx(1 / LOG2(4))
    assert reciprocal_rank_at(["a", "b", "c"], judged, 10) == pytest.approx(1 / 3)
    assert recall_at(["a", "b"], judged, 10) == 0.0


def test_reciprocal_rank_within_cut():
    judged = {"r": 1}
    assert reciprocal_rank_at(["x", "r"], judged, 10) == 0.5
    assert reciprocal_rank_at(["x"] * 10 + ["r"], judged, 10) == 0.0


def test_recall_and_average_precision():
    judged = {"a": 1, "b": 2, "c": 1, "d": 1}
    ranking = ["a", "x", "b", "y", "c"]
    assert recall_at(ranking, judged, 100) == pytest.approx(3 / 4)
    # precision at the hits: 1/1, 2/3, 3/5; divided by the 4 relevant documents
    assert average_precision_at(ranking, judged, 100) == pytest.approx((1 + 2 / 3 + 3 / 5) / 4)
    assert average_precision_at(ranking, judged, 2) == pytest.approx(1 / 4)


def test_no_relevant_document_retrieved_scores_zero_everywhere():
    run = {"q1": {"x": 0.9, "y": 0.8}}
    qrels = {"q1": {"r": 1}}
    assert mean_metrics(run, qrels) == {
        "ndcg@10": 0.0,
        "mrr@10": 0.0,
        "recall@100": 0.0,
        "map@100": 0.0,
    }


def test_mean_over_judged_queries_only_and_missing_runs_count_as_zero():
    run = {"q1": {"r": 1.0}, "q3": {"r": 1.0}}
    qrels = {"q1": {"r": 1}, "q2": {"r": 1}, "q4": {"r": 0}}
    means = mean_metrics(run, qrels)  # q1 perfect, q2 not retrieved, q4 has no relevant doc
    assert means["ndcg@10"] == pytest.approx(0.5)
    assert means["mrr@10"] == pytest.approx(0.5)
