"""Fusion families the lab measured beside the product's (`search.fusion`): min-max
(`linear_fusion`, the old default), distribution-based (`dbsf_fusion`, Qdrant's DBSF) and
reciprocal-rank fusion (`reciprocal_rank_fusion`, `weighted_rrf`). `ctxsearch
tune-fusion` sweeps them; hybrid search uses none of them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from search.fusion import (
    Fused,
    Ranked,
    by_score,
    normalised,
    weighted_fusion,
    z_scale,
)

# Reciprocal rank fusion: score = sum over lists of 1 / (RRF_K + rank).
RRF_K = 1.0
# Linear fusion: weight of the dense list after min-max normalisation of each list.
DENSE_WEIGHT = 0.4


def reciprocal_rank_fusion(lists: Mapping[str, Ranked], k: float = RRF_K) -> Fused:
    """Fuse by ranks only: robust to score scales that differ between spaces."""
    fused: dict[int, float] = {}
    for ranked in lists.values():
        for rank, (item, _score) in enumerate(ranked, start=1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return by_score(fused)


def weighted_rrf(dense: Ranked, lexical: Ranked, dense_weight: float, k: float) -> Fused:
    """RRF with a weight per side: w / (k + dense rank) + (1 - w) / (k + lexical rank)."""
    fused: dict[int, float] = {}
    for ranked, weight in ((dense, dense_weight), (lexical, 1.0 - dense_weight)):
        for rank, (item, _score) in enumerate(ranked, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return by_score(fused)


def min_max_scale(scores: Sequence[float]) -> Callable[[float], float]:
    """The list's lowest score to 0, its highest to 1 (everything to 1 if they are equal)."""
    low, high = min(scores), max(scores)
    span = high - low
    return (lambda score: (score - low) / span) if span > 0 else (lambda _score: 1.0)


def distribution_scale(scores: Sequence[float]) -> Callable[[float], float]:
    """Min-max between mean - 3 sd and mean + 3 sd, clipped to [0, 1] (Qdrant's DBSF)."""
    z = z_scale(scores)
    return lambda score: min(1.0, max(0.0, (z(score) + 3.0) / 6.0))


def min_max(ranked: Ranked) -> list[tuple[int, float]]:
    """Scores mapped to [0, 1]: the list's lowest to 0, its highest to 1 (all 1 if equal)."""
    return normalised(min_max_scale, ranked)


def distribution_scores(ranked: Ranked) -> list[tuple[int, float]]:
    """Min-max between mean - 3 sd and mean + 3 sd, clipped to [0, 1] (Qdrant's DBSF)."""
    return normalised(distribution_scale, ranked)


def linear_fusion(dense: Ranked, lexical: Ranked, dense_weight: float = DENSE_WEIGHT) -> Fused:
    """Fuse min-max normalised scores: dense_weight * dense + (1 - dense_weight) * lexical."""
    return weighted_fusion(dense, lexical, dense_weight, min_max_scale)


def dbsf_fusion(dense: Ranked, lexical: Ranked, dense_weight: float = 0.5) -> Fused:
    """Fuse distribution-based scores (mean +- 3 sd mapped to [0, 1])."""
    return weighted_fusion(dense, lexical, dense_weight, distribution_scale)
