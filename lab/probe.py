"""A logistic-regression probe on frozen vectors: regularisation chosen on dev, scored on test.

The vectors are never changed (the model is not fine-tuned): the probe measures what a
linear classifier can read from them. The inverse regularisation strength C is chosen
among `C_GRID` by accuracy on the dev split (ties: the smaller C, the simpler model);
the test split is scored once, with the chosen C, and once with C = 1, the setting of
the reference figures, which is never chosen on test either.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np

from indexer.encoders.optional import CLASSIC_EXTRA
from indexer.errors import MissingDependency

C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)
REFERENCE_C = 1.0
MAX_ITERATIONS = 2000


def require_sklearn() -> Any:
    """scikit-learn, or MissingDependency naming the extra that brings it."""
    try:
        import sklearn  # noqa: F401
        from sklearn import linear_model
    except ImportError as error:
        raise MissingDependency(
            f"classify needs the package scikit-learn: pip install '{CLASSIC_EXTRA}'"
        ) from error
    return linear_model


def probe(
    train: tuple[Any, np.ndarray],
    dev: tuple[Any, np.ndarray],
    test: tuple[Any, np.ndarray],
    grid: tuple[float, ...] = C_GRID,
) -> dict[str, Any]:
    """Fit on train for each C, choose C on dev, score test: accuracy and macro-F1.

    Each split is (features, labels); features are a dense array or a sparse matrix.
    """
    linear_model = require_sklearn()
    started = time.perf_counter()
    fitted: dict[float, Any] = {}
    dev_accuracy: dict[float, float] = {}
    # From the strongest regularisation up, each fit starting where the last one ended:
    # the optimum is the same (the loss is convex), reached in fewer iterations.
    model = linear_model.LogisticRegression(max_iter=MAX_ITERATIONS, warm_start=True)
    for c in sorted(set(grid) | {REFERENCE_C}):
        model.set_params(C=c)
        model.fit(*train)
        fitted[c] = copy.deepcopy(model)
        if c in grid:
            dev_accuracy[c] = float((model.predict(dev[0]) == dev[1]).mean())
    chosen = min(dev_accuracy, key=lambda c: (-dev_accuracy[c], c))
    scored = scores(fitted[chosen], *test)
    reference = scores(fitted[REFERENCE_C], *test)
    return {
        **scored,
        "C": chosen,
        "dev_accuracy": round(dev_accuracy[chosen], 4),
        "dev_accuracy_by_C": {str(c): round(value, 4) for c, value in dev_accuracy.items()},
        "c1_accuracy": reference["accuracy"],
        "c1_macro_f1": reference["macro_f1"],
        "probe_seconds": round(time.perf_counter() - started, 2),
    }


def scores(model: Any, features: Any, labels: np.ndarray) -> dict[str, float]:
    """Accuracy and macro-averaged F1 of a fitted classifier on one split."""
    from sklearn.metrics import f1_score

    predicted = model.predict(features)
    return {
        "accuracy": round(float((predicted == labels).mean()), 4),
        "macro_f1": round(float(f1_score(labels, predicted, average="macro")), 4),
    }
