"""The cut-offs of `search.match.match_label`, and where each number came from.

Every number was chosen by `python -m search.lab.match_calibration fit` (a grid search in
steps of 0.05 for similarities, of 0.1 for coverages) on the calibration half of the
queries: the judged queries of each set (a hit is relevant when the qrels grade its
document above 0) and the 72 nonsense and off-topic queries of
tests/data/no-answer-queries.jsonl (nothing relevant), 10 hits deep in each of the four
modes, all-MiniLM-L6-v2. The fit maximises, averaged over the sets, strong's F1 (on the
relevant hits) plus none's F1 (precision: none hits not relevant; recall: no-answer hits
labelled none), with at most 3% of the relevant hits labelled none. Precision and recall
on the held-out half: docs/reports/2026-12-01-match.md. Sets: sample (the sample corpus's
85 keyword queries and 50 questions), heading20 (20 questions over 31 Python docs pages).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MatchThresholds:
    """A hit is `strong` at `strong_similarity`, or at `strong_similarity_with_terms`
    when it holds `strong_coverage` of the query's term weight; `none` below
    `none_similarity` while holding less than `none_coverage`, or below
    `none_similarity_without_terms` while holding none of the query's terms; `weak`
    otherwise."""

    strong_similarity: float
    strong_similarity_with_terms: float
    strong_coverage: float
    none_similarity: float
    none_coverage: float
    none_similarity_without_terms: float


THRESHOLDS = MatchThresholds(
    # fit (grid 0.30-0.80): 0.50 scored 0.001 lower, 0.45 0.008 lower
    strong_similarity=0.55,
    # fit (grid 0.20-0.70, at most strong_similarity)
    strong_similarity_with_terms=0.45,
    # fit (grid 0.3-0.8): half the query's IDF weight in the passage
    strong_coverage=0.5,
    # fit (grid 0.10-0.50): at 0.35 more than 3% of the relevant hits became none
    none_similarity=0.3,
    # fit (grid 0.05-0.5)
    none_coverage=0.5,
    # fit (grid none_similarity-0.60): the nonsense queries' first hits reach 0.35 and the
    # off-topic ones' 0.43 with none of their terms; 3 of 701 relevant calibration and
    # held-out hits hold no query term below it
    none_similarity_without_terms=0.45,
)
