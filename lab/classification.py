"""Extrinsic evaluation: sentence classification by a linear probe on frozen vectors.

Every method turns each text into one vector, as it does for retrieval (`eval`): the
static methods average their word or token vectors (Word2Vec and FastText are trained on
the training split's texts, labels unused), the contextual ones pool the transformer's
hidden states (mean, CLS, max, mean of the last layers, one layer: all from one forward
pass, cached in the work dir), and `tfidf` is the lexical baseline (TF-IDF of words and
word pairs). A logistic regression is then fitted on train, its C chosen on dev, and
scored on test (`lab.probe`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from indexer.config import eval_cache_dir
from indexer.encoders.loading import LoadedModel, load_model
from indexer.errors import InvalidQuery
from lab.classification_data import SPLITS, ClassificationSet, load_classification_set
from lab.encoders.layers import POOLING_METHODS, LayerwiseEncoder
from lab.encoders.static_methods import (
    STATIC_METHODS,
    missing_note,
    require_packages,
    static_encoder,
)
from lab.evaluation import static_models_dir
from lab.probe import C_GRID, probe, require_sklearn
from lab.similarity import choose_methods

LEXICAL_METHOD = "tfidf"
CLASSIFY_METHODS = (*STATIC_METHODS, *POOLING_METHODS, LEXICAL_METHOD)
CACHE_FORMAT = 1
Progress = Callable[[str, int, int], None]


def offered_methods(layer_count: int) -> list[str]:
    """Every method `classify` knows, with one `layer-N` per hidden state of the model."""
    return [*CLASSIFY_METHODS, *(f"layer-{n}" for n in range(layer_count + 1))]


def evaluate_classification(
    folder: Path,
    methods: Sequence[str] | None = None,
    model: str | None = None,
    work_dir: Path | None = None,
    grid: tuple[float, ...] = C_GRID,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Accuracy and macro-F1 on test of a probe per method, C chosen on dev."""
    started = time.perf_counter()
    report = progress or (lambda _stage, _done, _total: None)
    require_sklearn()
    data = load_classification_set(folder)
    loaded = load_model(model)
    offered = offered_methods(loaded.layer_count)
    every_layer = [m for m in offered if m.startswith("layer-")]
    requested = [name for m in methods or [] for name in (every_layer if m == "layers" else [m])]
    chosen, left_out = choose_methods(requested or None, offered if requested else CLASSIFY_METHODS)
    require_packages(chosen)
    labels = {split: np.array(getattr(data, split).labels) for split in SPLITS}
    contextual = [m for m in chosen if m not in STATIC_METHODS and m != LEXICAL_METHOD]
    cache = _VectorCache(data, loaded, Path(work_dir or eval_cache_dir()))
    shared = cache.contextual(contextual, report) if contextual else {}
    results: dict[str, dict[str, Any]] = {}
    for number, method in enumerate(chosen):
        report("Probing", number, len(chosen))
        details: dict[str, Any] = {"kind": _kind(method)}
        if method == LEXICAL_METHOD:
            begun = time.perf_counter()
            features, details["features"] = _tfidf(data)
            details["encode_seconds"] = round(time.perf_counter() - begun, 2)
        elif method in STATIC_METHODS:
            features, static_details = _static(method, data, loaded, work_dir, report)
            details |= static_details
        else:
            features = {split: shared[split][method] for split in SPLITS}
            # One forward pass serves every contextual method: its time is theirs.
            details |= {"dim": loaded.dim, "encode_seconds": cache.seconds}
        scored = probe(*((features[s], labels[s]) for s in SPLITS), grid=grid)
        results[method] = {**scored, **details}
    report("Probing", len(chosen), len(chosen))
    majority = Counter(data.train.labels).most_common(1)[0][0]
    return {
        "dataset": data.name,
        "model": loaded.name,
        "text_column": data.text_column,
        "train": len(data.train),
        "dev": len(data.dev),
        "dev_source": data.dev_source,
        "test": len(data.test),
        "labels": {label: data.train.labels.count(label) for label in data.labels},
        "majority_accuracy": round(float((labels["test"] == majority).mean()), 4),
        "grid": list(grid),
        "cache": str(cache.directory),
        "wall_seconds": round(time.perf_counter() - started, 2),
        "methods": results,
        **({"left_out": left_out, "note": missing_note(left_out)} if left_out else {}),
    }


def _kind(method: str) -> str:
    if method in STATIC_METHODS:
        return "static"
    if method == LEXICAL_METHOD:
        return "lexical"
    return "layer" if method.startswith("layer-") else "pooling"


def _static(
    method: str,
    data: ClassificationSet,
    loaded: LoadedModel,
    work_dir: Path | None,
    report: Progress,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Each split's vectors from a static method, with its one-off setup and encoding time."""
    encoder = static_encoder(
        method,
        loaded,
        static_models_dir(work_dir),
        corpus=data.train.texts,
        progress=lambda done, total: report(f"Training {method}", done, total),
    )
    info = getattr(encoder, "info", {})
    begun = time.perf_counter()
    features = {split: encoder.encode(getattr(data, split).texts) for split in SPLITS}
    details = {
        "dim": encoder.dim,
        "encode_seconds": round(time.perf_counter() - begun, 2),
        "setup_seconds": info.get("train_seconds", info.get("distil_seconds")),
    }
    return features, details


def _tfidf(data: ClassificationSet) -> tuple[dict[str, Any], int]:
    """TF-IDF of words and word pairs seen in at least two training texts (sublinear tf)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    try:
        train = vectorizer.fit_transform(data.train.texts)
    except ValueError:  # every text empty, or no word in two of them
        vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
        try:
            train = vectorizer.fit_transform(data.train.texts)
        except ValueError:
            raise InvalidQuery(f"{data.name}: the training texts hold no words") from None
    features = {
        "train": train,
        "dev": vectorizer.transform(data.dev.texts),
        "test": vectorizer.transform(data.test.texts),
    }
    return features, len(vectorizer.vocabulary_)


class _VectorCache:
    """The contextual vectors of every split, one forward pass, saved per method."""

    def __init__(self, data: ClassificationSet, loaded: LoadedModel, work_dir: Path):
        digest = hashlib.sha256(
            json.dumps([CACHE_FORMAT, loaded.fingerprint, loaded.max_tokens]).encode()
        )
        for split in SPLITS:
            for text in getattr(data, split).texts:
                digest.update(text.encode() + b"\0")
            digest.update(b"\1")
        self.data = data
        self.loaded = loaded
        self.directory = work_dir / f"classify-{data.name}-{digest.hexdigest()[:16]}"
        self.seconds: float | None = None

    def contextual(
        self, methods: Sequence[str], report: Progress
    ) -> dict[str, dict[str, np.ndarray]]:
        """{split: {method: vectors}}, encoded once (all methods from one pass) and cached."""
        paths = {(s, m): self.directory / f"{s}-{m}.npy" for s in SPLITS for m in methods}
        timing = self.directory / "seconds.json"
        if not all(path.exists() for path in paths.values()):
            started = time.perf_counter()
            encoder = LayerwiseEncoder(self.loaded)
            total = sum(len(getattr(self.data, split)) for split in SPLITS)
            done = 0

            def advance(count: int) -> None:
                nonlocal done
                done += count
                report("Encoding", done, total)

            self.directory.mkdir(parents=True, exist_ok=True)
            for split in SPLITS:
                vectors = encoder.encode(getattr(self.data, split).texts, progress=advance)
                for method in methods:
                    _save(paths[(split, method)], vectors[method])
            timing.write_text(json.dumps({"seconds": round(time.perf_counter() - started, 2)}))
        if timing.exists():
            self.seconds = json.loads(timing.read_text())["seconds"]
        return {split: {m: np.load(paths[(split, m)]) for m in methods} for split in SPLITS}


def _save(path: Path, array: np.ndarray) -> None:
    handle, temporary = tempfile.mkstemp(suffix=".npy", dir=path.parent)
    with os.fdopen(handle, "wb") as file:
        np.save(file, array)
    os.replace(temporary, path)
