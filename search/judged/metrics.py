"""Retrieval metrics with the definitions of trec_eval (as BEIR and MTEB report them).

`run` maps each query id to {document id: score}; `qrels` maps each query id to
{document id: relevance grade}. A grade above 0 is relevant; nDCG uses the grades as
gains. Documents are ranked by score, ties broken by document id, both descending, as
trec_eval does. Only queries with at least one relevant judgement are averaged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

Run = Mapping[str, Mapping[str, float]]
Qrels = Mapping[str, Mapping[str, int]]

METRICS = ("ndcg@10", "mrr@10", "recall@100", "map@100")


def ranked(scores: Mapping[str, float]) -> list[str]:
    """Document ids best first: by score, then by id, both descending (trec_eval's order)."""
    return [
        doc for doc, _ in sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)
    ]


def ndcg_at(ranking: list[str], judged: Mapping[str, int], k: int) -> float:
    """Normalised discounted cumulative gain of the first `k` results (graded gains)."""
    dcg = sum(
        max(judged.get(doc, 0), 0) / math.log2(rank + 2) for rank, doc in enumerate(ranking[:k])
    )
    ideal_gains = sorted((grade for grade in judged.values() if grade > 0), reverse=True)[:k]
    ideal = sum(gain / math.log2(rank + 2) for rank, gain in enumerate(ideal_gains))
    return dcg / ideal if ideal > 0 else 0.0


def reciprocal_rank_at(ranking: list[str], judged: Mapping[str, int], k: int) -> float:
    """1 / the rank of the first relevant result within the first `k`, else 0."""
    for rank, doc in enumerate(ranking[:k], start=1):
        if judged.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def recall_at(ranking: list[str], judged: Mapping[str, int], k: int) -> float:
    """The share of relevant documents found within the first `k` results."""
    relevant = {doc for doc, grade in judged.items() if grade > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranking[:k])) / len(relevant)


def average_precision_at(ranking: list[str], judged: Mapping[str, int], k: int) -> float:
    """Precision at each relevant result within the first `k`, summed, over all relevant."""
    relevant = {doc for doc, grade in judged.items() if grade > 0}
    if not relevant:
        return 0.0
    found, total = 0, 0.0
    for rank, doc in enumerate(ranking[:k], start=1):
        if doc in relevant:
            found += 1
            total += found / rank
    return total / len(relevant)


def per_query_metrics(run: Run, qrels: Qrels) -> dict[str, dict[str, float]]:
    """Every metric for every judged query (a query missing from `run` scores 0)."""
    results = {}
    for query_id, judged in qrels.items():
        if not any(grade > 0 for grade in judged.values()):
            continue
        ranking = ranked(run.get(query_id, {}))
        results[query_id] = {
            "ndcg@10": ndcg_at(ranking, judged, 10),
            "mrr@10": reciprocal_rank_at(ranking, judged, 10),
            "recall@100": recall_at(ranking, judged, 100),
            "map@100": average_precision_at(ranking, judged, 100),
        }
    return results


def mean_metrics(run: Run, qrels: Qrels) -> dict[str, float]:
    """The mean of each metric over the judged queries."""
    per_query = per_query_metrics(run, qrels)
    if not per_query:
        return dict.fromkeys(METRICS, 0.0)
    return {
        metric: sum(values[metric] for values in per_query.values()) / len(per_query)
        for metric in METRICS
    }
