"""The pieces behind sts, wic and polysemy: AUC, thresholds, word spans."""

import numpy as np
import pytest

from indexer.errors import InvalidQuery
from lab.similarity import best_threshold, roc_auc
from lab.word_vectors import find_word, word_at


def test_auc_perfect_inverse_and_ties():
    positive = np.array([True, True, False, False])
    assert roc_auc(np.array([0.9, 0.8, 0.2, 0.1]), positive) == 1.0
    assert roc_auc(np.array([0.1, 0.2, 0.8, 0.9]), positive) == 0.0
    assert roc_auc(np.array([1.0, 1.0, 1.0, 1.0]), positive) == 0.5
    # one of four positive-negative pairs is ordered wrongly
    assert roc_auc(np.array([0.9, 0.3, 0.5, 0.1]), positive) == pytest.approx(0.75)


def test_best_threshold_maximises_accuracy():
    scores = np.array([0.1, 0.2, 0.6, 0.7, 0.65])
    positive = np.array([False, False, True, True, True])
    cut = best_threshold(scores, positive)
    assert ((scores >= cut) == positive).all()


def test_word_positions():
    occurrence = word_at("Room and board .", 2)
    assert occurrence.sentence[occurrence.start : occurrence.end] == "board"
    found = find_word("bank", "Two Banks merged.")
    assert found.sentence[found.start : found.end] == "Banks"
    with pytest.raises(InvalidQuery):
        find_word("bank", "no such word here")
    with pytest.raises(InvalidQuery):
        word_at("short", 3)
