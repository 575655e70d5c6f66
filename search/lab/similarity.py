"""Similarity benchmarks, static vs contextual: STS-B pairs, WiC word senses, polysemy."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import rankdata, spearmanr

from indexer.encoders.loading import LoadedModel
from indexer.encoders.static import StaticEncoder
from indexer.encoders.transformer import ContextualEncoder
from search.lab.datasets import SentencePair, WordInContext
from search.lab.word_vectors import (
    contextual_word_vectors,
    find_word,
    static_word_vectors,
    word_at,
)


def sts_correlation(loaded: LoadedModel, pairs: list[SentencePair]) -> dict[str, Any]:
    """Spearman correlation of cosine similarity with the gold scores, per encoder."""
    gold = [pair.gold for pair in pairs]
    results: dict[str, Any] = {"pairs": len(pairs)}
    for name, encoder in (
        ("static", StaticEncoder(loaded)),
        ("contextual", ContextualEncoder(loaded)),
    ):
        first = encoder.encode([pair.first for pair in pairs])
        second = encoder.encode([pair.second for pair in pairs])
        cosines = (first * second).sum(axis=1)
        results[name] = round(float(spearmanr(cosines, gold).statistic), 4)
    return results


def roc_auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """Area under the ROC curve (Mann-Whitney, ties counted half)."""
    ranks = rankdata(scores)
    positives = int(positive.sum())
    negatives = len(positive) - positives
    if positives == 0 or negatives == 0:
        return 0.5
    return float(
        (ranks[positive].sum() - positives * (positives + 1) / 2) / (positives * negatives)
    )


def best_threshold(scores: np.ndarray, positive: np.ndarray) -> float:
    """The cut (predict positive when score >= cut) with the best accuracy on these scores."""
    candidates = np.unique(scores)
    cuts = np.concatenate([candidates, [candidates[-1] + 1.0]])
    accuracies = [((scores >= cut) == positive).mean() for cut in cuts]
    return float(cuts[int(np.argmax(accuracies))])


def wic_cosines(loaded: LoadedModel, items: list[WordInContext]) -> dict[str, np.ndarray]:
    """Cosine of the target word's two vectors, per item: static and every layer."""
    first = [word_at(item.first, item.first_index) for item in items]
    second = [word_at(item.second, item.second_index) for item in items]
    context_first = contextual_word_vectors(loaded, first)
    context_second = contextual_word_vectors(loaded, second)
    per_layer = (context_first * context_second).sum(axis=2)
    # The static vector of the target word is the same row in both sentences.
    static = static_word_vectors(loaded, [item.word for item in items])
    cosines = {"static": (static * static).sum(axis=1), "contextual": per_layer[-1]}
    cosines |= {f"layer-{layer}": values for layer, values in enumerate(per_layer)}
    # Rounded so that float32 noise (0.99999994 vs 1.0000001) does not rank equal values.
    return {name: np.round(values, 6) for name, values in cosines.items()}


def wic_evaluation(
    loaded: LoadedModel, train: list[WordInContext], evaluated: list[WordInContext]
) -> dict[str, Any]:
    """AUC on the evaluated split, and accuracy with the threshold fitted on train."""
    train_cosines = wic_cosines(loaded, train)
    eval_cosines = wic_cosines(loaded, evaluated)
    train_gold = np.array([item.same_sense for item in train])
    eval_gold = np.array([item.same_sense for item in evaluated])
    methods = {}
    for name, values in eval_cosines.items():
        threshold = best_threshold(train_cosines[name], train_gold)
        methods[name] = {
            "auc": round(roc_auc(values, eval_gold), 4),
            "accuracy": round(float(((values >= threshold) == eval_gold).mean()), 4),
            "threshold": round(threshold, 4),
            "mean_cosine": round(float(values.mean()), 4),
        }
    return {"train_items": len(train), "items": len(evaluated), "methods": methods}


def polysemy_matrices(loaded: LoadedModel, word: str, sentences: list[str]) -> dict[str, Any]:
    """Cosine matrices of `word` across the sentences: static next to contextual."""
    occurrences = [find_word(word, sentence) for sentence in sentences]
    surface = [s.sentence[s.start : s.end] for s in occurrences]
    static = static_word_vectors(loaded, surface)
    contextual = contextual_word_vectors(loaded, occurrences)[-1]
    return {
        "word": word,
        "sentences": sentences,
        "static": np.round(static @ static.T, 4).tolist(),
        "contextual": np.round(contextual @ contextual.T, 4).tolist(),
    }
