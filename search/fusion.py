"""Fusing a dense and a lexical ranked list into one (hybrid search).

Every function takes lists of (id, score), best first, and returns one list of
(id, fused score), best first, ties broken by id. An id missing from one list counts as
scoring at the bottom of that list (its lowest normalised score).

What the product uses (the other families `ctxsearch lab tune-fusion` measured, linear,
distribution-based and reciprocal-rank fusion, live in `lab.fusion_variants`):

- `zscore_fusion`: scores standardised per list (mean 0, standard deviation 1).
- `adaptive_fusion`: z-scores weighted per query by how far each list's best score
  stands out from the rest of its list, by how close the dense side's best is to the
  query (the evidence each side has for this query), and by whether the query is a
  question (`search.questions`: questions lean on the dense side).

The weighted families can be *completed*: a candidate missing from one list then takes
its exact score on that side (its cosine; its BM25 if it holds a query word), looked up
by the caller (`search.completion`), instead of the list's lowest score. A document with
no query word gets the lowest lexical score of any candidate.

`HYBRID`, what `hybrid` search does, is completed `adaptive_fusion` with the constants
below, 200 deep per side: the variant with the best mean-plus-worst nDCG@10 margin over
the better single side across SciFact train, LISA, STS-B retrieval, the sample corpus's
keywords and questions, and questions over Python's library reference and guides; at or
above the better side on each of them (docs/fusion.md has the leave-one-collection-out
folds, one of which is not). After fusing, hybrid search keeps the lexical side's clear
exact match among its first hits (`search.exact_evidence`, `HybridFusion.keeps_exact`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from search.questions import is_question

Ranked = Sequence[tuple[int, float]]
Fused = list[tuple[int, float]]
# Exact scores on one side of ids the other side found (id -> cosine, or -> BM25).
Scores = Mapping[int, float]
# A fusion of the dense and lexical lists, with an optional fixed dense weight, each
# side's exact scores of the other side's candidates (None: not looked up) and the query.
Fusion = Callable[[Ranked, Ranked, "float | None", "Scores | None", "Scores | None", str], Fused]

# How deep each side is searched before fusion.
FUSION_DEPTH = 200
# Scores closer than this share of their size are ties, not a spread to standardise:
# one text encoded in bf16 and in fp32 scores about that far apart, and standardising a
# list of such scores would turn rounding into a whole standard deviation.
TIE_SHARE = 1e-3
# Adaptive weighting: how sharply the lists' peaks decide, and the dense cosine band in
# which the dense side's share rises to 1 (cosines of all-MiniLM-L6-v2).
SHARPNESS = 0.5
COSINE_LOW = 0.6
COSINE_HIGH = 1.0
# How far a question (`search.questions.is_question`) moves the dense side's share
# towards 1.
QUESTION_SHARE = 0.7


# A normaliser: from one list's raw scores, the function that maps a raw score of that
# side to its normalised value.
Normaliser = Callable[[Sequence[float]], Callable[[float], float]]


def z_scale(scores: Sequence[float]) -> Callable[[float], float]:
    """(score - mean) / standard deviation of the list (everything to 0 if it is flat)."""
    mean, deviation = mean_sd(scores)
    if flat(scores):
        return lambda _s: 0.0
    return lambda score: (score - mean) / deviation


def flat(scores: Sequence[float]) -> bool:
    """Whether the scores are all ties (within `TIE_SHARE` of the largest's size)."""
    top, bottom = max(scores), min(scores)
    return top - bottom <= TIE_SHARE * max(abs(top), abs(bottom))


def normalised(normaliser: Normaliser, ranked: Ranked) -> list[tuple[int, float]]:
    """The list with each score mapped by `normaliser` of the list's own scores."""
    if not ranked:
        return []
    scale = normaliser([score for _, score in ranked])
    return [(item, scale(score)) for item, score in ranked]


def z_scores(ranked: Ranked) -> list[tuple[int, float]]:
    """Scores standardised: (score - mean) / standard deviation of the list (0 if flat)."""
    return normalised(z_scale, ranked)


def weighted_fusion(
    dense: Ranked,
    lexical: Ranked,
    dense_weight: float,
    normaliser: Normaliser,
    dense_scores: Scores | None = None,
    lexical_scores: Scores | None = None,
) -> Fused:
    """dense_weight * normalised dense + (1 - dense_weight) * normalised lexical.

    The candidates are the ids of either list; each list is normalised by its own
    first `FUSION_DEPTH` scores, so that a deeper search (for more hits, when many come
    from one document) extends the ranking rather than reordering its top. An id
    missing from a list takes its exact score on that side from
    `dense_scores` / `lexical_scores` when they hold it, else the lowest score that side
    has for any candidate (a list without spread: one below its own, so the listed win).
    """
    items = {item for ranked in (dense, lexical) for item, _ in ranked}
    fused = dict.fromkeys(items, 0.0)
    for ranked, exact, weight in (
        (dense, dense_scores, dense_weight),
        (lexical, lexical_scores, 1.0 - dense_weight),
    ):
        for item, value in _side(ranked, exact, items, normaliser).items():
            fused[item] += weight * value
    return by_score(fused)


def _side(
    ranked: Ranked, exact: Scores | None, items: set[int], normaliser: Normaliser
) -> dict[int, float]:
    """Every candidate's normalised score on one side (nothing if the side found none)."""
    if not ranked:
        return {}
    listed = dict(ranked)
    head = [score for _, score in ranked[:FUSION_DEPTH]]
    scale = normaliser(head)
    if flat(head):
        floor = scale(min(head)) - 1.0
        return {item: scale(listed[item]) if item in listed else floor for item in items}
    known = {item: exact[item] for item in items - listed.keys() if exact and item in exact}
    floor = scale(min([*listed.values(), *known.values()]))
    raw = listed | known
    return {item: scale(raw[item]) if item in raw else floor for item in items}


def zscore_fusion(
    dense: Ranked,
    lexical: Ranked,
    dense_weight: float = 0.5,
    dense_scores: Scores | None = None,
    lexical_scores: Scores | None = None,
) -> Fused:
    """Fuse z-scores: dense_weight * z(dense) + (1 - dense_weight) * z(lexical)
    (completed by the exact scores given, see `weighted_fusion`)."""
    return weighted_fusion(dense, lexical, dense_weight, z_scale, dense_scores, lexical_scores)


def peak(ranked: Ranked, top: int = 1) -> float:
    """How far the list's best score stands above the rest, in standard deviations.

    The mean z-score of the first `top` entries; 0 for a list with fewer than two
    entries or with equal scores (no evidence either way).
    """
    if len(ranked) < 2:
        return 0.0
    head = [z for _, z in z_scores(ranked)[:top]]
    return sum(head) / len(head)


def adaptive_weight(
    dense: Ranked,
    lexical: Ranked,
    sharpness: float = SHARPNESS,
    cosine_low: float | None = COSINE_LOW,
    cosine_high: float | None = COSINE_HIGH,
    question: bool = False,
    question_share: float = QUESTION_SHARE,
) -> float:
    """The dense side's share of the fused score for this query, in [0, 1].

    Evidence read off the two lists, and the query's form:

    - each side's `peak` (how far its best score stands above the rest of its list),
      raised to `sharpness`; the dense share is dense / (dense + lexical), 0.5 when
      neither side has a peak;
    - the dense side's best score itself (a cosine): from `cosine_low` up to
      `cosine_high` the share moves linearly towards 1, since a document that close to
      the query is a near-paraphrase of it, where the words matter less. Without
      `cosine_high` (None) this part is off;
    - a `question` (see `search.questions`) moves the share `question_share` of the
      rest of the way towards 1.
    """
    dense_peak = max(peak(dense[:FUSION_DEPTH]), 0.0) ** sharpness
    lexical_peak = max(peak(lexical[:FUSION_DEPTH]), 0.0) ** sharpness
    total = dense_peak + lexical_peak
    share = 0.5 if total == 0 else dense_peak / total
    if cosine_low is not None and cosine_high is not None and dense:
        closeness = (dense[0][1] - cosine_low) / (cosine_high - cosine_low)
        share += (1.0 - share) * min(1.0, max(0.0, closeness))
    if question:
        share += (1.0 - share) * question_share
    return share


def adaptive_fusion(
    dense: Ranked,
    lexical: Ranked,
    dense_weight: float | None = None,
    sharpness: float = SHARPNESS,
    cosine_low: float | None = COSINE_LOW,
    cosine_high: float | None = COSINE_HIGH,
    dense_scores: Scores | None = None,
    lexical_scores: Scores | None = None,
    question: bool = False,
    question_share: float = QUESTION_SHARE,
) -> Fused:
    """Z-score fusion whose dense weight is `adaptive_weight` of this query's lists and
    form, completed by the exact scores given (see `weighted_fusion`).

    `dense_weight`, when given, fixes the weight instead (plain `zscore_fusion`).
    """
    if dense_weight is None:
        dense_weight = adaptive_weight(
            dense, lexical, sharpness, cosine_low, cosine_high, question, question_share
        )
    return zscore_fusion(dense, lexical, dense_weight, dense_scores, lexical_scores)


def hybrid_fusion(
    dense: Ranked,
    lexical: Ranked,
    dense_weight: float | None = None,
    dense_scores: Scores | None = None,
    lexical_scores: Scores | None = None,
    query: str = "",
) -> Fused:
    """The fusion `hybrid` search uses: `adaptive_fusion` (weighing the lists and whether
    `query` is a question), or z-score fusion at a fixed `dense_weight` (0 to 1) when one
    is given, completed by the exact scores given."""
    return adaptive_fusion(
        dense,
        lexical,
        dense_weight,
        dense_scores=dense_scores,
        lexical_scores=lexical_scores,
        question=is_question(query),
    )


@dataclass(frozen=True)
class HybridFusion:
    """How hybrid search fuses: the function, how deep each side is searched for it,
    whether the exact score of each candidate on the side that missed it is looked up
    first (`completes`), and whether the lexical side's clear exact match is kept among
    the first hits (`keeps_exact`, see `search.exact_evidence`)."""

    fuse: Fusion
    depth: int = FUSION_DEPTH
    completes: bool = True
    keeps_exact: bool = True


HYBRID = HybridFusion(hybrid_fusion)


def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    """The mean and the (population) standard deviation."""
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum((value - mean) ** 2 for value in values) / len(values))


def by_score(fused: Mapping[int, float]) -> Fused:
    """(id, score) pairs best first, ties broken by id."""
    return sorted(fused.items(), key=lambda pair: (-pair[1], pair[0]))
