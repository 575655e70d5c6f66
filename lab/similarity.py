"""Similarity benchmarks, static vs contextual: STS-B pairs, WiC word senses, polysemy.

Every static method takes part (the token table, GloVe, Word2Vec, FastText, Model2Vec);
Word2Vec and FastText are trained on the sentences being evaluated (labels unused).
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import rankdata, spearmanr

from indexer.encoders.base import Encoder
from indexer.encoders.loading import LoadedModel
from indexer.encoders.transformer import ContextualEncoder
from indexer.errors import InvalidQuery
from lab.datasets import SentencePair, WordInContext
from lab.encoders.static_methods import (
    STATIC_METHODS,
    missing_note,
    missing_packages,
    require_packages,
    static_encoder,
)
from lab.evaluation import static_models_dir
from lab.word_vectors import (
    contextual_word_vectors,
    find_word,
    static_word_vectors,
    word_at,
    word_report,
)

SIMILARITY_METHODS = (*STATIC_METHODS, "contextual")


def choose_methods(
    requested: Sequence[str] | None, offered: Sequence[str] = SIMILARITY_METHODS
) -> tuple[list[str], list[str]]:
    """The methods to run and those left out for want of a package.

    Named methods must exist and have their packages (MissingDependency otherwise); with
    none named, every offered method runs whose packages are installed.
    """
    if requested:
        unknown = [m for m in requested if m not in offered]
        if unknown:
            raise InvalidQuery(
                f"unknown method(s) {', '.join(unknown)}: choose from {', '.join(offered)}"
            )
        require_packages(requested)
        return list(dict.fromkeys(requested)), []
    left_out = [m for m in offered if m in STATIC_METHODS and missing_packages(m)]
    return [m for m in offered if m not in left_out], left_out


def _left_out(left_out: list[str]) -> dict[str, Any]:
    return {"left_out": left_out, "note": missing_note(left_out)} if left_out else {}


def static_encoders(
    loaded: LoadedModel, methods: Sequence[str], corpus: list[str], work_dir: Path | None
) -> dict[str, Encoder]:
    """The encoder of each static method among `methods` (word2vec/fasttext trained on corpus)."""
    cache = static_models_dir(work_dir)
    return {
        method: static_encoder(method, loaded, cache, corpus=corpus)
        for method in methods
        if method in STATIC_METHODS
    }


def sts_correlation(
    loaded: LoadedModel,
    pairs: list[SentencePair],
    methods: Sequence[str] | None = None,
    work_dir: Path | None = None,
    corpus: list[str] | None = None,
) -> dict[str, Any]:
    """Spearman correlation of cosine similarity with the gold scores, per method.

    Word2Vec and FastText are trained on `corpus` (default: the pairs' own sentences).
    """
    chosen, left_out = choose_methods(methods)
    corpus = corpus or [sentence for pair in pairs for sentence in (pair.first, pair.second)]
    encoders: dict[str, Encoder] = static_encoders(loaded, chosen, corpus, work_dir)
    if "contextual" in chosen:
        encoders["contextual"] = ContextualEncoder(loaded)
    gold = [pair.gold for pair in pairs]
    results: dict[str, Any] = {"pairs": len(pairs), "corpus_sentences": len(corpus)}
    for name in chosen:
        first = encoders[name].encode([pair.first for pair in pairs])
        second = encoders[name].encode([pair.second for pair in pairs])
        cosines = (first * second).sum(axis=1)
        results[name] = round(float(spearmanr(cosines, gold).statistic), 4)
    return {**results, **_left_out(left_out)}


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


def wic_cosines(
    loaded: LoadedModel,
    items: list[WordInContext],
    encoders: dict[str, Encoder] | None = None,
    contextual: bool = True,
) -> dict[str, np.ndarray]:
    """Cosine of the target word's two vectors, per item: each static method, every layer.

    A static method's vector of the target word is the same in both sentences, so its
    cosine is 1 (or 0 when the method has no vector for the word).
    """
    if encoders is None:
        encoders = {"static": static_encoder("static", loaded, static_models_dir())}
    cosines: dict[str, np.ndarray] = {}
    for name, encoder in encoders.items():
        targets = [item.word for item in items]
        first = static_word_vectors(encoder, targets)
        second = static_word_vectors(encoder, targets)
        cosines[name] = (first * second).sum(axis=1)
    if contextual:
        first_words = [word_at(item.first, item.first_index) for item in items]
        second_words = [word_at(item.second, item.second_index) for item in items]
        per_layer = (
            contextual_word_vectors(loaded, first_words)
            * contextual_word_vectors(loaded, second_words)
        ).sum(axis=2)
        cosines["contextual"] = per_layer[-1]
        cosines |= {f"layer-{layer}": values for layer, values in enumerate(per_layer)}
    # Rounded so that float32 noise (0.99999994 vs 1.0000001) does not rank equal values.
    return {name: np.round(values, 6) for name, values in cosines.items()}


def wic_evaluation(
    loaded: LoadedModel,
    train: list[WordInContext],
    evaluated: list[WordInContext],
    methods: Sequence[str] | None = None,
    work_dir: Path | None = None,
) -> dict[str, Any]:
    """AUC on the evaluated split, and accuracy with the threshold fitted on train.

    Word2Vec and FastText are trained on the sentences of both splits (labels unused).
    """
    chosen, left_out = choose_methods(methods)
    sentences = (sentence for item in train + evaluated for sentence in (item.first, item.second))
    corpus = list(dict.fromkeys(sentences))
    encoders = static_encoders(loaded, chosen, corpus, work_dir)
    contextual = "contextual" in chosen
    train_cosines = wic_cosines(loaded, train, encoders, contextual)
    eval_cosines = wic_cosines(loaded, evaluated, encoders, contextual)
    train_gold = np.array([item.same_sense for item in train])
    eval_gold = np.array([item.same_sense for item in evaluated])
    results = {}
    for name, values in eval_cosines.items():
        threshold = best_threshold(train_cosines[name], train_gold)
        results[name] = {
            "auc": round(roc_auc(values, eval_gold), 4),
            "accuracy": round(float(((values >= threshold) == eval_gold).mean()), 4),
            "threshold": round(threshold, 4),
            "mean_cosine": round(float(values.mean()), 4),
        }
    return {
        "train_items": len(train),
        "items": len(evaluated),
        "methods": results,
        **_left_out(left_out),
    }


def bundled_sentences() -> list[str]:
    """The 424 sentences shipped with ctxsearch (from the sample corpus), one per line."""
    text = resources.files("lab").joinpath("sentences.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


def polysemy_matrices(
    loaded: LoadedModel,
    word: str,
    sentences: list[str],
    methods: Sequence[str] | None = None,
    work_dir: Path | None = None,
    corpus: list[str] | None = None,
) -> dict[str, Any]:
    """Cosine matrices of `word` across the sentences: each static method and contextual.

    Word2Vec and FastText are trained on the sentences plus `corpus` (default: the
    sentences bundled with ctxsearch). A method with no vector for the word in a sentence
    gets None in that row and column.
    """
    chosen, left_out = choose_methods(methods)
    occurrences = [find_word(word, sentence) for sentence in sentences]
    surface = [s.sentence[s.start : s.end] for s in occurrences]
    training = [*sentences, *(corpus if corpus is not None else bundled_sentences())]
    encoders = static_encoders(loaded, chosen, training, work_dir)
    result: dict[str, Any] = {"word": word, "sentences": sentences, "methods": chosen}
    for name in chosen:
        if name == "contextual":
            vectors = contextual_word_vectors(loaded, occurrences)[-1]
            result[name] = _cosine_matrix(vectors, [True] * len(sentences))
            continue
        encoder = encoders[name]
        known = [encoder.word_vector(form) is not None for form in surface]  # type: ignore[attr-defined]
        result[name] = _cosine_matrix(static_word_vectors(encoder, surface), known)
    result["vocabulary"] = {
        name: {form: word_report(encoder, form, count=3) for form in dict.fromkeys(surface)}
        for name, encoder in encoders.items()
        if hasattr(encoder, "in_vocabulary")
    }
    result["training_sentences"] = len(training)
    return {**result, **_left_out(left_out)}


def _cosine_matrix(vectors: np.ndarray, known: list[bool]) -> list[list[float | None]]:
    matrix = np.round(vectors @ vectors.T, 4).tolist()
    return [
        [value if known[row] and known[column] else None for column, value in enumerate(values)]
        for row, values in enumerate(matrix)
    ]


def word_neighbours(
    words: list[str],
    corpus: list[str],
    methods: Sequence[str] | None = None,
    work_dir: Path | None = None,
    count: int = 5,
) -> dict[str, Any]:
    """Per word and word-level method: a vector of its own, or built from n-grams; neighbours."""
    offered = ("glove", "word2vec", "fasttext")
    chosen, left_out = choose_methods(methods, offered)
    # Word-level methods need no transformer: nothing loads the model here.
    encoders = static_encoders(None, chosen, corpus, work_dir)  # type: ignore[arg-type]
    return {
        "corpus_texts": len(corpus),
        "words": {
            word: {name: word_report(encoder, word, count) for name, encoder in encoders.items()}
            for word in words
        },
        "training": {name: getattr(encoder, "info", None) for name, encoder in encoders.items()},
        **_left_out(left_out),
    }
