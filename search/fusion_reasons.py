"""Why hybrid search weighed its two sides as it did for one query, read off the fusion.

Hybrid search (`search.fusion.HYBRID`) standardises each side's scores and adds them,
the dense side weighed by `w` and the lexical side by `1 - w`. This module says which
`w` the fusion took for a query, by which rule and from which evidence, and each
candidate's two terms of its fused score: it calls the fusion's own functions
(`adaptive_weight`, `peak`, `weighted_fusion`) rather than restating them.
"""

from __future__ import annotations

from dataclasses import dataclass

from search.fusion import (
    COSINE_HIGH,
    COSINE_LOW,
    FUSION_DEPTH,
    QUESTION_SHARE,
    SHARPNESS,
    Ranked,
    Scores,
    adaptive_weight,
    peak,
    weighted_fusion,
    z_scale,
)
from search.questions import is_question


@dataclass(frozen=True)
class FusionReason:
    """The dense weight one hybrid query used, the rule that chose it, in words, and the
    evidence it read (JSON-ready)."""

    dense_weight: float
    rule: str  # `fixed` (asked for) or `adaptive` (weighed from the lists and the query)
    why: str
    evidence: dict[str, float | bool | None]


def fusion_reason(
    dense: Ranked, lexical: Ranked, dense_weight: float | None, query: str
) -> FusionReason:
    """The weight of the dense side for this query's lists, and why."""
    if dense_weight is not None:
        return FusionReason(
            dense_weight, "fixed", f"dense_weight {dense_weight:g} was asked for", {}
        )
    question = is_question(query)
    weight = adaptive_weight(dense, lexical, question=question)
    dense_peak, lexical_peak = peak(dense[:FUSION_DEPTH]), peak(lexical[:FUSION_DEPTH])
    top = dense[0][1] if dense else None
    base = adaptive_weight(dense, lexical, cosine_low=None, cosine_high=None)
    closeness = (
        None if top is None else min(1.0, max(0.0, (top - COSINE_LOW) / (COSINE_HIGH - COSINE_LOW)))
    )
    why = [
        f"each list's best stands out by {dense_peak:.2f} (dense) and {lexical_peak:.2f} "
        f"(lexical) standard deviations: {base:.2f} to dense from that "
        f"(peaks raised to {SHARPNESS:g})"
    ]
    if closeness:
        why.append(
            f"the best cosine {top:.3f} moves it {closeness:.0%} of the rest of the way to 1 "
            f"(cosines {COSINE_LOW:g} to {COSINE_HIGH:g})"
        )
    if question:
        why.append(f"a question moves it {QUESTION_SHARE:.0%} of the rest of the way to 1")
    return FusionReason(
        weight,
        "adaptive",
        "; ".join(why),
        {
            "dense_peak": round(dense_peak, 4),
            "lexical_peak": round(lexical_peak, 4),
            "best_cosine": None if top is None else round(top, 6),
            "question": question,
        },
    )


def side_values(
    dense: Ranked, lexical: Ranked, dense_scores: Scores | None, lexical_scores: Scores | None
) -> tuple[dict[int, float], dict[int, float]]:
    """Every candidate's standardised score on the dense side and on the lexical side,
    as the fusion weighs them (a candidate one side missed: its exact score there, or
    that side's floor)."""
    on_dense = weighted_fusion(dense, lexical, 1.0, z_scale, dense_scores, lexical_scores)
    on_lexical = weighted_fusion(dense, lexical, 0.0, z_scale, dense_scores, lexical_scores)
    return dict(on_dense), dict(on_lexical)
