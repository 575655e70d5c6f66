"""How well a hit matches its query: `strong`, `weak` or `none`, from calibrated evidence.

A hit's fused score is not comparable across queries, so the label is read from two
signals that are: the contextual cosine of query and passage (`Hit.similarity`), and the
lexical evidence, the share of the query's terms the passage holds, each weighted by its
IDF in the index (a term the index never saw weighs most, so a query of made-up words has
no evidence at all). A query of stop words only has no evidence either: every hit of it
is `none` (its words are still what lexical search and snippets look for). Only a
search's first result can be `strong` on the lexical evidence; any other needs a higher
similarity (readers judged most second and third hits labelled `strong` before as
related, not answers: docs/reports/2026-12-06-match-label.md). The cut-offs are in
`search.match_thresholds`, with where each number came from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from indexer.store.base import TermEvidence
from search.match_thresholds import THRESHOLDS, MatchThresholds

STRONG, WEAK, NONE = "strong", "weak", "none"
MATCH_LABELS = (STRONG, WEAK, NONE)


@dataclass(frozen=True)
class MatchEvidence:
    """What a hit's label is read from."""

    similarity: float | None  # contextual cosine; None where the index has no such space
    coverage: float  # IDF-weighted share of the query's terms in the passage, 0 to 1
    # Whether the query holds a word other than a stop word: one that does not has no
    # evidence to give, whatever its passages hold (`the of and to is`)
    content: bool = True
    first: bool = True  # whether the hit is its search's first result


def match_label(evidence: MatchEvidence, thresholds: MatchThresholds = THRESHOLDS) -> str:
    """`strong` (it should answer the query), `none` (nothing suggests it does) or `weak`."""
    if not evidence.content:
        return NONE
    similarity = -1.0 if evidence.similarity is None else evidence.similarity
    coverage = evidence.coverage
    if evidence.first and (
        similarity >= thresholds.strong_similarity
        or (
            similarity >= thresholds.strong_similarity_with_terms
            and coverage >= thresholds.strong_coverage
        )
    ):
        return STRONG
    if similarity >= thresholds.strong_similarity_after_first:
        return STRONG
    if similarity < thresholds.none_similarity and coverage < thresholds.none_coverage:
        return NONE
    if coverage == 0.0 and similarity < thresholds.none_similarity_without_terms:
        return NONE  # not one of the query's terms, and not close enough to make up for it
    return WEAK


def idf(chunks: int, holding: int) -> float:
    """BM25's IDF of a term held by `holding` of `chunks` passages (never negative)."""
    return math.log(1.0 + (chunks - holding + 0.5) / (holding + 0.5))


def term_coverage(
    evidence: TermEvidence, terms: list[str], chunk_ids: list[int]
) -> dict[int, float]:
    """Each chunk's IDF-weighted share of `terms` (as the lexical space tokenizes them),
    from the terms' `evidence` over these chunks (`Snapshot.shown`)."""
    if not terms or not chunk_ids:
        return dict.fromkeys(chunk_ids, 0.0)
    weights = {term: idf(evidence.chunks, held) for term, held in evidence.counts.items()}
    mass = sum(weights.values())
    covered = dict.fromkeys(chunk_ids, 0.0)
    for term, holders in evidence.holders.items():
        for chunk_id in holders:
            covered[chunk_id] += weights[term]
    return {chunk_id: (held / mass if mass else 0.0) for chunk_id, held in covered.items()}
