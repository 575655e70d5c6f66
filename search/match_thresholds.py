"""The cut-offs of `search.match.match_label`, and where each number came from.

Every number was chosen by `python -m lab.match_calibration fit` (a grid search in
steps of 0.05 for similarities, of 0.1 for coverages) on the calibration half of the
queries: the judged queries of each set (a hit is relevant when the qrels grade its
document above 0) and the 72 nonsense and off-topic queries of
tests/data/no-answer-queries.jsonl (nothing relevant), 10 hits deep in each of the four
modes, all-MiniLM-L6-v2. The fit maximises, averaged over the sets, strong's F1 (on the
relevant hits) plus none's F1 (precision: none hits not relevant; recall: no-answer hits
labelled none), with at most 3% of the relevant hits labelled none. Precision and recall
on the held-out half: docs/reports/2026-12-01-match.md. Sets: sample (the sample corpus's
85 keyword queries and 50 questions), heading20 (20 questions over 31 Python docs pages),
python-guides+changelog (30 questions over the Python HOWTOs, FAQs and tutorial, with the
changelog indexed beside them as a distractor), scifact-sub (SciFact's 300 test claims over
the abstracts their qrels judge plus 700 others, 983 documents).

Checked against a reader: 276 top-3 hybrid hits over documentation nobody here wrote
(Flask's, FastAPI's and PCRE2's docs, systems papers), judged answer / related /
unrelated (docs/questions/match-judged/, docs/reports/2026-12-06-match-label.md).
Refitted on half of those queries (`python -m lab.match_judged fit`), these six agreed
less with the reader on the other half than they do, so they stay. What the reader
judged differently was the second and third hits: `strong_similarity_after_first` was
fitted there (the six kept) and holds on the other half.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MatchThresholds:
    """The first hit is `strong` at `strong_similarity`, or at
    `strong_similarity_with_terms` when it holds `strong_coverage` of the query's term
    weight; any hit is `strong` at `strong_similarity_after_first`; `none` below
    `none_similarity` while holding less than `none_coverage`, or below
    `none_similarity_without_terms` while holding none of the query's terms; `weak`
    otherwise."""

    strong_similarity: float
    strong_similarity_with_terms: float
    strong_coverage: float
    none_similarity: float
    none_coverage: float
    none_similarity_without_terms: float
    strong_similarity_after_first: float


THRESHOLDS = MatchThresholds(
    # Each comment: the grid searched, and the objective (1.7083 at these values) with the
    # number one step lower / higher ("-inf": more than 3% of a set's relevant hits none).
    # grid 0.30-0.80; 0.50: 1.6698, 0.60: 1.6851
    strong_similarity=0.55,
    # grid 0.20-0.70, at most strong_similarity; 0.45: 1.7050, 0.55: 1.6597
    strong_similarity_with_terms=0.5,
    # grid 0.3-0.8; 0.6: 1.7001, 0.8: 1.7008
    strong_coverage=0.7,
    # grid 0.10-0.50; 0.25: 1.7052, 0.35: -inf
    none_similarity=0.3,
    # grid 0.05-0.5; 0.4: 1.7066 (0.6, outside the grid: 1.7095)
    none_coverage=0.5,
    # grid none_similarity-0.60; 0.30: 1.7049, 0.40: -inf
    none_similarity_without_terms=0.35,
    # `python -m lab.match_judged fit`, its `first` rule: grid 0.55-0.80 and left out, the
    # six above kept, on the fit half of the 276 judged hits (mean recall over answer /
    # related / unrelated 0.6700 here, 0.6401 at 0.60, 0.6513 at 0.70, 0.5974 left out)
    strong_similarity_after_first=0.65,
)
