"""Sweep the constants of hybrid fusion on a training split (never on test)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from indexer.encoders.loading import load_model
from search.fusion import linear_fusion, reciprocal_rank_fusion
from search.lab.datasets import load_retrieval_dataset
from search.lab.evaluation import Retrieval
from search.lab.metrics import mean_metrics

RRF_KS = (1, 2, 5, 10, 20, 30, 60, 100, 200)
DENSE_WEIGHTS = tuple(round(0.1 * step, 1) for step in range(11))


def tune_fusion(
    dataset_dir: Path, split: str = "train", work_dir: Path | None = None, model: str | None = None
) -> dict[str, Any]:
    """nDCG@10 of RRF for each k and of linear fusion for each dense weight, and the best."""
    dataset = load_retrieval_dataset(dataset_dir, split)
    retrieval = Retrieval(dataset, load_model(model), work_dir)
    lists = retrieval.ranked_lists(["contextual", "lexical"])
    dense, lexical = lists["contextual"], lists["lexical"]

    def score(fused: dict[str, list[tuple[int, float]]]) -> float:
        return round(mean_metrics(retrieval.run(fused), dataset.qrels)["ndcg@10"], 4)

    rrf = {
        k: score({q: reciprocal_rank_fusion({"d": dense[q], "l": lexical[q]}, k) for q in dense})
        for k in RRF_KS
    }
    linear = {
        weight: score({q: linear_fusion(dense[q], lexical[q], weight) for q in dense})
        for weight in DENSE_WEIGHTS
    }
    return {
        "dataset": dataset.name,
        "split": split,
        "queries": len(dataset.queries),
        "contextual": score(dense),
        "lexical": score(lexical),
        "rrf": rrf,
        "linear": linear,
        "best_rrf_k": max(rrf, key=lambda k: rrf[k]),
        "best_dense_weight": max(linear, key=lambda w: linear[w]),
    }
