"""Word-level intrinsic evaluation of every word-vector method: analogies and word pairs.

One shared word list serves every method: GloVe 6B's `vocabulary` most frequent words
(30,000 by default, the restriction gensim's users apply to analogies), plus any word of
the test sets beyond them. Analogy answers are searched among the list's first
`vocabulary` words that the method has a vector for, and a question counts when its
four words are among those (coverage says how many do). `unrestricted` also answers,
for the methods that have a vocabulary of words (GloVe, Word2Vec, FastText), among all
their words, as gensim does with `restrict_vocab` set to the vocabulary's size.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from indexer.encoders.loading import LoadedModel, load_model
from indexer.errors import InvalidQuery
from lab.corpus_vectors import PER_WORD
from lab.encoders.static_methods import (
    STATIC_METHODS,
    missing_note,
    require_packages,
    static_encoder,
)
from lab.evaluation import static_models_dir
from lab.similarity import choose_methods
from lab.word_metrics import WordTable, analogy_accuracy, pair_correlation
from lab.word_sets import PAIR_SETS, gensim_data, load_analogies, load_pairs
from lab.word_tables import (
    CORPUS_METHOD,
    WORD_VOCABULARY_METHODS,
    corpus_table,
    glove_words,
    isolated_tables,
    multi_token_share,
    static_table,
    vocabulary_table,
)

VOCABULARY = 30_000
WORD_METHODS = (*STATIC_METHODS, "contextual", CORPUS_METHOD)
# GloVe 6B 50d measured with gensim's KeyedVectors (evaluate_word_pairs with its default
# restrict_vocab of 300,000; evaluate_word_analogies at 30,000 and at all 400,000 words).
GLOVE_REFERENCE = {
    "wordsim353": 0.5033,
    "simlex999": 0.2631,
    "analogy": 0.4969,
    "analogy_unrestricted": 0.4622,
}
REFERENCE_TOLERANCE = 0.005
Progress = Callable[[str, int, int], None]


def offered_methods(layer_count: int) -> list[str]:
    """Every method `words` knows, with one `layer-N` per hidden state of the model."""
    return [*WORD_METHODS, *(f"layer-{n}" for n in range(layer_count + 1))]


def evaluate_words(
    methods: Sequence[str] | None = None,
    model: str | None = None,
    corpus: Sequence[str] = (),
    work_dir: Path | None = None,
    vocabulary: int = VOCABULARY,
    analogies: Path | None = None,
    pair_files: dict[str, Path] | None = None,
    unrestricted: bool = False,
    per_word: int = PER_WORD,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Analogy accuracy, WordSim-353 and SimLex-999 Spearman, with coverage, per method.

    Word2Vec and FastText are trained on `corpus` (cached, as the lab trains them), and
    `contextual-corpus` averages each word's contextual vectors over its occurrences there.
    """
    started = time.perf_counter()
    report = progress or (lambda _stage, _done, _total: None)
    if vocabulary < 1:
        raise InvalidQuery(f"the vocabulary must hold at least one word, not {vocabulary}")
    if per_word < 1:
        raise InvalidQuery(f"--per-word must be at least 1, not {per_word}")
    loaded, chosen, left_out = _choose(methods, model)
    require_packages(["glove"])  # GloVe's word list is every method's vocabulary
    needs_corpus = [m for m in chosen if m in ("word2vec", "fasttext", CORPUS_METHOD)]
    if needs_corpus and not corpus:
        raise InvalidQuery(f"{', '.join(needs_corpus)} need a corpus: give --corpus")
    questions = load_analogies(analogies)
    pair_sets = {
        name: load_pairs((pair_files or {}).get(name) or gensim_data(file))
        for name, file in PAIR_SETS.items()
    }
    shared = glove_words(vocabulary)
    extra = [w for q in questions for w in q.words] + [
        w for pairs in pair_sets.values() for pair in pairs for w in (pair.first, pair.second)
    ]
    known = set(shared)
    words = shared + [w for w in dict.fromkeys(extra) if w not in known]

    results: dict[str, dict[str, Any]] = {}
    layers = sorted({_layer(m, loaded) for m in chosen if m == "contextual" or _is_layer(m)})
    isolated: dict[int, WordTable] = {}
    isolated_seconds = 0.0
    if layers:
        report("Words alone through the model", 0, 1)
        begun = time.perf_counter()
        isolated = isolated_tables(loaded, words, layers)
        isolated_seconds = time.perf_counter() - begun
        report("Words alone through the model", 1, 1)
    for method in chosen:
        begun = time.perf_counter()
        details: dict[str, Any] = {"kind": "static" if method in STATIC_METHODS else "contextual"}
        encoder = None
        if method in STATIC_METHODS:
            encoder = static_encoder(
                method,
                loaded,  # type: ignore[arg-type]
                static_models_dir(work_dir),
                corpus=list(corpus),
                progress=lambda done, total, m=method: report(f"Training {m}", done, total),
            )
            table = static_table(method, encoder, words)
            info = getattr(encoder, "info", {})
            setup = info.get("train_seconds", info.get("distil_seconds"))
            if setup is not None:
                details["setup_seconds"] = setup
            details["dim"] = encoder.dim
        elif method == CORPUS_METHOD:
            table, corpus_details = corpus_table(
                loaded,  # type: ignore[arg-type]
                words,
                corpus,
                static_models_dir(work_dir),
                per_word,
                progress=lambda done, total: report("Corpus sentences", done, total),
            )
            details |= corpus_details
        else:
            table = isolated[_layer(method, loaded)]
            details["layer"] = _layer(method, loaded)
            details["setup_seconds"] = round(isolated_seconds, 2)  # shared by every layer
        if method in ("static", "model2vec", "contextual", CORPUS_METHOD) or _is_layer(method):
            details["multi_token_words"] = multi_token_share(loaded, shared)  # type: ignore[arg-type]
        results[method] = {
            **_figures(table, questions, pair_sets, vocabulary),
            **(
                _unrestricted(method, encoder, questions)
                if unrestricted and method in WORD_VOCABULARY_METHODS
                else {}
            ),
            **details,
            "seconds": round(time.perf_counter() - begun, 2),
        }
    return {
        "model": loaded.name if loaded is not None else None,
        "vocabulary": {
            "size": len(shared),
            "source": f"GloVe 6B's {len(shared):,} most frequent words",
            "words": len(words),
        },
        "questions": len(questions),
        "pairs": {name: len(pairs) for name, pairs in pair_sets.items()},
        "corpus": {"texts": len(corpus)},
        "per_word": per_word,
        "methods": results,
        **({"reference": glove_reference(results["glove"])} if "glove" in results else {}),
        "wall_seconds": round(time.perf_counter() - started, 2),
        **({"left_out": left_out, "note": missing_note(left_out)} if left_out else {}),
    }


def glove_reference(glove: dict[str, Any]) -> dict[str, Any]:
    """GloVe's figures here beside those measured with gensim, and whether they agree."""
    measured = {name: glove.get(name) for name in GLOVE_REFERENCE}
    checked = {name: value for name, value in measured.items() if value is not None}
    return {
        "expected": GLOVE_REFERENCE,
        "measured": measured,
        "tolerance": REFERENCE_TOLERANCE,
        "reproduced": all(
            abs(value - GLOVE_REFERENCE[name]) <= REFERENCE_TOLERANCE
            for name, value in checked.items()
        ),
    }


def _choose(
    methods: Sequence[str] | None, model: str | None
) -> tuple[LoadedModel | None, list[str], list[str]]:
    """The model (only if a method needs it), the methods to run, those left out."""
    requested = list(methods or [])
    if "layers" in requested or any(_is_layer(m) for m in requested):
        loaded = load_model(model)
        offered = offered_methods(loaded.layer_count)
        every_layer = [m for m in offered if _is_layer(m)]
        expanded = [name for m in requested for name in (every_layer if m == "layers" else [m])]
        chosen, left_out = choose_methods(expanded, offered)
        return loaded, chosen, left_out
    chosen, left_out = choose_methods(requested or None, WORD_METHODS)
    needs_model = any(m not in WORD_VOCABULARY_METHODS for m in chosen)
    return (load_model(model) if needs_model else None), chosen, left_out


def _is_layer(method: str) -> bool:
    return method.startswith("layer-") and method.removeprefix("layer-").isdigit()


def _layer(method: str, loaded: LoadedModel | None) -> int:
    if method == "contextual":
        return loaded.layer_count  # type: ignore[union-attr]
    return int(method.removeprefix("layer-"))


def _figures(
    table: WordTable,
    questions: Sequence[Any],
    pair_sets: dict[str, Sequence[Any]],
    vocabulary: int,
) -> dict[str, Any]:
    analogy = analogy_accuracy(table, questions, vocabulary)
    figures: dict[str, Any] = {
        "analogy": analogy["accuracy"],
        "analogy_coverage": analogy["coverage"],
        "analogy_answered": analogy["answered"],
        "analogy_candidates": analogy["candidates"],
        "analogy_semantic": analogy["semantic"]["accuracy"],
        "analogy_semantic_coverage": analogy["semantic"]["coverage"],
        "analogy_syntactic": analogy["syntactic"]["accuracy"],
        "analogy_syntactic_coverage": analogy["syntactic"]["coverage"],
        "analogy_sections": analogy["sections"],
    }
    for name, pairs in pair_sets.items():
        correlation = pair_correlation(table, pairs)
        figures[name] = correlation["spearman"]
        figures[f"{name}_coverage"] = correlation["coverage"]
        figures[f"{name}_pairs"] = correlation["pairs"]
    return figures


def _unrestricted(method: str, encoder: Any, questions: Sequence[Any]) -> dict[str, Any]:
    analogy = analogy_accuracy(vocabulary_table(method, encoder), questions)
    return {
        "analogy_unrestricted": analogy["accuracy"],
        "analogy_unrestricted_coverage": analogy["coverage"],
        "analogy_unrestricted_candidates": analogy["candidates"],
    }
